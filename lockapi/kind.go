package lockapi

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"time"
)

// Kind is what a Lock is a lease of. Every kind is the same *Lock, with the
// same Release, Refresh, TTL, Lost, Context and watchdog.
type Kind uint8

const (
	// KindMutex is a lock from Client.Obtain: one holder of a key (or, with
	// ObtainOptions.Reentrant, one owner holding it some number of times).
	KindMutex Kind = iota
	// KindSemaphore is a lease from Semaphore.Obtain: one of up to N
	// holders of a name.
	KindSemaphore
	// KindRead is a read lease from RWMutex.ObtainRead.
	KindRead
	// KindWrite is the write lease from RWMutex.ObtainWrite.
	KindWrite
	// KindMulti is a lock from Client.ObtainAll: several keys held
	// together.
	KindMulti
)

// String returns the kind's name: "mutex", "semaphore", "read", "write" or
// "multi".
func (k Kind) String() string {
	switch k {
	case KindMutex:
		return "mutex"
	case KindSemaphore:
		return "semaphore"
	case KindRead:
		return "read"
	case KindWrite:
		return "write"
	case KindMulti:
		return "multi"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// prim is how a Lock that is not a plain mutex lock talks to its backend:
// its acquisition (try, cleanup) and the calls on the lease it got. A plain
// mutex lock has none and calls the Backend directly, so the common path
// costs no indirection.
type prim interface {
	// try makes one acquisition attempt; on success it sets the Lock's
	// fence and whatever the lease's later calls need. queue says the
	// Obtain will wait if this attempt fails (a writer then marks itself
	// waiting).
	try(ctx context.Context, l *Lock, ttl time.Duration, queue bool) (ok bool, err error)
	// watchKeys returns, after a failed try, the keys whose change may let
	// the next try succeed, and after a successful one the keys the lease
	// lives in (what the loss monitor watches). The same slice may be
	// returned again while nothing changed.
	watchKeys() []string
	// cleanup undoes, best effort, what the tries may have left at the
	// backend: after a failed call (failed true) a lease stored by a call
	// whose reply was lost; after the Obtain gave up, a writer's waiting
	// mark.
	cleanup(ctx context.Context, l *Lock, failed bool)
	// queueKey names the FIFO queue and the waiter count of the
	// acquisition.
	queueKey() string
	release(ctx context.Context, l *Lock) (bool, error)
	refresh(ctx context.Context, l *Lock, ttl time.Duration) (bool, error)
	pttl(ctx context.Context, l *Lock) (time.Duration, bool, error)
}

// keyLease is the part of a prim whose lease, once acquired, is a plain
// lock on one backend key (a semaphore slot, a reader, the writer): its
// calls are the Backend's, on that key.
type keyLease struct {
	key   string   // the backend key of the lease, once acquired
	held  bool     // acquired: watch is built from key on demand
	watch []string // see prim.watchKeys
}

func (k *keyLease) watchKeys() []string {
	if k.held && k.watch == nil {
		k.watch = []string{k.key}
	}
	return k.watch
}

func (k *keyLease) release(ctx context.Context, l *Lock) (bool, error) {
	return l.c.b.Release(ctx, k.key, l.value)
}

func (k *keyLease) refresh(ctx context.Context, l *Lock, ttl time.Duration) (bool, error) {
	return l.c.b.Refresh(ctx, k.key, l.value, ttl)
}

func (k *keyLease) pttl(ctx context.Context, l *Lock) (time.Duration, bool, error) {
	return l.c.b.PTTL(ctx, k.key, l.value)
}

// acquired records that the lease lives at key.
func (k *keyLease) acquired(key string) {
	k.key, k.held, k.watch = key, true, nil
}

// blockedBy records key as the one to watch after a failed try, reusing
// the slice when it is the same key (a new slice otherwise: the wait loop
// compares the old one with the new).
func (k *keyLease) blockedBy(key string) {
	if len(k.watch) == 1 && k.watch[0] == key {
		return
	}
	k.watch = []string{key}
}

// sameKeys reports whether a and b are the same list.
func sameKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// watchAll returns a channel closed at the next change of any of keys, and
// a stop function with Watcher.Watch's contract. For more than one key it
// arms a watch on each and runs one goroutine that waits for the first to
// fire; stop ends it and waits for it, so it never outlives the watch.
func watchAll(w Watcher, keys []string) (<-chan struct{}, func()) {
	if len(keys) == 1 {
		return w.Watch(keys[0])
	}
	out := make(chan struct{})
	if len(keys) == 0 {
		return out, func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	cases := make([]reflect.SelectCase, len(keys)+1)
	stops := make([]func(), len(keys))
	for i, k := range keys {
		ch, stop := w.Watch(k)
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)}
		stops[i] = stop
	}
	cases[len(keys)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(quit)}
	go func() {
		defer close(done)
		chosen, _, _ := reflect.Select(cases)
		for _, stop := range stops {
			stop()
		}
		if chosen < len(keys) {
			close(out)
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
