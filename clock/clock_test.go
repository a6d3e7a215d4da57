package clock_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	bbclock "github.com/benbjohnson/clock"
	"go.uber.org/goleak"

	"github.com/nxkv/nxkv/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// epoch is a realistic fake "now".
var epoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestIsReal(t *testing.T) {
	tests := []struct {
		name string
		c    clock.Clock
		want bool
	}{
		{"nil", nil, true},
		{"benbjohnson real", bbclock.New(), true},
		{"benbjohnson mock", bbclock.NewMock(), false},
	}
	for _, tt := range tests {
		if got := clock.IsReal(tt.c); got != tt.want {
			t.Errorf("IsReal(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMonotonicStepBack: after an injected clock steps back, the time
// handed out stands still at the latest reading until the clock passes it.
func TestMonotonicStepBack(t *testing.T) {
	m := bbclock.NewMock()
	m.Set(epoch)
	tm := clock.NewTime(m)
	if got, want := tm.Now(), epoch; !got.Equal(want) {
		t.Fatalf("Now() = %v, want %v", got, want)
	}
	m.Add(time.Second)
	if got, want := tm.Now(), epoch.Add(time.Second); !got.Equal(want) {
		t.Fatalf("Now() after Add = %v, want %v", got, want)
	}
	m.Set(epoch) // one second back
	if got, want := tm.Now(), epoch.Add(time.Second); !got.Equal(want) {
		t.Fatalf("Now() after a step back = %v, want it held at %v", got, want)
	}
	m.Add(1500 * time.Millisecond)
	if got, want := tm.Now(), epoch.Add(1500*time.Millisecond); !got.Equal(want) {
		t.Fatalf("Now() once the clock passed the latest reading = %v, want %v", got, want)
	}
}

// TestRealTimeSynctest: the fast real clock follows virtual time in a
// synctest bubble.
func TestRealTimeSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := clock.NewTime(nil)
		start := tm.Now()
		time.Sleep(time.Hour)
		if got := tm.Now().Sub(start); got != time.Hour {
			t.Fatalf("elapsed = %v, want 1h", got)
		}
		tt := tm.NewTimer(time.Minute)
		defer tt.Stop()
		before := time.Now()
		<-tt.C
		if got := time.Since(before); got != time.Minute {
			t.Fatalf("timer fired after %v, want 1m", got)
		}
	})
}

func TestTimerMock(t *testing.T) {
	m := bbclock.NewMock()
	m.Set(epoch)
	tt := clock.NewTimer(m, time.Second)
	defer tt.Stop()
	select {
	case <-tt.C:
		t.Fatal("timer fired before the clock moved")
	default:
	}
	m.Add(time.Second)
	// The Mock runs the callback on its own goroutine after Add: delivery
	// is asynchronous. The bound only turns a lost wake-up into a failure.
	select {
	case got := <-tt.C:
		if got.Before(epoch.Add(time.Second)) {
			t.Fatalf("timer fired at %v, want at or after %v", got, epoch.Add(time.Second))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("timer did not fire when the clock reached it")
	}
	// Stop after firing is harmless; a stopped timer never fires.
	tt.Stop()
	st := clock.NewTimer(m, time.Second)
	st.Stop()
	m.Add(2 * time.Second)
	select {
	case <-st.C:
		t.Fatal("a stopped timer fired")
	default:
	}
}

// TestMockAddRacingTimers: timers made from other goroutines while one
// goroutine advances a benbjohnson Mock never wedge the Mock. Made with
// Mock.After, two goroutines can fire one timer twice and the second send
// blocks under the Mock's mutex; NewTimer uses AfterFunc instead. The bound
// only turns a hang into a failure.
func TestMockAddRacingTimers(t *testing.T) {
	m := bbclock.NewMock()
	m.Set(epoch)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				m.Add(time.Millisecond)
			}
		}
	}()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := range 3000 {
			tt := clock.NewTimer(m, time.Duration(i%3)*time.Millisecond)
			m.Now()
			if i%2 == 0 {
				tt.Stop()
			}
		}
	}()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("timers made while another goroutine advanced the Mock wedged it")
	}
	close(stop)
	<-done
}

func TestWithTimeoutMock(t *testing.T) {
	m := bbclock.NewMock()
	m.Set(epoch)
	ctx, cancel := clock.WithTimeout(context.Background(), m, time.Second)
	defer cancel()
	m.Add(999 * time.Millisecond)
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err() before the timeout = %v, want nil", err)
	}
	m.Add(time.Millisecond)
	<-ctx.Done() // the goroutine cancels once it sees the After fire
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() at the timeout = %v, want DeadlineExceeded", err)
	}

	// cancel before the timeout: Canceled, and the goroutine exits (goleak).
	ctx2, cancel2 := clock.WithTimeout(context.Background(), m, time.Hour)
	cancel2()
	if err := ctx2.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after cancel = %v, want Canceled", err)
	}

	// A parent's end ends the child with the parent's error.
	parent, pcancel := context.WithCancel(context.Background())
	ctx3, cancel3 := clock.WithTimeout(parent, m, time.Hour)
	defer cancel3()
	pcancel()
	<-ctx3.Done()
	if err := ctx3.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after the parent ended = %v, want Canceled", err)
	}

	ctx4, cancel4 := clock.WithTimeout(context.Background(), m, 0)
	defer cancel4()
	if err := ctx4.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() with timeout 0 = %v, want DeadlineExceeded", err)
	}
}
