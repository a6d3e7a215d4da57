package lockapi_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// modelLock is one Lock in the model check.
type modelLock struct {
	l        *lockapi.Lock
	key      string
	lost     <-chan struct{} // nil if Lost was not called
	released bool            // its Release succeeded
	gone     bool            // no longer held: released, expired or taken
}

// lockModel is the reference: per key, which lock holds it until when.
type lockModel struct {
	now       time.Time
	holder    map[string]int // index into locks, -1 for none
	deadline  map[string]time.Time
	lastFence map[string]int64
	locks     []*modelLock
}

// held reports whether lock i holds its key at the model's now: the key is
// alive while now <= deadline.
func (m *lockModel) held(i int) bool {
	ml := m.locks[i]
	return !ml.released && m.holder[ml.key] == i && !m.now.After(m.deadline[ml.key])
}

func (m *lockModel) free(key string) bool {
	return m.holder[key] < 0 || m.now.After(m.deadline[key])
}

// checkAgainstModel drives two Clients over newBackend(engine) with random
// Obtain, Release, Refresh, TTL and time advances, and compares every
// result, fence and Lost signal with lockModel.
func checkAgainstModel(rt *rapid.T, newBackend func(e *engine.Engine) lockapi.Backend) {
	ec := clock.NewMock()
	ec.Set(epoch)
	e := engine.New(engine.Options{Clock: ec})
	defer e.Close()
	b := newBackend(e)
	cc := clock.NewMock() // client clock: NoRetry never waits
	clients := []*lockapi.Client{lockapi.New(b, lockapi.Options{Clock: cc}), lockapi.New(b, lockapi.Options{Clock: cc})}
	keys := []string{"a", "b"}
	m := &lockModel{now: epoch, holder: map[string]int{}, deadline: map[string]time.Time{}, lastFence: map[string]int64{}}
	for _, k := range keys {
		m.holder[k] = -1
	}
	ctx := context.Background()
	defer func() {
		for i, ml := range m.locks {
			if m.held(i) {
				ml.l.Release(ctx) // stops its loss monitor
			}
		}
	}()
	pickLock := func(t *rapid.T) (int, *modelLock) {
		if len(m.locks) == 0 {
			t.Skip("no locks yet")
		}
		i := rapid.IntRange(0, len(m.locks)-1).Draw(t, "lock")
		return i, m.locks[i]
	}
	ttlGen := rapid.Custom(func(t *rapid.T) time.Duration {
		return time.Duration(rapid.IntRange(1, 3000).Draw(t, "ttl_ms")) * time.Millisecond
	})
	markGone := func(i int) {
		if ml := m.locks[i]; !ml.gone && !m.held(i) {
			ml.gone = true
		}
	}
	rt.Repeat(map[string]func(*rapid.T){
		"Obtain": func(t *rapid.T) {
			k := rapid.SampledFrom(keys).Draw(t, "key")
			c := rapid.SampledFrom(clients).Draw(t, "client")
			ttl := ttlGen.Draw(t, "ttl")
			free := m.free(k)
			l, err := c.Obtain(ctx, k, ttl, nil)
			if free != (err == nil) {
				t.Fatalf("Obtain(%s) = %v, model says free = %v", k, err, free)
			}
			if err != nil {
				if !errors.Is(err, lockapi.ErrNotObtained) {
					t.Fatalf("Obtain(%s) of a held key = %v, want ErrNotObtained", k, err)
				}
				return
			}
			f, _ := l.Fence()
			if f <= m.lastFence[k] {
				t.Fatalf("Obtain(%s) fence %d, previous %d: not increasing", k, f, m.lastFence[k])
			}
			m.lastFence[k] = f
			ml := &modelLock{l: l, key: k}
			// Watching for loss makes the Client refuse calls on a lock it
			// knows lost, so leave some locks unwatched: their calls reach
			// the backend.
			if rapid.Bool().Draw(t, "watch") {
				ml.lost = l.Lost()
			}
			m.locks = append(m.locks, ml)
			m.holder[k] = len(m.locks) - 1
			m.deadline[k] = m.now.Add(ttl)
		},
		"Release": func(t *rapid.T) {
			i, ml := pickLock(t)
			held := m.held(i)
			err := ml.l.Release(ctx)
			if held != (err == nil) || (err != nil && !errors.Is(err, lockapi.ErrNotHeld)) {
				t.Fatalf("Release(lock %d on %s) = %v, model says held = %v", i, ml.key, err, held)
			}
			if held {
				ml.released, ml.gone = true, true
				m.holder[ml.key] = -1
			}
			markGone(i)
		},
		"Refresh": func(t *rapid.T) {
			i, ml := pickLock(t)
			ttl := ttlGen.Draw(t, "ttl")
			held := m.held(i)
			err := ml.l.Refresh(ctx, ttl)
			if held != (err == nil) || (err != nil && !errors.Is(err, lockapi.ErrNotHeld)) {
				t.Fatalf("Refresh(lock %d on %s) = %v, model says held = %v", i, ml.key, err, held)
			}
			if held {
				m.deadline[ml.key] = m.now.Add(ttl)
			}
			markGone(i)
		},
		"TTL": func(t *rapid.T) {
			i, ml := pickLock(t)
			held := m.held(i)
			d, err := ml.l.TTL(ctx)
			if held != (err == nil) {
				t.Fatalf("TTL(lock %d on %s) = %v, %v, model says held = %v", i, ml.key, d, err, held)
			}
			if held && d != m.deadline[ml.key].Sub(m.now) {
				t.Fatalf("TTL(lock %d) = %v, model says %v", i, d, m.deadline[ml.key].Sub(m.now))
			}
			markGone(i)
		},
		"Advance": func(t *rapid.T) {
			d := time.Duration(rapid.IntRange(0, 2000).Draw(t, "advance_ms")) * time.Millisecond
			ec.Add(d)
			e.Reap()
			m.now = m.now.Add(d)
			for i := range m.locks {
				markGone(i)
			}
		},
		"": func(t *rapid.T) {
			for i, ml := range m.locks {
				switch {
				case ml.lost == nil:
				case ml.gone && !ml.released:
					select {
					case <-ml.lost:
					case <-time.After(guard):
						t.Fatalf("lock %d on %s is gone but Lost is open", i, ml.key)
					}
				case isClosed(ml.lost):
					t.Fatalf("lock %d on %s: Lost closed (Err %v), model says held = %v, released = %v", i, ml.key, ml.l.Err(), m.held(i), ml.released)
				}
			}
		},
	})
}

// TestModel checks the Client over the in-process backend against the
// model.
func TestModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		checkAgainstModel(rt, func(e *engine.Engine) lockapi.Backend { return inproc.New(e, inproc.Options{}) })
	})
}

// refreshAnyway is a planted bug: Refresh extends the key whoever holds it.
type refreshAnyway struct {
	*inproc.Backend
	e *engine.Engine
}

func (r refreshAnyway) Refresh(_ context.Context, key, _ string, ttl time.Duration) (bool, error) {
	return r.e.PExpire(key, ttl)
}

// recordingTB is a rapid.TB that records failures instead of failing the
// test, to show that a check fails.
type recordingTB struct {
	*testing.T
	failed bool
	msg    string
}

func (r *recordingTB) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recordingTB) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recordingTB) Fatal(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recordingTB) Fail()                             { r.failed = true }
func (r *recordingTB) FailNow()                          { r.failed = true }
func (r *recordingTB) Failed() bool                      { return r.failed }
func (r *recordingTB) Logf(string, ...any)               {}
func (r *recordingTB) Log(...any)                        {}
func (r *recordingTB) fail(msg string) {
	if !r.failed {
		r.msg = msg
	}
	r.failed = true
}

// expectRapidFailure prepares a rapid check that must fail: the failure must
// not leave a fail file behind nor spend rapid's default 30s shrinking it;
// the search stops at the first failure, so a large budget of checks costs
// only when the bug hides. Pass the returned TB to rapid.Check.
func expectRapidFailure(t *testing.T) *recordingTB {
	t.Helper()
	for name, value := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "500ms", "rapid.checks": "2000"} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(name, old) })
	}
	return &recordingTB{T: t}
}

// TestModelCatchesPlantedBug shows the model check fails on a backend
// whose Refresh extends another holder's lock.
func TestModelCatchesPlantedBug(t *testing.T) {
	rec := expectRapidFailure(t)
	rapid.Check(rec, func(rt *rapid.T) {
		checkAgainstModel(rt, func(e *engine.Engine) lockapi.Backend { return refreshAnyway{inproc.New(e, inproc.Options{}), e} })
	})
	if !rec.failed {
		t.Fatal("model check passed over a backend whose Refresh ignores the token")
	}
	t.Logf("caught: %.300s", rec.msg)
}
