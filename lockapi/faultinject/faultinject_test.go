package faultinject_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/goleak"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/faultinject"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newInproc(t *testing.T) (*inproc.Backend, *engine.Engine, *clock.Mock) {
	t.Helper()
	c := clock.NewMock()
	c.Set(locktest.Epoch)
	e := engine.New(engine.Options{Clock: c})
	t.Cleanup(func() { e.Close() })
	return inproc.New(e, inproc.Options{}), e, c
}

// TestConformance shows the wrapper without faults is a faithful Backend,
// with and without Watch passed through.
func TestConformance(t *testing.T) {
	for _, watch := range []bool{true, false} {
		name := "Watcher"
		if !watch {
			name = "Backend"
		}
		t.Run(name, func(t *testing.T) {
			locktest.Run(t, func(t *testing.T) locktest.Env {
				b, e, c := newInproc(t)
				env := locktest.Env{Clock: c, Advance: func(d time.Duration) { c.Add(d); e.Reap() }, Fencing: true}
				if watch {
					env.Backend, env.Instant = faultinject.NewWatcher(b, faultinject.Options{}), true
				} else {
					env.Backend = faultinject.New(b, faultinject.Options{})
				}
				return env
			})
		})
	}
}

func TestNextN(t *testing.T) {
	b, _, _ := newInproc(t)
	f := faultinject.New(b, faultinject.Options{})
	ctx := context.Background()
	boom := errors.New("boom")
	f.Inject(faultinject.Acquire, faultinject.Fault{Err: boom, Next: 2})
	for i := 0; i < 2; i++ {
		if _, ok, err := f.Acquire(ctx, "k", "v", time.Minute); ok || !errors.Is(err, boom) {
			t.Fatalf("Acquire #%d = %v, %v, want false, boom", i+1, ok, err)
		}
	}
	if _, ok, err := f.Acquire(ctx, "k", "v", time.Minute); !ok || err != nil {
		t.Fatalf("Acquire #3 (fault used up) = %v, %v, want true, nil", ok, err)
	}
	if got := f.Calls(faultinject.Acquire); got != 3 {
		t.Errorf("Calls(Acquire) = %d, want 3", got)
	}
	if got := f.Hits(faultinject.Acquire); got != 2 {
		t.Errorf("Hits(Acquire) = %d, want 2", got)
	}
	// Errors without LostReply never reach the backend.
	f.Inject(faultinject.Release, faultinject.Fault{})
	if ok, err := f.Release(ctx, "k", "v"); ok || !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("Release with a fault = %v, %v, want false, ErrInjected", ok, err)
	}
	if _, ok, _ := b.PTTL(ctx, "k", "v"); !ok {
		t.Fatal("a faulted Release without LostReply deleted the key")
	}
	f.Clear()
	if ok, err := f.Release(ctx, "k", "v"); !ok || err != nil {
		t.Fatalf("Release after Clear = %v, %v, want true, nil", ok, err)
	}
}

func TestLostReply(t *testing.T) {
	b, _, _ := newInproc(t)
	f := faultinject.New(b, faultinject.Options{})
	ctx := context.Background()
	f.Inject(faultinject.Acquire, faultinject.Fault{LostReply: true, Next: 1})
	if _, ok, err := f.Acquire(ctx, "k", "v", time.Minute); ok || !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("Acquire with a lost reply = %v, %v, want false, ErrInjected", ok, err)
	}
	if _, ok, _ := b.PTTL(ctx, "k", "v"); !ok {
		t.Fatal("Acquire with a lost reply was not applied")
	}
}

func TestProbability(t *testing.T) {
	b, _, _ := newInproc(t)
	f := faultinject.New(b, faultinject.Options{Seed: 7})
	f.Inject(faultinject.PTTL, faultinject.Fault{Probability: 0.25})
	const n = 4000
	for i := 0; i < n; i++ {
		f.PTTL(context.Background(), "k", "v")
	}
	// 0.25 * 4000 = 1000, standard deviation ~27: +-150 is over 5 sigma.
	if got := f.Hits(faultinject.PTTL); got < 850 || got > 1150 {
		t.Errorf("Hits(PTTL) with Probability 0.25 over %d calls = %d, want about 1000", n, got)
	}
}

func TestLatency(t *testing.T) {
	b, _, c := newInproc(t)
	f := faultinject.New(b, faultinject.Options{Clock: c})
	f.Inject(faultinject.Acquire, faultinject.Fault{Latency: 5 * time.Second, NoError: true})
	done := make(chan error, 1)
	go func() {
		_, ok, err := f.Acquire(context.Background(), "k", "v", time.Minute)
		if err == nil && !ok {
			err = errors.New("not acquired")
		}
		done <- err
	}()
	var err error
	for i := 0; ; i++ {
		select {
		case err = <-done:
		default:
			if i == 100 {
				t.Fatal("Acquire with 5s latency still blocked after 100s of mock time")
			}
			c.Add(time.Second)
			continue
		}
		break
	}
	if err != nil {
		t.Fatalf("Acquire after latency = %v, want nil", err)
	}

	// ctx cuts latency short, and the backend is not reached.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _, err := f.Acquire(ctx, "k2", "v", time.Minute)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire canceled during latency = %v, want context.Canceled", err)
	}
	if _, ok, _ := b.PTTL(context.Background(), "k2", "v"); ok {
		t.Fatal("Acquire canceled during latency reached the backend")
	}
}
