package engine

import (
	"fmt"
	"slices"

	"github.com/nxkv/nxkv/shard"
)

// Verify checks the engine's internal invariants (those documented in
// store.go, each shard's table and timer wheel, and the change feed's
// listeners) and returns the first violation, or nil. It is for tests, such
// as a server's check that a contained failure left the engine consistent;
// it locks each shard in turn, so it is safe for concurrent use but not an
// atomic snapshot.
func (e *Engine) Verify() error { return e.verify() }

// verify checks the invariants documented in store.go on every shard, the
// shard's own (shard.VerifyLocked) and the listeners' (feed.go), and
// returns the first violation. Tests call it (through Verify in
// export_test.go) after operations; it holds listenMu and locks each shard
// in turn.
func (e *Engine) verify() error {
	e.listenMu.Lock()
	defer e.listenMu.Unlock()
	for i := range e.m.Shards() {
		s := e.m.ShardAt(i)
		s.Lock()
		err := e.verifyLocked(s, i)
		s.Unlock()
		if err == nil {
			err = verifyLoads(&s.Aux, i) // loadMu is never taken under the shard lock
		}
		if err != nil {
			return err
		}
	}
	if e.mem != nil {
		return e.verifyTotal()
	}
	return nil
}

// verifyTotal checks, with every shard locked (what the engine adds to
// its budget's total changes only under a shard lock), that what it added
// is what the shards count less what they hold back; and, for a budget of
// its own, that the budget's total is that plus what was charged.
func (e *Engine) verifyTotal() error {
	var counted int64
	for _, i := range e.lockShards(nil, nil) {
		s := e.m.ShardAt(i)
		counted += s.Aux.used - s.Aux.pending
		defer s.Unlock()
	}
	if held := e.held.Load(); counted != held {
		return fmt.Errorf("engine: the shards count %d bytes, the engine added %d to its budget", counted, held)
	}
	b := e.mem
	if ms := *b.members.Load(); len(ms) == 1 && ms[0] == e {
		if total, charged := b.total.Load(), b.charged.Load(); total != counted+charged {
			return fmt.Errorf("engine: the shards count %d bytes and %d were charged, the budget's total says %d", counted, charged, total)
		}
	}
	return nil
}

// verifyLocked checks shard s (number i), locked, with listenMu held.
func (e *Engine) verifyLocked(s *shardT, i int) error {
	if err := s.VerifyLocked(); err != nil {
		return fmt.Errorf("engine: shard %d: %w", i, err)
	}
	w := s.Aux.wheel
	scheduled, reserved, objects := 0, 0, 0
	var used int64
	var err error
	s.RangeLocked(func(hd shard.Handle, ent *shard.Entry) bool {
		if Reserved(ent.Key) {
			reserved++
		}
		used += entryCost(ent.Key, ent.Value, ent.Exp)
		h := e.m.Hash(ent.Key)
		if isObject(ent.Value) {
			objects++
			sl := s.Aux.objects[ent.Key]
			used += sl.bytes
			if sl.obj == nil {
				err = fmt.Errorf("engine: key %q holds the object marker without an object", ent.Key)
				return false
			}
		}
		var d int64
		var sched bool
		if w != nil {
			d, sched = w.Deadline(hd)
		}
		switch _, si := e.m.Shard(h); {
		case si != i:
			err = fmt.Errorf("engine: key %q in shard %d, belongs in %d", ent.Key, i, si)
		case ent.Exp == noDeadline && sched:
			err = fmt.Errorf("engine: key %q without deadline is scheduled", ent.Key)
		case ent.Exp != noDeadline && !sched:
			// Only a fired entry awaiting the reaper may be unscheduled,
			// and it is expired (the wheel fired it at Exp+1 or later).
			if w == nil || ent.Exp >= w.Now() {
				err = fmt.Errorf("engine: key %q with deadline %d is not scheduled", ent.Key, ent.Exp)
			}
		case sched && d != fireAt(ent.Exp):
			err = fmt.Errorf("engine: key %q with deadline %d scheduled at %d, want deadline+1", ent.Key, ent.Exp, d)
		}
		if sched {
			scheduled++
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if len(s.Aux.objects) != objects || s.Aux.objects != nil && objects == 0 {
		return fmt.Errorf("engine: shard %d: %d objects kept for %d keys holding one", i, len(s.Aux.objects), objects)
	}
	if reserved != s.Aux.reserved {
		return fmt.Errorf("engine: shard %d: holds %d reserved keys, counts %d", i, reserved, s.Aux.reserved)
	}
	if e.mem != nil && used != s.Aux.used {
		return fmt.Errorf("engine: shard %d: its keys cost %d bytes, it counts %d", i, used, s.Aux.used)
	}
	if q := e.quantum(); e.mem != nil && !e.mem.stale.Load() && (s.Aux.pending > q || s.Aux.pending < -q) {
		return fmt.Errorf("engine: shard %d: holds back %d bytes, past the quantum %d", i, s.Aux.pending, q)
	}
	if w != nil && w.Len() != scheduled {
		return fmt.Errorf("engine: shard %d: wheel holds %d handles, %d stored entries are scheduled", i, w.Len(), scheduled)
	}
	// Every shard delivers to the engine's current listeners, and holds
	// observers only while someone observes (feed.go).
	o := s.Aux.obs
	if o.listened() != (len(e.listeners) != 0) || o.listened() && !slices.Equal(o.feed.ls, e.listeners) {
		return fmt.Errorf("engine: shard %d: its listeners are not the engine's", i)
	}
	if e.listening.Load() != (len(e.listeners) != 0) {
		return fmt.Errorf("engine: listening = %v with %d listeners", e.listening.Load(), len(e.listeners))
	}
	if o != nil && (o.watchers == nil && o.feed == nil || o.watchers != nil && len(o.watchers) == 0) {
		return fmt.Errorf("engine: shard %d: observers kept with no one observing", i)
	}
	for key, ws := range o.watched() {
		if len(ws) == 0 {
			return fmt.Errorf("engine: shard %d: empty watcher list for %q", i, key)
		}
		for _, w := range ws {
			if w.done {
				return fmt.Errorf("engine: shard %d: finished watcher still listed for %q", i, key)
			}
		}
	}
	return nil
}

// verifyLoads checks that every listed load is unfinished and waited for.
func verifyLoads(st *shardState, i int) error {
	st.loadMu.Lock()
	defer st.loadMu.Unlock()
	for key, f := range st.loads {
		select {
		case <-f.done:
			return fmt.Errorf("engine: shard %d: finished load of %q still listed", i, key)
		default:
		}
		if f.waiters <= 0 {
			return fmt.Errorf("engine: shard %d: load of %q listed with %d waiters", i, key, f.waiters)
		}
	}
	return nil
}

// quantum returns the budget's quantum (0 without a budget).
func (e *Engine) quantum() int64 {
	if e.mem == nil {
		return 0
	}
	return e.mem.quantum.Load()
}
