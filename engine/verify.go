package engine

import (
	"fmt"
	"math"
)

// verify checks the invariants documented on item and shardState on every
// shard and returns the first violation. Tests call it (through Verify in
// export_test.go) after operations; it locks each shard in turn.
func (e *Engine) verify() error {
	for i := range e.m.Shards() {
		s := e.m.ShardAt(i)
		s.Lock()
		err := e.verifyLocked(s, i)
		s.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) verifyLocked(s *shardT, i int) error {
	scheduled := 0
	var err error
	s.RangeLocked(func(key string, n *node) bool {
		d, sched := n.Deadline()
		switch {
		case n.Value.key != key:
			err = fmt.Errorf("engine: shard %d: node under %q holds key %q", i, key, n.Value.key)
		case e.m.ShardIndex(key) != i:
			err = fmt.Errorf("engine: key %q in shard %d, belongs in %d", key, i, e.m.ShardIndex(key))
		case n.Value.exp == noDeadline && sched:
			err = fmt.Errorf("engine: key %q without deadline is scheduled", key)
		case n.Value.exp != noDeadline && !sched:
			// Only a fired node awaiting the reaper may be unscheduled, and
			// it is expired (the wheel fired it at exp+1 or later).
			if n.Value.exp >= s.Aux.wheel.Now() {
				err = fmt.Errorf("engine: key %q with deadline %d is not scheduled (wheel at %d)", key, n.Value.exp, s.Aux.wheel.Now())
			}
		case sched && d != n.Value.exp+1 && !(n.Value.exp == math.MaxInt64 && d == n.Value.exp):
			err = fmt.Errorf("engine: key %q with deadline %d scheduled at %d, want deadline+1", key, n.Value.exp, d)
		}
		if sched {
			scheduled++
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if w := s.Aux.wheel.Len(); w != scheduled {
		return fmt.Errorf("engine: shard %d: wheel holds %d nodes, map holds %d scheduled", i, w, scheduled)
	}
	for _, n := range s.Aux.free[:s.Aux.nfree] {
		if n.Value != (item{}) || n.Scheduled() {
			return fmt.Errorf("engine: shard %d: recycled node not clean: %+v", i, n.Value)
		}
	}
	for key, ws := range s.Aux.watchers {
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
