package inproc

import (
	"sync"
	"time"

	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
)

var _ lockapi.WaitTracker = (*Backend)(nil)

// waitKey identifies what blocked Obtain calls wait for.
type waitKey struct {
	kind lockapi.Kind
	name string
}

// waiters counts the Obtain calls waiting through one Backend.
type waiters struct {
	mu sync.Mutex
	n  map[waitKey]int // guarded by mu; absent when zero
}

// Waiting records an Obtain of kind waiting for name, until the returned
// function is called (lockapi.WaitTracker). Clients call it; Inspect
// reports the counts.
func (b *Backend) Waiting(kind lockapi.Kind, name string) func() {
	k := waitKey{kind, name}
	w := &b.waiters
	w.mu.Lock()
	if w.n == nil {
		w.n = make(map[waitKey]int)
	}
	w.n[k]++
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			if w.n[k]--; w.n[k] <= 0 {
				delete(w.n, k)
			}
			w.mu.Unlock()
		})
	}
}

func (b *Backend) waiting(kinds ...waitKey) int {
	w := &b.waiters
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, k := range kinds {
		n += w.n[k]
	}
	return n
}

// Holder is one lease as the Inspect methods see it.
type Holder struct {
	// Key is the engine key holding the lease.
	Key string
	// Value is the holder's token followed by its metadata (32 bytes of
	// token for the tokens lockapi generates).
	Value string
	// TTL is the lease's remaining time (engine.NoExpiry if it has none).
	TTL time.Duration
}

// Info is what Inspect and InspectSemaphore report.
type Info struct {
	// Holders are the leases held, in key (slot) order; empty when free.
	Holders []Holder
	// Holds is, for a reentrant lock, the number of its owner's holds;
	// else 0.
	Holds int
	// Waiters is the number of Obtain calls waiting, through this Backend,
	// for the lock (for a key: single and multi-key locks).
	Waiters int
}

// holder reads key's lease.
func (b *Backend) holder(key string) (Holder, bool) {
	v, d, ok := b.e.GetPTTL(key)
	return Holder{Key: key, Value: v, TTL: d}, ok
}

// Inspect reports who holds lock key, for how long, and how many Obtain
// calls through this Backend wait for it. It is a debugging aid, safe for
// concurrent use; it reads the key and its holds one after the other,
// not as one snapshot.
func (b *Backend) Inspect(key string) Info {
	var info Info
	if h, ok := b.holder(key); ok {
		info.Holders = []Holder{h}
		if hv, ok := b.e.Get(lockkeys.Hold(key)); ok {
			if _, ids, valid := parseHolds(hv); valid {
				info.Holds = len(ids)
			}
		}
	}
	info.Waiters = b.waiting(waitKey{lockapi.KindMutex, key}, waitKey{lockapi.KindMulti, key})
	return info
}

// InspectSemaphore reports the leases of semaphore name in slots below
// limit (at most lockapi.MaxLimit, above which no slot is taken) and how many Obtain calls through this Backend wait for it. It is
// a debugging aid, safe for concurrent use, reading one slot at a time.
func (b *Backend) InspectSemaphore(name string, limit int) Info {
	var info Info
	lk := lockkeys.NewSemaphore(name)
	for i := range min(limit, lockapi.MaxLimit) { // no slot lies above

		if h, ok := b.holder(lk.Slot(i)); ok {
			info.Holders = append(info.Holders, h)
		}
	}
	info.Waiters = b.waiting(waitKey{lockapi.KindSemaphore, name})
	return info
}

// RWInfo is what InspectRW reports.
type RWInfo struct {
	// Writer is the write lease, if any.
	Writer *Holder
	// Readers are the live read leases, oldest first.
	Readers []Holder
	// WriterWaiting is the waiting writer's mark (its value), if any: new
	// readers wait while it is set.
	WriterWaiting *Holder
	// ReadWaiters and WriteWaiters count the Obtain calls waiting through
	// this Backend.
	ReadWaiters, WriteWaiters int
}

// InspectRW reports the leases of read-write lock name, its waiting
// writer, and how many Obtain calls through this Backend wait for it. It is
// a debugging aid, safe for concurrent use, reading one key at a time.
func (b *Backend) InspectRW(name string) RWInfo {
	var info RWInfo
	lk := lockkeys.NewRW(name)
	if h, ok := b.holder(lk.Writer()); ok {
		info.Writer = &h
	}
	if h, ok := b.holder(lk.Queue()); ok {
		info.WriterWaiting = &h
	}
	list, _ := b.e.Get(lk.Readers())
	for _, id := range parseIDs(list) {
		if h, ok := b.holder(lk.Reader(id)); ok {
			info.Readers = append(info.Readers, h)
		}
	}
	info.ReadWaiters = b.waiting(waitKey{lockapi.KindRead, name})
	info.WriteWaiters = b.waiting(waitKey{lockapi.KindWrite, name})
	return info
}
