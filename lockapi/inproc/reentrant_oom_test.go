package inproc_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// fillToOOM writes keys until the bounded engine refuses one.
func fillToOOM(t *testing.T, e *engine.Engine) {
	t.Helper()
	for i := 0; ; i++ {
		err := e.Set("fill:"+strconv.Itoa(i), string(make([]byte, 100)))
		if errors.Is(err, engine.ErrOOM) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestReentrantReleaseWhenFull: a reentrant lock held by two holds, in a
// NoEviction engine that has reached its bound. Both holders release (and
// are told ok); the lock must then be free. A third hold asked for then is
// refused with ErrOOM or recorded, never reported taken and lost.
func TestReentrantReleaseWhenFull(t *testing.T) {
	ctx := context.Background()
	e := engine.New(engine.Options{MaxMemory: 16 << 10}) // NoEviction
	defer e.Close()
	b := inproc.New(e, inproc.Options{})
	const key, value = "res", "owner"
	if _, _, ok, err := b.AcquireReentrant(ctx, key, value, "h1", time.Hour); !ok || err != nil {
		t.Fatalf("acquire h1: %v %v", ok, err)
	}
	if _, _, ok, err := b.AcquireReentrant(ctx, key, value, "h2", time.Hour); !ok || err != nil {
		t.Fatalf("acquire h2: %v %v", ok, err)
	}
	fillToOOM(t, e)
	if _, n, ok, err := b.AcquireReentrant(ctx, key, value, "h3", time.Hour); ok || !errors.Is(err, engine.ErrOOM) {
		t.Fatalf("acquire h3 when full: holds %d, ok %v, err %v; want ErrOOM", n, ok, err)
	}
	for _, h := range []string{"h1", "h2"} {
		if n, ok, err := b.ReleaseReentrant(ctx, key, value, h); !ok || err != nil {
			t.Fatalf("release %s: holds left %d, ok %v, err %v", h, n, ok, err)
		}
	}
	if e.Exists(key) {
		hv, _ := e.Get("nxkv:hold:" + key)
		t.Fatalf("both holds released (each reported ok), but the lock is still held; holds record %q", hv)
	}
}

// TestReentrantRefreshWhenFull: a refresh in a full NoEviction engine
// extends the lock key and its holds together (it extended the key but
// not its holds, refused with ErrOOM and ignored, and reported ok: once the
// first TTL passed the holds were gone while the key lived on, so the
// holder could neither refresh nor release, and the key blocked every
// other owner until the extended TTL ended).
func TestReentrantRefreshWhenFull(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{MaxMemory: 16 << 10, Clock: clk}) // NoEviction
	defer e.Close()
	b := inproc.New(e, inproc.Options{})
	const key, value = "res", "owner"
	if _, _, ok, err := b.AcquireReentrant(ctx, key, value, "h1", time.Minute); !ok || err != nil {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	fillToOOM(t, e)
	if ok, err := b.RefreshReentrant(ctx, key, value, "h1", time.Hour); !ok || err != nil {
		t.Fatalf("refresh: %v %v", ok, err)
	}
	clk.Add(2 * time.Minute)
	ok, err := b.RefreshReentrant(ctx, key, value, "h1", time.Hour)
	_, rok, _ := b.ReleaseReentrant(ctx, key, value, "h1")
	if !ok || !rok {
		pttl, _ := e.PTTL(key)
		t.Fatalf("after a refresh that reported ok: refresh %v %v, release %v; the key still lives for %v, held by no one", ok, err, rok, pttl)
	}
}
