package lockapi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// lease is one lease in the semaphore and read-write lock models.
type lease struct {
	l        *lockapi.Lock
	lost     <-chan struct{} // nil if Lost was not called
	slot     int             // the semaphore slot it holds in the model
	deadline time.Time
	released bool
}

// primModel is what the model checks share: an engine on a fake clock,
// the model's time, and the leases handed out.
type primModel struct {
	ec     *clock.Mock
	e      *engine.Engine
	b      *inproc.Backend
	now    time.Time
	leases []*lease
}

func newPrimModel() *primModel {
	m := &primModel{ec: clock.NewMock(), now: epoch}
	m.ec.Set(epoch)
	m.e = engine.New(engine.Options{Clock: m.ec})
	m.b = inproc.New(m.e, inproc.Options{})
	return m
}

// alive reports whether the model holds ls: not released, and now <= its
// deadline.
func (m *primModel) alive(ls *lease) bool {
	return !ls.released && !m.now.After(ls.deadline)
}

func (m *primModel) close() {
	for _, ls := range m.leases {
		if m.alive(ls) {
			ls.l.Release(context.Background())
		}
	}
	m.e.Close()
}

var modelTTL = rapid.Custom(func(t *rapid.T) time.Duration {
	return time.Duration(rapid.IntRange(1, 3000).Draw(t, "ttl_ms")) * time.Millisecond
})

// actions are the steps every model shares: Release, Refresh, TTL and
// Advance of any lease, and the check of Lost signals.
func (m *primModel) actions(rt *rapid.T) map[string]func(*rapid.T) {
	ctx := context.Background()
	pick := func(t *rapid.T) *lease {
		if len(m.leases) == 0 {
			t.Skip("no leases yet")
		}
		return m.leases[rapid.IntRange(0, len(m.leases)-1).Draw(t, "lease")]
	}
	return map[string]func(*rapid.T){
		"Release": func(t *rapid.T) {
			ls := pick(t)
			held := m.alive(ls)
			err := ls.l.Release(ctx)
			if held != (err == nil) || err != nil && !errors.Is(err, lockapi.ErrNotHeld) {
				t.Fatalf("Release(%v lease) = %v, model says held = %v", ls.l.Kind(), err, held)
			}
			if held {
				ls.released = true
			}
		},
		"Refresh": func(t *rapid.T) {
			ls := pick(t)
			ttl := modelTTL.Draw(t, "ttl")
			held := m.alive(ls)
			err := ls.l.Refresh(ctx, ttl)
			if held != (err == nil) || err != nil && !errors.Is(err, lockapi.ErrNotHeld) {
				t.Fatalf("Refresh(%v lease) = %v, model says held = %v", ls.l.Kind(), err, held)
			}
			if held {
				ls.deadline = m.now.Add(ttl)
			}
		},
		"TTL": func(t *rapid.T) {
			ls := pick(t)
			held := m.alive(ls)
			d, err := ls.l.TTL(ctx)
			if held != (err == nil) {
				t.Fatalf("TTL(%v lease) = %v, %v, model says held = %v", ls.l.Kind(), d, err, held)
			}
			if held && d != ls.deadline.Sub(m.now) {
				t.Fatalf("TTL(%v lease) = %v, model says %v", ls.l.Kind(), d, ls.deadline.Sub(m.now))
			}
		},
		"Advance": func(t *rapid.T) {
			d := time.Duration(rapid.IntRange(0, 2000).Draw(t, "advance_ms")) * time.Millisecond
			m.ec.Add(d)
			m.e.Reap()
			m.now = m.now.Add(d)
		},
	}
}

// checkLost checks that exactly the leases gone without a release have
// their Lost closed.
func (m *primModel) checkLost(t *rapid.T) {
	for i, ls := range m.leases {
		switch {
		case ls.lost == nil:
		case !m.alive(ls) && !ls.released:
			select {
			case <-ls.lost:
			case <-time.After(guard):
				t.Fatalf("lease %d (%v) is gone but Lost is open", i, ls.l.Kind())
			}
		case isClosed(ls.lost):
			t.Fatalf("lease %d (%v): Lost closed (Err %v), model says alive = %v, released = %v", i, ls.l.Kind(), ls.l.Err(), m.alive(ls), ls.released)
		}
	}
}

// add records a new lease, watching some for loss: a watched lease's calls
// are refused by the Client once it knows the loss, so leave others
// unwatched for their calls to reach the backend.
func (m *primModel) add(t *rapid.T, l *lockapi.Lock, slot int, ttl time.Duration) {
	ls := &lease{l: l, slot: slot, deadline: m.now.Add(ttl)}
	if rapid.Bool().Draw(t, "watch") {
		ls.lost = l.Lost()
	}
	m.leases = append(m.leases, ls)
}

// checkSemaphore drives two Clients' semaphores named "pool" over
// newBackend with limits drawn from limits (one limit: the plain
// semaphore; several: holders changing N) against a model of slots, with
// leases expiring on the fake clock. Every Obtain must succeed exactly when
// the model has a free slot below its limit; after every step the engine
// must hold no more leases than the largest limit of a live holder (than N,
// with one limit).
func checkSemaphore(rt *rapid.T, limits []int, newBackend func(m *primModel) lockapi.Backend) {
	m := newPrimModel()
	defer m.close()
	b := newBackend(m)
	cc := clock.NewMock() // NoRetry never waits
	clients := []*lockapi.Client{lockapi.New(b, lockapi.Options{Clock: cc}), lockapi.New(b, lockapi.Options{Clock: cc})}
	maxLimit := 0
	for _, n := range limits {
		maxLimit = max(maxLimit, n)
	}
	limitOf := map[*lease]int{}
	var lastFence int64
	ctx := context.Background()
	steps := m.actions(rt)
	steps["Obtain"] = func(t *rapid.T) {
		n := rapid.SampledFrom(limits).Draw(t, "limit")
		c := clients[rapid.IntRange(0, len(clients)-1).Draw(t, "client")]
		ttl := modelTTL.Draw(t, "ttl")
		taken := make([]bool, maxLimit)
		for _, ls := range m.leases {
			if m.alive(ls) {
				taken[ls.slot] = true
			}
		}
		slot := -1
		for i := range n {
			if !taken[i] {
				slot = i
				break
			}
		}
		l, err := c.Semaphore("pool", n).Obtain(ctx, ttl, nil)
		if (slot >= 0) != (err == nil) {
			t.Fatalf("Obtain(limit %d) = %v, model's free slot below the limit: %d", n, err, slot)
		}
		if err != nil {
			if !errors.Is(err, lockapi.ErrNotObtained) {
				t.Fatalf("Obtain(limit %d) of a full semaphore = %v, want ErrNotObtained", n, err)
			}
			return
		}
		if f, _ := l.Fence(); f <= lastFence {
			t.Fatalf("Obtain fence %d after %d: not increasing", f, lastFence)
		}
		lastFence, _ = l.Fence()
		m.add(t, l, slot, ttl)
		limitOf[m.leases[len(m.leases)-1]] = n
	}
	steps[""] = func(t *rapid.T) {
		m.checkLost(t)
		// The invariant, on the engine's own state.
		bound := 0
		for _, ls := range m.leases {
			if m.alive(ls) {
				bound = max(bound, limitOf[ls])
			}
		}
		if held := len(m.b.InspectSemaphore("pool", maxLimit+1).Holders); held > bound {
			t.Fatalf("the engine holds %d leases of the semaphore; the live holders' largest limit is %d", held, bound)
		}
	}
	rt.Repeat(steps)
}

// TestSemaphoreModel: never more than N holders, under expiry and fake
// time; and with holders using different limits, never more than the
// largest of theirs.
func TestSemaphoreModel(t *testing.T) {
	inprocBackend := func(m *primModel) lockapi.Backend { return m.b }
	t.Run("one-limit", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) { checkSemaphore(rt, []int{3}, inprocBackend) })
	})
	t.Run("changing-limit", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) { checkSemaphore(rt, []int{1, 2, 4}, inprocBackend) })
	})
}

// earlyReclaim is a planted bug: the semaphore frees a slot whose lease has
// less than a second left before acquiring (an over-eager allowance for
// clock skew), while its holder still holds it.
type earlyReclaim struct {
	*inproc.Backend
	e *engine.Engine
}

func (r earlyReclaim) AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	for i := range limit {
		k := lockkeys.NewSemaphore(name).Slot(i)
		if v, d, ok := r.e.GetPTTL(k); ok && d < time.Second {
			r.e.CompareAndDelete(k, v)
		}
	}
	return r.Backend.AcquireSlot(ctx, name, limit, value, ttl)
}

// TestSemaphoreModelCatchesPlantedBug shows the semaphore model fails on a
// backend that reclaims slots early.
func TestSemaphoreModelCatchesPlantedBug(t *testing.T) {
	rec := expectRapidFailure(t)
	rapid.Check(rec, func(rt *rapid.T) {
		checkSemaphore(rt, []int{3}, func(m *primModel) lockapi.Backend { return earlyReclaim{m.b, m.e} })
	})
	if !rec.failed {
		t.Fatal("semaphore model passed over a backend that reclaims live slots")
	}
	t.Logf("caught: %.300s", rec.msg)
}

// checkRW drives two Clients' read-write locks named "doc" over newBackend
// (NoRetry Obtains, and a writer that marks itself waiting and then
// crashes) against a model: a read is granted exactly when no writer holds
// and no writer's mark is live, a write exactly when no writer and no
// reader holds. After every step the engine must never hold a writer
// beside another lease.
func checkRW(rt *rapid.T, newBackend func(m *primModel) lockapi.Backend) {
	m := newPrimModel()
	defer m.close()
	b := newBackend(m)
	cc := clock.NewMock()
	clients := []*lockapi.Client{lockapi.New(b, lockapi.Options{Clock: cc}), lockapi.New(b, lockapi.Options{Clock: cc})}
	var markUntil time.Time // the crashed writers' mark is live while now <= markUntil
	crashes := 0
	var lastFence int64
	ctx := context.Background()
	live := func() (readers, writers int) {
		for _, ls := range m.leases {
			if m.alive(ls) {
				if ls.l.Kind() == lockapi.KindWrite {
					writers++
				} else {
					readers++
				}
			}
		}
		return readers, writers
	}
	fenced := func(t *rapid.T, l *lockapi.Lock) {
		if f, _ := l.Fence(); f <= lastFence {
			t.Fatalf("%v lease fence %d after %d: not increasing", l.Kind(), f, lastFence)
		}
		lastFence, _ = l.Fence()
	}
	steps := m.actions(rt)
	steps["ObtainRead"] = func(t *rapid.T) {
		c := clients[rapid.IntRange(0, len(clients)-1).Draw(t, "client")]
		ttl := modelTTL.Draw(t, "ttl")
		_, writers := live()
		free := writers == 0 && m.now.After(markUntil)
		l, err := c.RWMutex("doc").ObtainRead(ctx, ttl, nil)
		if free != (err == nil) {
			t.Fatalf("ObtainRead = %v, model says free = %v (writers %d, mark live %v)", err, free, writers, !m.now.After(markUntil))
		}
		if err == nil {
			fenced(t, l)
			m.add(t, l, 0, ttl)
		}
	}
	steps["ObtainWrite"] = func(t *rapid.T) {
		c := clients[rapid.IntRange(0, len(clients)-1).Draw(t, "client")]
		ttl := modelTTL.Draw(t, "ttl")
		readers, writers := live()
		free := readers == 0 && writers == 0
		l, err := c.RWMutex("doc").ObtainWrite(ctx, ttl, nil)
		if free != (err == nil) {
			t.Fatalf("ObtainWrite = %v, model says free = %v (readers %d, writers %d)", err, free, readers, writers)
		}
		if err == nil {
			fenced(t, l)
			m.add(t, l, 0, ttl)
		}
	}
	steps["WriterWaitsAndCrashes"] = func(t *rapid.T) {
		readers, writers := live()
		if readers == 0 && writers == 0 {
			t.Skip("a writer would get the lock")
		}
		ttl := modelTTL.Draw(t, "ttl")
		crashes++
		_, _, ok, err := b.(lockapi.RWBackend).AcquireWrite(ctx, "doc", fmt.Sprint("crashed-writer-", crashes), ttl, true)
		if ok || err != nil {
			t.Fatalf("AcquireWrite of a held lock = %v, %v, want refused", ok, err)
		}
		if m.now.After(markUntil) { // no live mark: this one is set; else another's stays
			markUntil = m.now.Add(ttl)
		}
	}
	steps[""] = func(t *rapid.T) {
		m.checkLost(t)
		info := m.b.InspectRW("doc")
		if info.Writer != nil && len(info.Readers) > 0 {
			t.Fatalf("the engine holds a writer beside %d readers", len(info.Readers))
		}
	}
	rt.Repeat(steps)
}

// TestRWModel: never a writer beside anyone else; writers preferred; under
// expiry and fake time.
func TestRWModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		checkRW(rt, func(m *primModel) lockapi.Backend { return m.b })
	})
}

// lateWriter is a planted bug: readers treat a writer with less than a
// second left as gone and delete it.
type lateWriter struct {
	*inproc.Backend
	e *engine.Engine
}

func (w lateWriter) AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (string, int64, bool, error) {
	k := lockkeys.NewRW(name).Writer()
	if v, d, ok := w.e.GetPTTL(k); ok && d < time.Second {
		w.e.CompareAndDelete(k, v)
	}
	return w.Backend.AcquireRead(ctx, name, value, ttl)
}

// TestRWModelCatchesPlantedBug shows the read-write model fails on a
// backend whose readers evict a writer early.
func TestRWModelCatchesPlantedBug(t *testing.T) {
	rec := expectRapidFailure(t)
	rapid.Check(rec, func(rt *rapid.T) {
		checkRW(rt, func(m *primModel) lockapi.Backend { return lateWriter{m.b, m.e} })
	})
	if !rec.failed {
		t.Fatal("read-write model passed over a backend whose readers evict live writers")
	}
	t.Logf("caught: %.300s", rec.msg)
}
