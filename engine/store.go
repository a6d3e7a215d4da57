package engine

import (
	"math"

	"github.com/nxkv/nxkv/shard"
	"github.com/nxkv/nxkv/ttl"
)

// item is one stored key.
//
// Invariants, under the owning shard's lock: a node in the shard map under
// key has Value.key == key (the same string, so the bytes are shared); it is
// scheduled in the shard's wheel iff Value.exp != noDeadline, at
// Value.exp+1 (the wheel fires at deadline <= now, a key expires once now >
// exp); a node that left the map is never in the wheel. The one exception: a
// node the wheel fired is unscheduled, expired and still in the map until
// the reaper (or Reap) deletes it, possibly after dropping and retaking the
// lock between batches; any operation that meets it in between sees it
// expired.
type item struct {
	key   string
	value string
	exp   int64 // deadline in Unix nanoseconds; noDeadline: none
}

// node is the heap cell of a key: 64 bytes, one size class, so overwrites
// and TTL changes update it in place without allocating. A deleted node is
// recycled by its shard (see recycleLocked); the reaper, which looks nodes
// up again after dropping the lock, therefore re-checks that a node is still
// stored under its key and still expired before deleting it.
type node = ttl.Node[item]

// shardState is the engine's per-shard state, guarded by the shard lock.
type shardState struct {
	wheel *ttl.Wheel[item]
	// watchers holds the pending watchers of each watched key; nil or empty
	// when nothing is watched, so unwatched writes pay one length check.
	watchers map[string][]*watcher
	// free[:nfree] are recycled nodes, out of the map and the wheel, with
	// zero Values.
	free  [freeNodes]*node
	nfree int
	// fence is the last fencing token SetNXPXFenced handed out for a key of
	// this shard; it only grows, so the tokens of any one key strictly
	// increase for the engine's lifetime.
	fence int64
}

// freeNodes bounds the recycled nodes kept per shard (1 KiB).
const freeNodes = 16

type shardT = shard.Shard[*node, shardState]

// liveLocked returns key's node if key exists and has not expired, deleting
// it if it has. It reads the clock (through c) only for a key with a deadline.
func (e *Engine) liveLocked(s *shardT, key string, c *opClock) *node {
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != noDeadline {
		n = e.checkLocked(s, n, c)
	}
	return n
}

// checkLocked returns n (a stored node with a deadline), or nil after
// deleting it if it has expired.
func (e *Engine) checkLocked(s *shardT, n *node, c *opClock) *node {
	if n.Value.exp < e.at(c) {
		e.removeLocked(s, n)
		return nil
	}
	return n
}

// removeLocked deletes n's key from s, wakes its watchers and recycles n.
func (e *Engine) removeLocked(s *shardT, n *node) {
	if n.Value.exp != noDeadline {
		s.Aux.wheel.Cancel(n)
	}
	key := n.Value.key
	s.DeleteLocked(key)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
	recycleLocked(s, n)
}

// recycleLocked keeps n, which has left the map and the wheel, for reuse
// by the shard's next insert, so that lock acquire/release cycles do not
// allocate. It clears n's strings so that they can be collected.
func recycleLocked(s *shardT, n *node) {
	n.Value = item{}
	if s.Aux.nfree < len(s.Aux.free) {
		s.Aux.free[s.Aux.nfree] = n
		s.Aux.nfree++
	}
}

// insertLocked stores a new key (known absent) with deadline exp
// (noDeadline: none) and wakes its watchers.
func (e *Engine) insertLocked(s *shardT, key, value string, exp int64) {
	var n *node
	if k := s.Aux.nfree; k > 0 {
		n = s.Aux.free[k-1]
		s.Aux.free[k-1] = nil
		s.Aux.nfree = k - 1
	} else {
		n = new(node)
	}
	n.Value = item{key: key, value: value, exp: noDeadline}
	s.SetLocked(key, n)
	if exp != noDeadline {
		e.scheduleLocked(s, n, exp)
	}
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
}

// updateLocked overwrites a live node in place with value and deadline exp
// and wakes its watchers.
func (e *Engine) updateLocked(s *shardT, n *node, value string, exp int64) {
	n.Value.value = value
	e.setExpLocked(s, n, exp)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, n.Value.key)
	}
}

// retimeLocked gives live node n the deadline exp (noDeadline: none) and
// wakes its watchers: the one path for a TTL change that keeps the key.
func (e *Engine) retimeLocked(s *shardT, n *node, exp int64) {
	e.setExpLocked(s, n, exp)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, n.Value.key)
	}
}

// setExpLocked changes n's deadline to exp (noDeadline: none), keeping the
// wheel in step. It does not notify watchers.
func (e *Engine) setExpLocked(s *shardT, n *node, exp int64) {
	if exp == n.Value.exp {
		return
	}
	if exp == noDeadline {
		s.Aux.wheel.Cancel(n)
		n.Value.exp = noDeadline
		return
	}
	e.scheduleLocked(s, n, exp)
}

// scheduleLocked sets n's deadline to exp != noDeadline and files it in the
// wheel at exp+1, kicking the reaper if that is earlier than its next wake.
func (e *Engine) scheduleLocked(s *shardT, n *node, exp int64) {
	n.Value.exp = exp
	fire := exp + 1
	if exp == math.MaxInt64 {
		fire = exp
	}
	s.Aux.wheel.Schedule(n, fire)
	if fire < e.nextWake.Load() {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}
