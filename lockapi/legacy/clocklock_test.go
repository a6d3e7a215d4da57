package legacy

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// gateClock is a Mock whose Now, once armed, signals blocked and waits for
// gate: a clock stuck on its own mutex.
type gateClock struct {
	*clock.Mock
	armed   atomic.Bool
	blocked chan struct{}
	gate    chan struct{}
}

func (g *gateClock) Now() time.Time {
	if g.armed.CompareAndSwap(true, false) {
		g.blocked <- struct{}{}
		<-g.gate
	}
	return g.Mock.Now()
}

// TestClockNotReadUnderLock: Release, Refresh and TTL read the clock
// before taking the Lock's mutex, so a clock that blocks does not block
// other calls on the Lock (Value) behind it.
func TestClockNotReadUnderLock(t *testing.T) {
	for _, op := range []string{"Release", "Refresh", "TTL"} {
		t.Run(op, func(t *testing.T) {
			g := &gateClock{Mock: clock.NewMock(), blocked: make(chan struct{}), gate: make(chan struct{})}
			g.Set(epoch)
			l, _, _ := newTest(t, Options{Clock: g})
			lk, err := l.TryObtain(context.Background(), "k")
			if err != nil {
				t.Fatal(err)
			}
			g.armed.Store(true)
			done := make(chan struct{})
			go func() {
				defer close(done)
				switch op {
				case "Release":
					lk.Release(context.Background())
				case "Refresh":
					lk.Refresh(context.Background())
				case "TTL":
					lk.TTL()
				}
			}()
			<-g.blocked // op is inside the clock's Now
			value := make(chan string, 1)
			go func() { value <- lk.Value() }()
			select {
			case <-value:
				close(g.gate)
			case <-time.After(5 * time.Second):
				t.Errorf("%s holds the Lock's mutex while reading the clock: Value blocked", op)
				close(g.gate)
				<-value
			}
			<-done
		})
	}
}
