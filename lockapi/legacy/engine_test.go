package legacy

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
)

func TestEngineKV(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	kv := Engine(e)
	ctx := context.Background()
	if set, err := kv.SetNX(ctx, "k", "1"); !set || err != nil {
		t.Fatalf("SetNX(absent) = %v, %v, want true, nil", set, err)
	}
	if set, err := kv.SetNX(ctx, "k", "2"); set || err != nil {
		t.Fatalf("SetNX(present) = %v, %v, want false, nil", set, err)
	}
	if v, ok, err := kv.Get(ctx, "k"); v != "1" || !ok || err != nil {
		t.Fatalf("Get = %q, %v, %v, want 1, true, nil", v, ok, err)
	}
	if old, ok, err := kv.GetSet(ctx, "k", "3"); old != "1" || !ok || err != nil {
		t.Fatalf("GetSet = %q, %v, %v, want 1, true, nil", old, ok, err)
	}
	if del, err := kv.Del(ctx, "k"); !del || err != nil {
		t.Fatalf("Del(present) = %v, %v, want true, nil", del, err)
	}
	if del, err := kv.Del(ctx, "k"); del || err != nil {
		t.Fatalf("Del(absent) = %v, %v, want false, nil", del, err)
	}
	if v, ok, err := kv.Get(ctx, "k"); ok || err != nil {
		t.Fatalf("Get(absent) = %q, %v, %v, want absent", v, ok, err)
	}
	if old, ok, err := kv.GetSet(ctx, "k", "4"); ok || err != nil {
		t.Fatalf("GetSet(absent) = %q, %v, %v, want absent", old, ok, err)
	}
}

// BenchmarkObtainRelease is one uncontended TryObtain (a SETNX) and Release
// (a clock check and DEL) over the in-process engine with the real clock.
func BenchmarkObtainRelease(b *testing.B) {
	e := engine.New(engine.Options{})
	defer e.Close()
	l, err := New(Engine(e), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lk, err := l.Obtain(ctx, "lock.foo")
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLockerTakesEngineClock: a Locker over Engine with no clock of its own
// stamps times from the engine's clock.
func TestLockerTakesEngineClock(t *testing.T) {
	mock := clock.NewMock()
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	mock.Set(at)
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	l, err := New(Engine(e), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(at.Unix()+11, 10); lk.Value() != want {
		t.Fatalf("stored %q, want %q (the engine's time + 10s + 1)", lk.Value(), want)
	}
}
