package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/nxkv/nxkv/shard"
)

// Update runs fn with the shards of keys locked and one frozen time for the
// whole section, so that everything fn does through tx is atomic against
// every other engine call and every other Update: Redis's rule for MULTI/EXEC
// and scripts, and what a multi-key lock needs. An empty keys locks every
// shard, for sections that cannot name their keys up front (a script may
// touch keys it did not declare).
//
// Shards are locked in ascending order, so Update never deadlocks against
// another Update or a multi-key Del. The clock is read at most once, on the
// first Tx call that needs the time; an injected clock is read before the
// shards are locked. fn must not call the Engine itself (its shard locks
// are held: that deadlocks), must not keep tx after it returns, and must
// not block for long: every operation on a locked shard waits for it. A Tx
// method given a key outside keys panics. Tx methods report their changes
// to listeners as the Engine methods of the same name do, in the section's
// order, unless the section names them itself (Quiet, Notify). Update is
// safe for concurrent use.
//
// A bounded engine admits a section as a whole, before locking, as Redis
// admits a command (see "Memory bound" in the package doc): if it is over
// its bound and cannot evict, every write of the section that may add
// memory fails with ErrOOM, while its reads and deletes work.
func (e *Engine) Update(keys []string, fn func(tx *Tx)) {
	e.update(keys, fn, true)
}

// UpdateAdmitted is Update for a caller that admits its work itself, as a
// server admits each command before running it (Budget.Evict): the section
// is not admitted, so none of its writes fails with ErrOOM, and they may
// take the engine past its bound, which the next admission evicts back to.
// Without a bound it is Update.
func (e *Engine) UpdateAdmitted(keys []string, fn func(tx *Tx)) {
	e.update(keys, fn, false)
}

func (e *Engine) update(keys []string, fn func(tx *Tx), admit bool) {
	// fn may keep tx (against the rules), so tx lives on the heap: one
	// allocation, which holds the shard list of most sections too.
	tx := Tx{e: e}
	if admit && e.full() {
		tx.oom = e.admit() // before any lock: eviction takes shard locks
	}
	e.begin(&tx.c)
	tx.shards = e.lockShards(keys, tx.buf[:0])
	tx.all = len(keys) == 0
	defer func() {
		tx.done = true
		for _, i := range tx.shards {
			e.m.ShardAt(i).Unlock()
		}
	}()
	fn(&tx)
}

// Tx is the view of an Update section. Its methods have the semantics of the
// Engine methods of the same name, at the section's one time (Now). A Tx is
// valid only inside the function given to Update and only on that
// function's goroutine; it is not safe for concurrent use.
type Tx struct {
	e      *Engine
	c      opState
	shards []int // locked shards, ascending
	all    bool  // every shard is locked
	done   bool  // Update returned
	oom    error // ErrOOM if the bounded engine could not admit the section
	buf    [16]int
}

// shard returns key's hash and shard, which must be locked by this section.
func (tx *Tx) shard(key string) (*shardT, uint64) {
	tx.check()
	h := tx.e.m.Hash(key)
	s, i := tx.e.m.Shard(h)
	if !tx.all {
		if _, ok := slices.BinarySearch(tx.shards, i); !ok {
			panic(fmt.Sprintf("engine: Tx: key %q was not given to Update", key))
		}
	}
	return s, h
}

// Now returns the section's time, the same for every call of the section.
func (tx *Tx) Now() time.Time { return time.Unix(0, tx.e.at(&tx.c)) }

// Get is Engine.Get inside the section.
func (tx *Tx) Get(key string) (string, bool) {
	s, h := tx.shard(key)
	return tx.e.getLocked(s, h, key, new(shard.Probe), false, &tx.c)
}

// Set is Engine.Set inside the section.
func (tx *Tx) Set(key, value string) error {
	s, h := tx.shard(key)
	if tx.oom != nil {
		return tx.oom
	}
	tx.e.swapLocked(s, h, key, value, &tx.c)
	return nil
}

// SetWith is Engine.SetWith inside the section.
func (tx *Tx) SetWith(key, value string, args SetArgs) (SetResult, error) {
	at, err := args.check()
	if err != nil {
		return SetResult{}, err
	}
	s, h := tx.shard(key)
	if tx.oom != nil {
		return SetResult{}, tx.oom
	}
	return tx.e.setWithLocked(s, h, key, value, &args, at, &tx.c)
}

// SetNXPXFenced is Engine.SetNXPXFenced inside the section.
func (tx *Tx) SetNXPXFenced(key, value string, ttl time.Duration) (int64, bool, error) {
	if ttl <= 0 {
		return 0, false, ErrInvalidTTL
	}
	s, h := tx.shard(key)
	if tx.oom != nil {
		return 0, false, tx.oom
	}
	return tx.e.setNXPXFencedLocked(s, h, key, value, ttl, new(shard.Probe), false, &tx.c)
}

// GetSet is Engine.GetSet inside the section.
func (tx *Tx) GetSet(key, value string) (string, bool, error) {
	s, h := tx.shard(key)
	if tx.oom != nil {
		return "", false, tx.oom
	}
	old, ok := tx.e.getSetLocked(s, h, key, value, &tx.c)
	return old, ok, nil
}

// GetDel is Engine.GetDel inside the section.
func (tx *Tx) GetDel(key string) (string, bool) {
	s, h := tx.shard(key)
	return tx.e.getDelLocked(s, h, key, &tx.c)
}

// Del is Engine.Del inside the section.
func (tx *Tx) Del(keys ...string) int {
	n := 0
	for _, k := range keys {
		if s, h := tx.shard(k); tx.e.delLocked(s, h, k, &tx.c) {
			n++
		}
	}
	return n
}

// Exists is Engine.Exists inside the section.
func (tx *Tx) Exists(key string) bool {
	s, h := tx.shard(key)
	return tx.e.liveLocked(s, h, key, new(shard.Probe), false, &tx.c)
}

// PExpireCond is Engine.PExpireCond inside the section.
func (tx *Tx) PExpireCond(key string, ttl time.Duration, cond ExpireCond) (bool, error) {
	if cond > ExpireLT {
		return false, ErrSyntax
	}
	s, h := tx.shard(key)
	return tx.e.pexpireLocked(s, h, key, ttl, cond, &tx.c)
}

// PExpireAtCond is Engine.PExpireAtCond inside the section.
func (tx *Tx) PExpireAtCond(key string, at time.Time, cond ExpireCond) (bool, error) {
	if cond > ExpireLT {
		return false, ErrSyntax
	}
	exp, ok := unixNano(at)
	if !ok {
		return false, ErrInvalidTTL
	}
	s, h := tx.shard(key)
	return tx.e.expireLocked(s, h, key, exp, cond, &tx.c), nil
}

// PTTL is Engine.PTTL inside the section.
func (tx *Tx) PTTL(key string) (time.Duration, bool) {
	s, h := tx.shard(key)
	_, d, ok := tx.e.getPTTLLocked(s, h, key, new(shard.Probe), false, &tx.c)
	return d, ok
}

// GetPTTL is Engine.GetPTTL inside the section.
func (tx *Tx) GetPTTL(key string) (string, time.Duration, bool) {
	s, h := tx.shard(key)
	v, d, ok := tx.e.getPTTLLocked(s, h, key, new(shard.Probe), false, &tx.c)
	if isObject(v) {
		return "", 0, false
	}
	return v, d, ok
}

// ExpireTime is Engine.ExpireTime inside the section.
func (tx *Tx) ExpireTime(key string) (time.Time, bool) {
	s, h := tx.shard(key)
	return tx.e.expireTimeLocked(s, h, key, new(shard.Probe), false, &tx.c)
}

// Persist is Engine.Persist inside the section.
func (tx *Tx) Persist(key string) bool {
	s, h := tx.shard(key)
	return tx.e.persistLocked(s, h, key, &tx.c)
}

// IncrBy is Engine.IncrBy inside the section.
func (tx *Tx) IncrBy(key string, n int64) (int64, error) {
	s, h := tx.shard(key)
	if tx.oom != nil {
		return 0, tx.oom
	}
	return tx.e.incrByLocked(s, h, key, n, &tx.c)
}

// CompareAndDelete is Engine.CompareAndDelete inside the section.
func (tx *Tx) CompareAndDelete(key, value string) bool {
	s, h := tx.shard(key)
	return tx.e.compareAndDeleteLocked(s, h, key, value, new(shard.Probe), false, &tx.c)
}

// CompareAndSwap is Engine.CompareAndSwap inside the section.
func (tx *Tx) CompareAndSwap(key, old, value string) (bool, error) {
	s, h := tx.shard(key)
	if tx.oom != nil {
		return false, tx.oom
	}
	return tx.e.compareAndSwapLocked(s, h, key, old, value, &tx.c), nil
}

// CompareAndPExpire is Engine.CompareAndPExpire inside the section.
func (tx *Tx) CompareAndPExpire(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	s, h := tx.shard(key)
	return tx.e.compareAndPExpireLocked(s, h, key, value, ttl, &tx.c)
}

// Len is Engine.Len over the section's shards: every key outside
// ReservedPrefix when Update locked every shard, counting expired keys not
// yet reclaimed (as Redis DBSIZE). Unlike Engine.Len it is an atomic
// snapshot.
func (tx *Tx) Len() int { return tx.count(false) }

// LenAll is Len counting the keys under ReservedPrefix too.
func (tx *Tx) LenAll() int { return tx.count(true) }

func (tx *Tx) count(all bool) int {
	tx.check()
	n := 0
	for _, i := range tx.shards {
		n += lenLocked(tx.e.m.ShardAt(i), all)
	}
	return n
}

// Flush deletes every key outside ReservedPrefix of the section's shards
// (Engine.Flush when Update locked every shard), waking the watchers of
// the keys it deletes. When Update locked every shard it reports one
// KindFlush event; otherwise it reports each key it deletes, as KindDel
// (or KindExpired for a key already expired).
func (tx *Tx) Flush() { tx.flush(false) }

// FlushAll is Flush deleting the keys under ReservedPrefix too
// (Engine.FlushAll when Update locked every shard).
func (tx *Tx) FlushAll() { tx.flush(true) }

func (tx *Tx) flush(all bool) {
	tx.check()
	for _, i := range tx.shards {
		tx.e.flushLocked(tx.e.m.ShardAt(i), all, !tx.all, &tx.c)
	}
	if o := tx.e.m.ShardAt(tx.shards[0]).Aux.obs; tx.all && o.listened() && !tx.c.quiet {
		o.feed.deliver(Event{Kind: KindFlush, Tag: tx.c.tag})
	}
}

// check panics if tx is used after its Update returned.
func (tx *Tx) check() {
	if tx.done {
		panic("engine: Tx used after its Update returned")
	}
}

// Range calls fn with every live key outside ReservedPrefix of the
// section's shards (all such keys when Update locked every shard) until fn
// returns false. fn may use tx; keys it writes or deletes meanwhile may or
// may not be visited.
func (tx *Tx) Range(fn func(key string) bool) { tx.rangeKeys(false, fn) }

// RangeAll is Range visiting the keys under ReservedPrefix too.
func (tx *Tx) RangeAll(fn func(key string) bool) { tx.rangeKeys(true, fn) }

func (tx *Tx) rangeKeys(all bool, fn func(key string) bool) {
	tx.check()
	var buf []string
	for _, i := range tx.shards {
		buf = tx.e.appendLiveLocked(tx.e.m.ShardAt(i), all, buf[:0], &tx.c)
		for _, k := range buf {
			if !fn(k) {
				return
			}
		}
	}
}

// Held reports whether key is a held lock, which a memory bound never
// evicts (see "Memory bound"): written by SetNXPXFenced, or marked by
// Hold, and not deleted, expired or overwritten since. It is false for an
// absent or expired key, and on an engine without a memory bound, which
// keeps no such mark.
func (tx *Tx) Held(key string) bool {
	s, h := tx.shard(key)
	var p shard.Probe
	if tx.e.mem == nil || !tx.e.liveLocked(s, h, key, &p, false, &tx.c) {
		return false
	}
	return s.MetaLocked(p.Hd).Pinned
}

// Hold marks key as SetNXPXFenced marks the lock it writes, so that a
// memory bound never evicts it until it is deleted, expires or is
// overwritten, and reports whether key exists (an absent or expired key is
// not marked). A server that moves a lock between engines, as SWAPDB does,
// keeps it held so. On an engine without a memory bound it only reports
// whether key exists.
func (tx *Tx) Hold(key string) bool {
	s, h := tx.shard(key)
	var p shard.Probe
	if !tx.e.liveLocked(s, h, key, &p, false, &tx.c) {
		return false
	}
	if tx.e.mem != nil {
		s.MetaLocked(p.Hd).Pinned = true
	}
	return true
}
