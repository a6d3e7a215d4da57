package inproc_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// spinUntil yields until cond holds, failing after a real-time guard.
func spinUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		runtime.Gosched()
	}
}

// TestInspect: Inspect reports a lock's holder, its TTL, a reentrant hold
// count and the Obtain calls waiting, through any Client on the Backend.
func TestInspect(t *testing.T) {
	e, clk := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	c1, c2 := lockapi.New(b, lockapi.Options{}), lockapi.New(b, lockapi.Options{})
	ctx := context.Background()
	if info := b.Inspect("job"); len(info.Holders) != 0 || info.Waiters != 0 {
		t.Fatalf("Inspect of a free key = %+v, want nothing", info)
	}
	l, err := c1.Obtain(ctx, "job", time.Minute, &lockapi.ObtainOptions{Metadata: "host=a"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(15 * time.Second)
	info := b.Inspect("job")
	if len(info.Holders) != 1 || info.Holders[0].Value != l.Token()+"host=a" || info.Holders[0].TTL != 45*time.Second {
		t.Fatalf("Inspect = %+v, want the holder's token+metadata with 45s left", info)
	}
	done := make(chan error, 2)
	for _, c := range []*lockapi.Client{c1, c2} {
		go func() {
			w, err := c.Obtain(ctx, "job", time.Minute, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
			if err == nil {
				err = w.Release(ctx)
			}
			done <- err
		}()
	}
	spinUntil(t, func() bool { return b.Inspect("job").Waiters == 2 }, "two waiters are counted")
	l.Release(ctx)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if info := b.Inspect("job"); info.Waiters != 0 || len(info.Holders) != 0 {
		t.Fatalf("Inspect after the waiters finished = %+v, want nothing", info)
	}

	r1, _ := c1.Obtain(ctx, "re", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	r2, _ := c1.Obtain(ctx, "re", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: r1.Token()})
	if info := b.Inspect("re"); info.Holds != 2 || len(info.Holders) != 1 {
		t.Fatalf("Inspect of a reentrant lock held twice = %+v, want 2 holds", info)
	}
	r1.Release(ctx)
	r2.Release(ctx)
}

// TestInspectPrimitives: a semaphore's leases and waiters; a read-write
// lock's readers, writer, waiting writer and waiters.
func TestInspectPrimitives(t *testing.T) {
	e, _ := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	c := lockapi.New(b, lockapi.Options{})
	ctx := context.Background()
	wait := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}

	sem := c.Semaphore("pool", 2)
	a, _ := sem.Obtain(ctx, time.Minute, nil)
	sem.Obtain(ctx, time.Minute, nil)
	got := make(chan *lockapi.Lock, 1)
	go func() {
		l, _ := sem.Obtain(ctx, time.Minute, wait)
		got <- l
	}()
	spinUntil(t, func() bool { return b.InspectSemaphore("pool", 2).Waiters == 1 }, "the semaphore's waiter is counted")
	if info := b.InspectSemaphore("pool", 2); len(info.Holders) != 2 || info.Holders[0].Value != a.Token() {
		t.Fatalf("InspectSemaphore = %+v, want two leases, the first one's in slot 0", info)
	}
	a.Release(ctx)
	(<-got).Release(ctx)

	rw := c.RWMutex("doc")
	r, _ := rw.ObtainRead(ctx, time.Minute, nil)
	rw.ObtainRead(ctx, time.Minute, nil)
	wres := make(chan *lockapi.Lock, 1)
	go func() {
		w, _ := rw.ObtainWrite(ctx, time.Minute, wait)
		wres <- w
	}()
	spinUntil(t, func() bool { i := b.InspectRW("doc"); return i.WriteWaiters == 1 && i.WriterWaiting != nil }, "the writer waits")
	rres := make(chan *lockapi.Lock, 1)
	go func() {
		l, _ := rw.ObtainRead(ctx, time.Minute, wait)
		rres <- l
	}()
	spinUntil(t, func() bool { return b.InspectRW("doc").ReadWaiters == 1 }, "the reader waits")
	info := b.InspectRW("doc")
	if len(info.Readers) != 2 || info.Readers[0].Value != r.Token() || info.Writer != nil {
		t.Fatalf("InspectRW = %+v, want two readers, the oldest first, and no writer", info)
	}
	for _, h := range info.Readers { // release them through what Inspect told
		if ok, err := b.Release(ctx, h.Key, h.Value); !ok || err != nil {
			t.Fatalf("Release(%q) of an inspected reader = %v, %v", h.Key, ok, err)
		}
	}
	w := <-wres
	if info := b.InspectRW("doc"); info.Writer == nil || info.Writer.Value != w.Token() || info.WriterWaiting != nil || len(info.Readers) != 0 {
		t.Fatalf("InspectRW with the writer in = %+v, want the writer, no mark, no readers", info)
	}
	w.Release(ctx)
	(<-rres).Release(ctx)
}
