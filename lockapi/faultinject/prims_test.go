package faultinject_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// plainOnly hides every primitive of a backend.
type plainOnly struct{ lockapi.Backend }

// TestPrimitiveFaults: a primitive's calls are faulted by the rule of the
// operation they resemble, and a primitive the wrapped backend lacks fails
// with errors.ErrUnsupported.
func TestPrimitiveFaults(t *testing.T) {
	b, _, _ := newInproc(t)
	fi := faultinject.New(b, faultinject.Options{})
	c := lockapi.New(fi, lockapi.Options{})
	ctx := context.Background()
	sem := c.Semaphore("pool", 2)

	fi.Inject(faultinject.Acquire, faultinject.Fault{Next: 1})
	if _, err := sem.Obtain(ctx, time.Minute, nil); !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("semaphore Obtain with an Acquire fault = %v, want the injected error", err)
	}
	l, err := sem.Obtain(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi.Inject(faultinject.Refresh, faultinject.Fault{Next: 1})
	if err := l.Refresh(ctx, time.Minute); !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("lease Refresh with a Refresh fault = %v, want the injected error", err)
	}
	m, err := c.ObtainAll(ctx, []string{"a", "b"}, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi.Inject(faultinject.PTTL, faultinject.Fault{Next: 1})
	if _, err := m.TTL(ctx); !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("multi-key TTL with a PTTL fault = %v, want the injected error", err)
	}
	fi.Inject(faultinject.Release, faultinject.Fault{Next: 1})
	if err := m.Release(ctx); !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("multi-key Release with a Release fault = %v, want the injected error", err)
	}
	if got := fi.Hits(faultinject.Acquire) + fi.Hits(faultinject.Refresh) + fi.Hits(faultinject.PTTL) + fi.Hits(faultinject.Release); got != 4 {
		t.Fatalf("faults hit %d calls, want 4", got)
	}
	m.Release(ctx)
	l.Release(ctx)

	bare := lockapi.New(faultinject.New(plainOnly{b}, faultinject.Options{}), lockapi.Options{})
	if _, err := bare.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("semaphore over a wrapped backend without semaphores = %v, want errors.ErrUnsupported", err)
	}
	if _, err := bare.RWMutex("doc").ObtainRead(ctx, time.Minute, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("read lease over a wrapped backend without them = %v, want errors.ErrUnsupported", err)
	}
}
