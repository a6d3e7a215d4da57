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

// SemaphoreBackend is implemented by backends that can hold semaphores
// (Client.Semaphore). A semaphore of limit N is N slot keys; a lease is a
// plain lock on one slot, so once acquired it is released, refreshed and
// read with the Backend's own calls on the slot's key.
type SemaphoreBackend interface {
	Backend
	// AcquireSlot stores value with ttl in the lowest slot of semaphore
	// name below limit that it finds free, taking the slot and the
	// semaphore's next fencing token (strictly increasing across all its
	// leases; 0 when the backend gives none) in one atomic step, and
	// returns the slot's key. ok is false when every slot below limit was
	// held when read.
	AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (key string, fence int64, ok bool, err error)
	// SlotKey returns the key of slot i of semaphore name, without I/O.
	SlotKey(name string, i int) string
}

// RWBackend is implemented by backends that can hold read-write locks
// (Client.RWMutex). Each lease is a plain lock on a key of its own, so once
// acquired it is released, refreshed and read with the Backend's own calls
// on the key returned. On failure, the key returned is the one whose change
// may let a retry succeed (the writer, the waiting writer's mark, or a
// reader), for Watcher backends to watch.
type RWBackend interface {
	Backend
	// AcquireRead takes a read lease on name with ttl, in one atomic step,
	// unless a writer holds the lock or waits for it (writers are
	// preferred). fence is the lock's next fencing token, strictly
	// increasing across all its leases (0 when the backend gives none).
	AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (key string, fence int64, ok bool, err error)
	// AcquireWrite takes the write lease on name with ttl, in one atomic
	// step, if no writer holds it and no read lease is live. When it fails
	// and queue is true, it marks value as a writer waiting for the lock
	// (if no other writer is marked), for ttl, which keeps new readers out.
	AcquireWrite(ctx context.Context, name, value string, ttl time.Duration, queue bool) (key string, fence int64, ok bool, err error)
	// Abandon removes, in one atomic step, every trace of value on name: its
	// waiting mark, and a lease it holds (a call whose reply was lost may
	// have stored one). It reports nothing about what it found.
	Abandon(ctx context.Context, name, value string) error
}

// MultiBackend is implemented by backends that can hold several keys as one
// lock (Client.ObtainAll). Each call is one atomic step over all the keys,
// and the keys are the same as single locks' keys, so a multi-key lock and
// a single lock on one of its keys exclude each other.
type MultiBackend interface {
	Backend
	// AcquireAll stores value with ttl at every key only if none of them is
	// held, and returns each key's fencing token (nil when the backend
	// gives none). When it fails, blocked is the index of a held key.
	AcquireAll(ctx context.Context, keys []string, value string, ttl time.Duration) (fences []int64, blocked int, ok bool, err error)
	// ReleaseAll deletes every key that holds value; ok reports that all of
	// them did.
	ReleaseAll(ctx context.Context, keys []string, value string) (ok bool, err error)
	// RefreshAll sets every key's TTL to ttl only if all of them hold value;
	// otherwise it changes nothing and ok is false.
	RefreshAll(ctx context.Context, keys []string, value string, ttl time.Duration) (ok bool, err error)
	// PTTLAll returns the least remaining TTL of the keys if all of them
	// hold value; ok is false otherwise.
	PTTLAll(ctx context.Context, keys []string, value string) (ttl time.Duration, ok bool, err error)
}

// ReentrantBackend is implemented by backends that can hold reentrant locks
// (ObtainOptions.Reentrant): a key holding value, and the set of its
// owner's holds, each named by a hold ID that the Client makes unique (no
// spaces, never reused), so that a hold's release can only ever remove that
// hold: a retried release, or the release of a hold that ended with an
// earlier lease of the key, removes nothing else.
type ReentrantBackend interface {
	Backend
	// AcquireReentrant stores value at key with ttl and the one hold hold
	// if key is absent; if key holds value and was taken reentrantly, it
	// adds hold (nothing if hold is already there, so a retried call is
	// harmless) and makes the TTL at least ttl (never shorter). It returns
	// the number of holds after the call and the fencing token of the
	// lease's first hold (0 when the backend gives none); ok is false when
	// key holds another value, or value without a set of holds.
	AcquireReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (fence int64, holds int, ok bool, err error)
	// ReleaseReentrant removes hold if key holds value and hold is one of
	// its holds, deleting the key with its last hold; holds is the number
	// left. ok is false, and nothing changes, when key does not hold value
	// or hold is not one of its holds.
	ReleaseReentrant(ctx context.Context, key, value, hold string) (holds int, ok bool, err error)
	// RefreshReentrant makes key's TTL at least ttl, never shorter (other
	// holds count on it), if key holds value and hold is one of its holds;
	// ok is false, and nothing changes, otherwise.
	RefreshReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (ok bool, err error)
	// PTTLReentrant is PTTL for the hold hold: ok is false unless key holds
	// value and hold is one of its holds.
	PTTLReentrant(ctx context.Context, key, value, hold string) (ttl time.Duration, ok bool, err error)
}

// WaitTracker is implemented by backends that count blocked Obtain calls,
// for inspection (the in-process backend). A Client calls Waiting when an
// Obtain starts to wait and the returned function when it stops.
type WaitTracker interface {
	// Waiting records one Obtain of kind waiting for name (a key, or a
	// semaphore's or read-write lock's name) and returns the function that
	// removes it.
	Waiting(kind Kind, name string) (done func())
}
