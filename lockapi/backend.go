package lockapi

import (
	"context"
	"time"
)

// Backend is the storage a Client locks over: the four atomic operations of
// the single-instance Redis lock pattern. Implementations must make each call
// atomic on the server (one command or one script) and safe for concurrent
// use. Errors are transport or server failures; "not held" and "taken" are
// reported through ok, never as errors.
type Backend interface {
	// Acquire stores value at key with the given TTL only if key is absent
	// (SET key value NX PX ttl). When ok, fence is the fencing token of this
	// acquisition: strictly increasing per key across releases, expiries and
	// re-creations, or 0 when the backend cannot give one.
	Acquire(ctx context.Context, key, value string, ttl time.Duration) (fence int64, ok bool, err error)
	// Release deletes key only if it holds value (compare-and-delete).
	Release(ctx context.Context, key, value string) (ok bool, err error)
	// Refresh sets key's TTL only if it holds value (compare-and-pexpire).
	Refresh(ctx context.Context, key, value string, ttl time.Duration) (ok bool, err error)
	// PTTL returns key's remaining TTL only if it holds value; ok is false
	// when key is absent or holds another value.
	PTTL(ctx context.Context, key, value string) (ttl time.Duration, ok bool, err error)
}

// Watcher is implemented by backends that can report changes to a key as
// they happen (the in-process engine). A Client uses it to wake blocked
// Obtain calls the moment a lock is released or expires, and to signal a
// lost lock at once; without it the Client polls with its retry strategy and
// detects loss on a failed Refresh.
type Watcher interface {
	// Watch returns a channel closed at the next change of key: a write, a
	// TTL change, a delete or an expiry. Call it before checking the key so
	// that no change is missed; stop releases the watch early and is
	// idempotent.
	Watch(key string) (changed <-chan struct{}, stop func())
}
