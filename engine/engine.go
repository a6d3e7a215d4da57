// Package engine is an in-process key-value engine with Redis string and TTL
// semantics. TODO(engine): full package doc (model, linearizability, clock,
// expiry, reclamation).
package engine

import "time"

// Engine is a sharded, linearizable key-value store. TODO(engine): doc.
type Engine struct{}

// New returns a started engine. TODO(engine)
func New(opts Options) *Engine { panic("TODO(engine)") }

// Close stops the reaper; idempotent. TODO(engine)
func (e *Engine) Close() error { panic("TODO(engine)") }

// Get is Redis GET. TODO(engine)
func (e *Engine) Get(key string) (value string, ok bool) { panic("TODO(engine)") }

// Set is Redis SET: stores value and clears any TTL. TODO(engine)
func (e *Engine) Set(key, value string) { panic("TODO(engine)") }

// SetPX is Redis SET PX. TODO(engine)
func (e *Engine) SetPX(key, value string, ttl time.Duration) error { panic("TODO(engine)") }

// SetNX is Redis SETNX: never touches a TTL. TODO(engine)
func (e *Engine) SetNX(key, value string) bool { panic("TODO(engine)") }

// SetNXPX is Redis SET NX PX. TODO(engine)
func (e *Engine) SetNXPX(key, value string, ttl time.Duration) (bool, error) {
	panic("TODO(engine)")
}

// SetWith is the general Redis SET. TODO(engine)
func (e *Engine) SetWith(key, value string, args SetArgs) (SetResult, error) {
	panic("TODO(engine)")
}

// GetSet is Redis GETSET: clears the TTL. TODO(engine)
func (e *Engine) GetSet(key, value string) (old string, ok bool) { panic("TODO(engine)") }

// GetDel is Redis GETDEL. TODO(engine)
func (e *Engine) GetDel(key string) (value string, ok bool) { panic("TODO(engine)") }

// CompareAndDelete deletes key only if it holds value (DELEX IFEQ). TODO(engine)
func (e *Engine) CompareAndDelete(key, value string) bool { panic("TODO(engine)") }

// CompareAndSwap replaces old with value, keeping the TTL. TODO(engine)
func (e *Engine) CompareAndSwap(key, old, value string) bool { panic("TODO(engine)") }

// CompareAndPExpire sets key's TTL only if it holds value (lock refresh). TODO(engine)
func (e *Engine) CompareAndPExpire(key, value string, ttl time.Duration) (bool, error) {
	panic("TODO(engine)")
}

// Del is Redis DEL. TODO(engine)
func (e *Engine) Del(keys ...string) int { panic("TODO(engine)") }

// Exists is Redis EXISTS for one key. TODO(engine)
func (e *Engine) Exists(key string) bool { panic("TODO(engine)") }

// PExpire is Redis PEXPIRE; ttl <= 0 deletes. TODO(engine)
func (e *Engine) PExpire(key string, ttl time.Duration) bool { panic("TODO(engine)") }

// PExpireCond is Redis PEXPIRE with NX/XX/GT/LT. TODO(engine)
func (e *Engine) PExpireCond(key string, ttl time.Duration, cond ExpireCond) (bool, error) {
	panic("TODO(engine)")
}

// PExpireAt is Redis PEXPIREAT. TODO(engine)
func (e *Engine) PExpireAt(key string, at time.Time) bool { panic("TODO(engine)") }

// PTTL is Redis PTTL. TODO(engine)
func (e *Engine) PTTL(key string) (ttl time.Duration, ok bool) { panic("TODO(engine)") }

// Persist is Redis PERSIST. TODO(engine)
func (e *Engine) Persist(key string) bool { panic("TODO(engine)") }

// IncrBy is Redis INCRBY. TODO(engine)
func (e *Engine) IncrBy(key string, n int64) (int64, error) { panic("TODO(engine)") }

// Len returns the number of keys held. TODO(engine)
func (e *Engine) Len() int { panic("TODO(engine)") }

// Watch returns a channel closed at the next change of key. TODO(engine)
func (e *Engine) Watch(key string) (changed <-chan struct{}, stop func()) {
	panic("TODO(engine)")
}

// Reap reclaims every key expired by now. TODO(engine)
func (e *Engine) Reap() int { panic("TODO(engine)") }
