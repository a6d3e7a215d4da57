package inproc_test

import (
	"bytes"
	"context"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	nxclock "github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// TestSharedMockNoHang: the engine and the lock client share one
// benbjohnson Mock (the clock a Client takes from its backend by default)
// while a goroutine advances it a millisecond at a time, and four waiters
// contend for one key with short TTLs, half of them with a watchdog, some
// releasing and some letting the lock expire. Mock.Add fires timers while
// holding the Mock's mutex, so code that reads the Mock while holding a lock
// of its own, resets a Mock timer, or calls Mock.After (which fires due
// timers itself and can fire one twice) can deadlock with it. The test
// runs a fixed number of acquisitions and fails, with every goroutine's
// stack, as soon as the Mock stops advancing for stall (real time), instead
// of hanging.
func TestSharedMockNoHang(t *testing.T) {
	const (
		waiters = 4
		rounds  = 300 // acquisitions per waiter
		stall   = 10 * time.Second
	)
	mock := clock.NewMock()
	mock.Set(locktest.Epoch)
	e := engine.New(engine.Options{Clock: mock})
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{}) // the engine's Mock

	stop := make(chan struct{})
	advancing := make(chan struct{})
	var adds atomic.Int64
	go func() {
		defer close(advancing)
		for {
			select {
			case <-stop:
				return
			default:
				mock.Add(time.Millisecond)
				adds.Add(1)
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	// Waiters block on the engine's watch (their retry window is an hour),
	// so every hand-over goes through the reaper's expiry of a short lock.
	retry := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}
	for w := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var l *lockapi.Lock
			defer func() {
				if l != nil {
					l.Release(context.Background()) // stops its monitor
				}
			}()
			for r := range rounds {
				opts := retry
				if r%2 == 1 {
					// A watchdog: its timers are created while Add runs.
					opts = &lockapi.ObtainOptions{Retry: retry.Retry, AutoRefresh: &lockapi.AutoRefresh{MaxExtensions: 2}}
				}
				var err error
				l, err = c.Obtain(context.Background(), "k", 3*time.Millisecond, opts)
				if err != nil {
					errs <- err
					return
				}
				l.Lost()
				if (w+r)%4 == 0 {
					// Hold for a millisecond of the Mock's time. (Not
					// mock.After: run from here it can fire another
					// goroutine's timer a second time while Add does.)
					<-nxclock.NewTimer(mock, time.Millisecond).C
					l.Release(context.Background()) // else it expires
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for last := int64(-1); ; {
		select {
		case <-done:
		case <-time.After(stall):
			if n := adds.Load(); n != last {
				last = n
				continue
			}
			var stacks bytes.Buffer
			pprof.Lookup("goroutine").WriteTo(&stacks, 2)
			// The engine is left open: closing it could hang on the deadlock.
			t.Fatalf("the shared Mock stopped advancing for %v after %d steps: hung\n%s", stall, last, stacks.String())
		}
		break
	}
	close(stop)
	<-advancing
	close(errs)
	for err := range errs {
		t.Errorf("Obtain = %v", err)
	}
	e.Close()
}
