package engine_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// gate is a load function that counts its calls and returns what it is
// told once released.
type gate struct {
	calls   atomic.Int32
	started chan context.Context // each call's ctx, as it starts
	release chan struct{}        // closed to let the calls return
	value   string
	err     error
}

func newGate(value string, err error) *gate {
	return &gate{started: make(chan context.Context, 16), release: make(chan struct{}), value: value, err: err}
}

func (g *gate) load(ctx context.Context, _ string) (string, error) {
	g.calls.Add(1)
	g.started <- ctx
	<-g.release
	return g.value, g.err
}

// result is one GetOrLoad call's outcome.
type result struct {
	v   string
	err error
}

// herd starts n GetOrLoad calls of key and returns their results' channel.
func herd(e *engine.Engine, ctx context.Context, n int, key string, ttl time.Duration, load engine.LoadFunc) chan result {
	out := make(chan result, n)
	for range n {
		go func() {
			v, err := e.GetOrLoad(ctx, key, ttl, load)
			out <- result{v, err}
		}()
	}
	return out
}

// TestGetOrLoadOnce: a thousand concurrent misses on one key run the load
// once, all get its value, and the value is stored with its TTL, counted
// from the store.
func TestGetOrLoadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		var mu sync.Mutex
		var events []string
		defer e.Listen(func(ev engine.Event) {
			mu.Lock()
			events = append(events, string(ev.Kind)+" "+ev.Key)
			mu.Unlock()
		})()
		g := newGate("loaded", nil)
		const n = 1000
		out := herd(e, context.Background(), n, "user:42", time.Minute, g.load)
		<-g.started
		synctest.Wait() // every caller waits for the load
		time.Sleep(10 * time.Second)
		close(g.release)
		for range n {
			if r := <-out; r.v != "loaded" || r.err != nil {
				t.Fatalf("GetOrLoad = %q, %v, want loaded, nil", r.v, r.err)
			}
		}
		if c := g.calls.Load(); c != 1 {
			t.Fatalf("%d concurrent misses ran the load %d times, want 1", n, c)
		}
		mu.Lock()
		if want := []string{"new user:42", "set user:42", "expire user:42"}; !slices.Equal(events, want) {
			t.Fatalf("the load reported %q, want %q", events, want)
		}
		mu.Unlock()
		if d, ok := e.PTTL("user:42"); !ok || d != time.Minute {
			t.Fatalf("PTTL after the load = %v, %v, want 1m (from the store)", d, ok)
		}
		if v, err := e.GetOrLoad(context.Background(), "user:42", time.Minute, g.load); v != "loaded" || err != nil || g.calls.Load() != 1 {
			t.Fatalf("GetOrLoad of the stored key = %q, %v with %d loads, want loaded, nil, 1", v, err, g.calls.Load())
		}
		time.Sleep(time.Minute + time.Millisecond) // expired: the next miss loads again
		g2 := newGate("again", nil)
		close(g2.release)
		if v, err := e.GetOrLoad(context.Background(), "user:42", 0, g2.load); v != "again" || err != nil {
			t.Fatalf("GetOrLoad after expiry = %q, %v, want again, nil", v, err)
		}
		if d, ok := e.PTTL("user:42"); !ok || d != engine.NoExpiry {
			t.Fatalf("PTTL of a value loaded with ttl 0 = %v, %v, want no expiry", d, ok)
		}
	})
}

// TestGetOrLoadError: a load's error reaches every waiter, nothing is
// stored, and the next call loads again.
func TestGetOrLoadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		boom := errors.New("database down")
		g := newGate("ignored", boom)
		out := herd(e, context.Background(), 50, "k", time.Minute, g.load)
		<-g.started
		synctest.Wait()
		close(g.release)
		for range 50 {
			if r := <-out; r.v != "" || !errors.Is(r.err, boom) {
				t.Fatalf("GetOrLoad = %q, %v, want the load's error", r.v, r.err)
			}
		}
		if e.Exists("k") {
			t.Fatal("a failed load stored a value")
		}
		g2 := newGate("ok", nil)
		close(g2.release)
		if v, err := e.GetOrLoad(context.Background(), "k", time.Minute, g2.load); v != "ok" || err != nil || g2.calls.Load() != 1 {
			t.Fatalf("GetOrLoad after a failed load = %q, %v (%d loads), want ok, nil, 1", v, err, g2.calls.Load())
		}
	})
}

// TestGetOrLoadCancelOne: a waiter's ctx ends its own wait only; the load
// goes on, uncancelled, for the others, and its value is stored.
func TestGetOrLoadCancelOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		g := newGate("v", nil)
		ctx, cancel := context.WithCancel(context.Background())
		first := herd(e, ctx, 1, "k", time.Minute, g.load) // starts the load
		lctx := <-g.started
		others := herd(e, context.Background(), 10, "k", time.Minute, g.load)
		synctest.Wait()
		cancel()
		if r := <-first; !errors.Is(r.err, context.Canceled) || r.v != "" {
			t.Fatalf("cancelled waiter = %q, %v, want context.Canceled", r.v, r.err)
		}
		if lctx.Err() != nil {
			t.Fatalf("the load's ctx ended with its first caller's: %v", lctx.Err())
		}
		close(g.release)
		for range 10 {
			if r := <-others; r.v != "v" || r.err != nil {
				t.Fatalf("other waiter = %q, %v, want v, nil", r.v, r.err)
			}
		}
		if v, ok := e.Get("k"); v != "v" || !ok || g.calls.Load() != 1 {
			t.Fatalf("Get = %q, %v after %d loads, want v stored by one load", v, ok, g.calls.Load())
		}
		if r := <-herd(e, ctx, 1, "k", time.Minute, g.load); r.v != "v" || r.err != nil {
			t.Fatalf("GetOrLoad of a present key with a done ctx = %q, %v, want the value", r.v, r.err)
		}
		if _, err := e.GetOrLoad(ctx, "absent", time.Minute, g.load); !errors.Is(err, context.Canceled) || g.calls.Load() != 1 {
			t.Fatalf("GetOrLoad of an absent key with a done ctx = %v (%d loads), want context.Canceled and no load", err, g.calls.Load())
		}
	})
}

// TestGetOrLoadAllGiveUp: when every waiter gives up, the load's ctx is
// cancelled, its result is discarded, and the next call starts a new load.
func TestGetOrLoadAllGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		g := newGate("late", nil)
		out := herd(e, ctx, 3, "k", time.Minute, g.load)
		lctx := <-g.started
		for range 3 {
			if r := <-out; !errors.Is(r.err, context.DeadlineExceeded) {
				t.Fatalf("waiter = %q, %v, want context.DeadlineExceeded", r.v, r.err)
			}
		}
		<-lctx.Done() // cancelled once nobody waits
		g2 := newGate("fresh", nil)
		next := herd(e, context.Background(), 1, "k", time.Minute, g2.load)
		<-g2.started
		close(g.release) // the abandoned load returns now: discarded
		synctest.Wait()
		if e.Exists("k") {
			t.Fatal("an abandoned load stored its value")
		}
		close(g2.release)
		if r := <-next; r.v != "fresh" || r.err != nil {
			t.Fatalf("GetOrLoad after an abandoned load = %q, %v, want fresh, nil", r.v, r.err)
		}
	})
}

// TestGetOrLoadRaces: what the engine's other operations do to a load in
// flight: a write wins and is what the waiters get; a delete or an expiry
// of the absent key changes nothing, so the loaded value is stored.
func TestGetOrLoadRaces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during func(e *engine.Engine)
		want   string
		ttl    time.Duration // of the stored key
	}{
		{"Set", func(e *engine.Engine) { e.Set("k", "written") }, "written", engine.NoExpiry},
		{"SetPX then Del", func(e *engine.Engine) { e.SetPX("k", "written", time.Hour); e.Del("k") }, "loaded", time.Minute},
		{"Del of the absent key", func(e *engine.Engine) { e.Del("k") }, "loaded", time.Minute},
		{"SetPX that expires", func(e *engine.Engine) { e.SetPX("k", "written", time.Second); time.Sleep(2 * time.Second) }, "loaded", time.Minute},
		{"Flush", func(e *engine.Engine) { e.Flush() }, "loaded", time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := engine.New(engine.Options{})
				defer e.Close()
				g := newGate("loaded", nil)
				out := herd(e, context.Background(), 3, "k", time.Minute, g.load)
				<-g.started
				synctest.Wait()
				tc.during(e)
				close(g.release)
				for range 3 {
					if r := <-out; r.v != tc.want || r.err != nil {
						t.Fatalf("GetOrLoad = %q, %v, want %q", r.v, r.err, tc.want)
					}
				}
				if v, d, ok := e.GetPTTL("k"); v != tc.want || d != tc.ttl || !ok {
					t.Fatalf("stored %q, %v, %v; want %q with TTL %v", v, d, ok, tc.want, tc.ttl)
				}
				if err := engine.Verify(e); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestGetOrLoadPanic: a load that panics, or exits its goroutine, is an
// ErrLoadPanic for every waiter; the process lives on and nothing is
// stored.
func TestGetOrLoadPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		load engine.LoadFunc
	}{
		{"panic", func(context.Context, string) (string, error) { panic("loader bug") }},
		{"Goexit", func(context.Context, string) (string, error) { runtime.Goexit(); return "", nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := engine.New(engine.Options{})
			defer e.Close()
			for range 2 {
				if _, err := e.GetOrLoad(context.Background(), "k", time.Minute, tc.load); !errors.Is(err, engine.ErrLoadPanic) {
					t.Fatalf("GetOrLoad = %v, want ErrLoadPanic", err)
				}
			}
			if e.Exists("k") {
				t.Fatal("a load that panicked stored a value")
			}
		})
	}
}

// TestGetOrLoadInvalidTTL: a negative ttl is refused before any load; a
// deadline beyond the engine's range reaches every waiter as
// ErrInvalidTTL, with nothing stored.
func TestGetOrLoadInvalidTTL(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	var calls atomic.Int32
	load := func(context.Context, string) (string, error) { calls.Add(1); return "v", nil }
	if _, err := e.GetOrLoad(context.Background(), "k", -time.Second, load); !errors.Is(err, engine.ErrInvalidTTL) || calls.Load() != 0 {
		t.Fatalf("GetOrLoad with ttl < 0 = %v after %d loads, want ErrInvalidTTL and none", err, calls.Load())
	}
	if _, err := e.GetOrLoad(context.Background(), "k", time.Duration(1<<63-1), load); !errors.Is(err, engine.ErrInvalidTTL) || e.Exists("k") {
		t.Fatalf("GetOrLoad with a deadline past 2262 = %v, stored %v; want ErrInvalidTTL, nothing", err, e.Exists("k"))
	}
}

// TestGetOrLoadKeys: loads of different keys run apart, each once, and
// waiters of one key never get another's value.
func TestGetOrLoadKeys(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	var mu sync.Mutex
	calls := map[string]int{}
	load := func(_ context.Context, key string) (string, error) {
		mu.Lock()
		calls[key]++
		mu.Unlock()
		return "value of " + key, nil
	}
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			key := string(rune('a' + i%8))
			if v, err := e.GetOrLoad(context.Background(), key, 0, load); v != "value of "+key || err != nil {
				t.Errorf("GetOrLoad(%q) = %q, %v", key, v, err)
			}
		})
	}
	wg.Wait()
	for k, n := range calls {
		if n != 1 {
			t.Errorf("key %q loaded %d times, want 1 (it stays stored)", k, n)
		}
	}
	if len(calls) != 8 {
		t.Errorf("%d keys loaded, want 8", len(calls))
	}
	if err := engine.Verify(e); err != nil {
		t.Fatal(err)
	}
}
