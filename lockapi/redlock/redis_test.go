package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
	"github.com/nxkv/nxkv/lockapi/redlock"
)

// counter counts the commands a go-redis client sends.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// cluster is n real redis-servers, each behind its own go-redis client and
// goredis Backend.
type cluster struct {
	srvs     []*redistest.Server
	backends []lockapi.Backend
	counters []*counter
	names    []string
}

func startCluster(t testing.TB, n int) *cluster {
	t.Helper()
	cl := &cluster{}
	for i := 0; i < n; i++ {
		srv := redistest.Start(t)
		// Redlock retries by itself; go-redis retries (of commands, and of
		// dials, 100ms apart) against a killed server would only burn the
		// node timeout.
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true, MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { c.Close() })
		cnt := &counter{}
		c.AddHook(cnt)
		cl.srvs = append(cl.srvs, srv)
		cl.backends = append(cl.backends, goredis.New(c, goredis.Options{Native: goredis.NativeOff}))
		cl.counters = append(cl.counters, cnt)
		cl.names = append(cl.names, srv.Addr)
	}
	return cl
}

func (cl *cluster) redlock(t testing.TB, opts redlock.Options) *redlock.Redlock {
	t.Helper()
	opts.Names, opts.NodeTimeout = cl.names, 200*time.Millisecond
	rl, err := redlock.New(cl.backends, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}

// TestRealServersKill runs lockapi.Client workers over a Redlock of 3 and 5
// real redis-servers, SIGKILLs one server mid-run, and checks that mutual
// exclusion held (a counter updated non-atomically inside the critical
// section loses no update, and nobody ever finds another holder inside) and
// that the workers kept making progress with the remaining majority. Then it
// kills servers until only a minority is left and checks that Obtain fails
// with an *redlock.Error naming the dead servers.
func TestRealServersKill(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d nodes", n), func(t *testing.T) {
			cl := startCluster(t, n)
			rl := cl.redlock(t, redlock.Options{Tries: 3, TryDelayMin: time.Millisecond, TryDelayMax: 5 * time.Millisecond})
			client := lockapi.New(rl, lockapi.Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			var (
				m        = newExclusion()
				wg       sync.WaitGroup
				stop     = make(chan struct{})
				retry    = &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Millisecond), 5000)}
				progress = m.progress
			)
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						l, err := client.Obtain(ctx, "shared", 2*time.Second, retry)
						if err != nil {
							if ctx.Err() != nil {
								return
							}
							if errors.Is(err, lockapi.ErrNotObtained) {
								continue // includes a round that failed on the kill
							}
							t.Errorf("Obtain: %v", err)
							return
						}
						m.section(nil)
						// A lock held on a bare majority that included the
						// killed server cannot be confirmed released: an
						// *redlock.Error, the lock then expires by itself.
						if err := l.Release(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, redlock.ErrNoQuorum) {
							t.Errorf("Release: %v", err)
						}
					}
				}()
			}
			successes := &m.sections
			waitFor := func(target int64) {
				for successes.Load() < target {
					select {
					case <-progress:
					case <-ctx.Done():
						t.Errorf("only %d critical sections, want %d", successes.Load(), target)
						return
					}
				}
			}
			t0 := time.Now()
			waitFor(100)
			t.Logf("before kill: %v", time.Since(t0))
			t0 = time.Now()
			cl.srvs[0].Kill()
			atKill := successes.Load()
			waitFor(atKill + 100)
			t.Logf("after kill: %v", time.Since(t0))
			close(stop)
			wg.Wait()
			if err := m.check(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d critical sections, %d of them after killing %s", successes.Load(), successes.Load()-atKill, cl.names[0])

			// Kill until only a minority is left.
			var dead []string
			for i := 0; n-i >= rl.Quorum(); i++ {
				cl.srvs[i].Kill()
				dead = append(dead, cl.names[i])
			}
			_, err := client.Obtain(context.Background(), "shared", 2*time.Second, nil)
			var rerr *redlock.Error
			if !errors.As(err, &rerr) || !errors.Is(err, redlock.ErrNoQuorum) {
				t.Fatalf("Obtain with %d of %d servers dead = %v, want an *redlock.Error wrapping ErrNoQuorum", len(dead), n, err)
			}
			if got := rerr.FailedNodes(); !slices.Equal(got, dead) {
				t.Fatalf("failed nodes = %v, want the dead servers %v", got, dead)
			}
		})
	}
}

// exclusion checks mutual exclusion from inside critical sections: a
// section that finds another one running is a violation, and a counter
// updated by a non-atomic read-modify-write loses updates when sections
// overlap.
type exclusion struct {
	inside, shared, sections, violations atomic.Int64
	progress                             chan struct{} // nudged after each section
}

func newExclusion() *exclusion { return &exclusion{progress: make(chan struct{}, 1)} }

// section runs one critical section; pause, if not nil, runs between the
// counter's read and its write.
func (m *exclusion) section(pause func()) {
	if m.inside.Add(1) != 1 {
		m.violations.Add(1)
	}
	v := m.shared.Load()
	if pause != nil {
		pause()
	}
	m.shared.Store(v + 1)
	m.inside.Add(-1)
	m.sections.Add(1)
	select {
	case m.progress <- struct{}{}:
	default:
	}
}

// check reports any violation seen.
func (m *exclusion) check() error {
	if n, got, want := m.violations.Load(), m.shared.Load(), m.sections.Load(); n > 0 || got != want {
		return fmt.Errorf("mutual exclusion broken: %d overlapping sections, counter %d after %d sections", n, got, want)
	}
	return nil
}

// TestExclusionCatchesOverlap plants the bug the exclusion checker exists
// for: two critical sections running at once, with no lock. Each pauses
// until the other is inside, so the overlap is certain.
func TestExclusionCatchesOverlap(t *testing.T) {
	m := newExclusion()
	var both sync.WaitGroup
	both.Add(2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.section(func() { both.Done(); both.Wait() })
		}()
	}
	wg.Wait()
	if err := m.check(); err == nil {
		t.Fatalf("check() = nil after two overlapping sections, want an error")
	}
	if m.violations.Load() == 0 || m.shared.Load() != 1 {
		t.Fatalf("violations, counter = %d, %d, want > 0, 1 (a lost update)", m.violations.Load(), m.shared.Load())
	}
}

// TestRealServersOneRound shows that Acquire, Refresh, PTTL and Release each
// cost exactly one command per node (one parallel round), once the scripts
// are cached.
func TestRealServersOneRound(t *testing.T) {
	cl := startCluster(t, 3)
	rl := cl.redlock(t, redlock.Options{})
	ctx := context.Background()
	// Warm the script caches.
	rl.Acquire(ctx, "warm", "v", time.Second)
	rl.Refresh(ctx, "warm", "v", time.Second)
	rl.PTTL(ctx, "warm", "v")
	rl.Release(ctx, "warm", "v")
	steps := []struct {
		name string
		call func() (bool, error)
	}{
		{"Acquire", func() (bool, error) { _, ok, err := rl.Acquire(ctx, "k", "v", 10*time.Second); return ok, err }},
		{"Refresh", func() (bool, error) { return rl.Refresh(ctx, "k", "v", 10*time.Second) }},
		{"PTTL", func() (bool, error) { _, ok, err := rl.PTTL(ctx, "k", "v"); return ok, err }},
		{"Release", func() (bool, error) { return rl.Release(ctx, "k", "v") }},
	}
	for _, s := range steps {
		before := make([]int64, len(cl.counters))
		for i, c := range cl.counters {
			before[i] = c.n.Load()
		}
		if ok, err := s.call(); !ok || err != nil {
			t.Fatalf("%s = %v, %v, want true, nil", s.name, ok, err)
		}
		for i, c := range cl.counters {
			if d := c.n.Load() - before[i]; d != 1 {
				t.Errorf("%s sent %d commands to node %d, want 1", s.name, d, i)
			}
		}
	}
}
