package inproc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

func TestReservedNamespace(t *testing.T) {
	e, _ := newEngine(t)
	ctx := context.Background()
	for _, tc := range []struct {
		prefix, reserved string
	}{
		{"", inproc.DefaultFencePrefix + "x"},
		{"fences/", "fences/x"},
	} {
		b := inproc.New(e, inproc.Options{FencePrefix: tc.prefix})
		if _, ok, err := b.Acquire(ctx, tc.reserved, "v", time.Minute); ok || !errors.Is(err, inproc.ErrReservedKey) {
			t.Errorf("prefix %q: Acquire(%q) = %v, %v, want ErrReservedKey", tc.prefix, tc.reserved, ok, err)
		}
		if e.Exists(tc.reserved) {
			t.Errorf("prefix %q: refused Acquire(%q) created the key", tc.prefix, tc.reserved)
		}
		f, ok, err := b.Acquire(ctx, "x", "v", time.Minute)
		if !ok || err != nil || f != 1 {
			t.Fatalf("prefix %q: Acquire(x) = %d, %v, %v, want 1, true, nil", tc.prefix, f, ok, err)
		}
		counter := tc.prefix + "x"
		if tc.prefix == "" {
			counter = inproc.DefaultFencePrefix + "x"
		}
		if v, ok := e.Get(counter); !ok || v != "1" {
			t.Errorf("prefix %q: counter %q = %q, %v, want \"1\"", tc.prefix, counter, v, ok)
		}
		if ttl, ok := e.PTTL(counter); !ok || ttl != engine.NoExpiry {
			t.Errorf("prefix %q: counter TTL = %v, %v, want none", tc.prefix, ttl, ok)
		}
		b.Release(ctx, "x", "v")
	}
}

// TestCorruptCounter: if other code overwrote a fence counter, Acquire
// fails with an error and undoes the acquisition instead of returning a
// meaningless fence.
func TestCorruptCounter(t *testing.T) {
	e, _ := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	e.Set(inproc.DefaultFencePrefix+"k", "not a number")
	_, ok, err := b.Acquire(context.Background(), "k", "v", time.Minute)
	if ok || !errors.Is(err, engine.ErrNotInteger) {
		t.Fatalf("Acquire with a corrupt counter = %v, %v, want false, ErrNotInteger", ok, err)
	}
	if e.Exists("k") {
		t.Fatal("Acquire with a corrupt counter left the lock key behind")
	}
}

func TestNoFencingCreatesNoCounters(t *testing.T) {
	e, _ := newEngine(t)
	b := inproc.New(e, inproc.Options{NoFencing: true})
	f, ok, err := b.Acquire(context.Background(), "k", "v", time.Minute)
	if !ok || err != nil || f != 0 {
		t.Fatalf("Acquire = %d, %v, %v, want 0, true, nil", f, ok, err)
	}
	if n := e.Len(); n != 1 {
		t.Fatalf("engine holds %d keys, want 1 (no counter)", n)
	}
}

// TestPTTLOtherValue: PTTL reports not held for a key holding another
// value, and for a missing key.
func TestPTTLOtherValue(t *testing.T) {
	e, c := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	ctx := context.Background()
	b.Acquire(ctx, "k", "mine", 10*time.Second)
	c.Add(4 * time.Second)
	if d, ok, err := b.PTTL(ctx, "k", "mine"); !ok || err != nil || d != 6*time.Second {
		t.Errorf("PTTL(own) = %v, %v, %v, want 6s, true, nil", d, ok, err)
	}
	if _, ok, _ := b.PTTL(ctx, "k", "theirs"); ok {
		t.Error("PTTL(other value) = true, want false")
	}
	if _, ok, _ := b.PTTL(ctx, "missing", "mine"); ok {
		t.Error("PTTL(missing key) = true, want false")
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	inproc.New(nil, inproc.Options{})
}
