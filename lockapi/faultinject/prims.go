package faultinject

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

var (
	_ lockapi.SemaphoreBackend = (*Backend)(nil)
	_ lockapi.RWBackend        = (*Backend)(nil)
	_ lockapi.MultiBackend     = (*Backend)(nil)
	_ lockapi.ReentrantBackend = (*Backend)(nil)
)

// faulted runs do, the wrapped backend's call, subject to op's fault, as
// Acquire, Release, Refresh and PTTL do.
func faulted[T any](ctx context.Context, b *Backend, op Op, do func() (T, error)) (v T, err error) {
	defer func() { b.done(op, err) }()
	f, hit := b.fault(op)
	proceed, ferr := b.before(ctx, f, hit)
	if proceed {
		v, err = do()
	}
	if ferr != nil {
		var zero T
		return zero, ferr
	}
	return v, err
}

// inner returns the wrapped backend as a T, or an error matching
// errors.ErrUnsupported.
func inner[T any](b *Backend, what string) (T, error) {
	x, ok := b.inner.(T)
	if !ok {
		return x, fmt.Errorf("faultinject: the wrapped backend (%T) has no %s: %w", b.inner, what, errors.ErrUnsupported)
	}
	return x, nil
}

// acquired is an acquisition's results.
type acquired struct {
	key     string
	fence   int64
	ok      bool
	holds   int
	fences  []int64
	blocked int
}

// AcquireSlot calls the wrapped AcquireSlot, subject to the Acquire fault.
func (b *Backend) AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	sb, err := inner[lockapi.SemaphoreBackend](b, "semaphores")
	if err != nil {
		return "", 0, false, err
	}
	r, err := faulted(ctx, b, Acquire, func() (acquired, error) {
		k, f, ok, err := sb.AcquireSlot(ctx, name, limit, value, ttl)
		return acquired{key: k, fence: f, ok: ok}, err
	})
	return r.key, r.fence, r.ok, err
}

// SlotKey returns the wrapped backend's SlotKey (no I/O, never faulted),
// or "" if it has no semaphores.
func (b *Backend) SlotKey(name string, i int) string {
	if sb, err := inner[lockapi.SemaphoreBackend](b, "semaphores"); err == nil {
		return sb.SlotKey(name, i)
	}
	return ""
}

// AcquireRead calls the wrapped AcquireRead, subject to the Acquire fault.
func (b *Backend) AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (string, int64, bool, error) {
	rb, err := inner[lockapi.RWBackend](b, "read-write locks")
	if err != nil {
		return "", 0, false, err
	}
	r, err := faulted(ctx, b, Acquire, func() (acquired, error) {
		k, f, ok, err := rb.AcquireRead(ctx, name, value, ttl)
		return acquired{key: k, fence: f, ok: ok}, err
	})
	return r.key, r.fence, r.ok, err
}

// AcquireWrite calls the wrapped AcquireWrite, subject to the Acquire
// fault.
func (b *Backend) AcquireWrite(ctx context.Context, name, value string, ttl time.Duration, queue bool) (string, int64, bool, error) {
	rb, err := inner[lockapi.RWBackend](b, "read-write locks")
	if err != nil {
		return "", 0, false, err
	}
	r, err := faulted(ctx, b, Acquire, func() (acquired, error) {
		k, f, ok, err := rb.AcquireWrite(ctx, name, value, ttl, queue)
		return acquired{key: k, fence: f, ok: ok}, err
	})
	return r.key, r.fence, r.ok, err
}

// Abandon calls the wrapped Abandon, subject to the Release fault.
func (b *Backend) Abandon(ctx context.Context, name, value string) error {
	rb, err := inner[lockapi.RWBackend](b, "read-write locks")
	if err != nil {
		return err
	}
	_, err = faulted(ctx, b, Release, func() (struct{}, error) { return struct{}{}, rb.Abandon(ctx, name, value) })
	return err
}

// AcquireAll calls the wrapped AcquireAll, subject to the Acquire fault.
func (b *Backend) AcquireAll(ctx context.Context, keys []string, value string, ttl time.Duration) ([]int64, int, bool, error) {
	mb, err := inner[lockapi.MultiBackend](b, "multi-key locks")
	if err != nil {
		return nil, 0, false, err
	}
	r, err := faulted(ctx, b, Acquire, func() (acquired, error) {
		f, blocked, ok, err := mb.AcquireAll(ctx, keys, value, ttl)
		return acquired{fences: f, blocked: blocked, ok: ok}, err
	})
	return r.fences, r.blocked, r.ok, err
}

// ReleaseAll calls the wrapped ReleaseAll, subject to the Release fault.
func (b *Backend) ReleaseAll(ctx context.Context, keys []string, value string) (bool, error) {
	mb, err := inner[lockapi.MultiBackend](b, "multi-key locks")
	if err != nil {
		return false, err
	}
	return faulted(ctx, b, Release, func() (bool, error) { return mb.ReleaseAll(ctx, keys, value) })
}

// RefreshAll calls the wrapped RefreshAll, subject to the Refresh fault.
func (b *Backend) RefreshAll(ctx context.Context, keys []string, value string, ttl time.Duration) (bool, error) {
	mb, err := inner[lockapi.MultiBackend](b, "multi-key locks")
	if err != nil {
		return false, err
	}
	return faulted(ctx, b, Refresh, func() (bool, error) { return mb.RefreshAll(ctx, keys, value, ttl) })
}

// PTTLAll calls the wrapped PTTLAll, subject to the PTTL fault.
func (b *Backend) PTTLAll(ctx context.Context, keys []string, value string) (time.Duration, bool, error) {
	mb, err := inner[lockapi.MultiBackend](b, "multi-key locks")
	if err != nil {
		return 0, false, err
	}
	r, err := faulted(ctx, b, PTTL, func() (acquired, error) {
		d, ok, err := mb.PTTLAll(ctx, keys, value)
		return acquired{fence: int64(d), ok: ok}, err
	})
	return time.Duration(r.fence), r.ok, err
}

// AcquireReentrant calls the wrapped AcquireReentrant, subject to the
// Acquire fault.
func (b *Backend) AcquireReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (int64, int, bool, error) {
	rb, err := inner[lockapi.ReentrantBackend](b, "reentrant locks")
	if err != nil {
		return 0, 0, false, err
	}
	r, err := faulted(ctx, b, Acquire, func() (acquired, error) {
		f, h, ok, err := rb.AcquireReentrant(ctx, key, value, hold, ttl)
		return acquired{fence: f, holds: h, ok: ok}, err
	})
	return r.fence, r.holds, r.ok, err
}

// ReleaseReentrant calls the wrapped ReleaseReentrant, subject to the
// Release fault.
func (b *Backend) ReleaseReentrant(ctx context.Context, key, value, hold string) (int, bool, error) {
	rb, err := inner[lockapi.ReentrantBackend](b, "reentrant locks")
	if err != nil {
		return 0, false, err
	}
	r, err := faulted(ctx, b, Release, func() (acquired, error) {
		h, ok, err := rb.ReleaseReentrant(ctx, key, value, hold)
		return acquired{holds: h, ok: ok}, err
	})
	return r.holds, r.ok, err
}

// RefreshReentrant calls the wrapped RefreshReentrant, subject to the
// Refresh fault.
func (b *Backend) RefreshReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (bool, error) {
	rb, err := inner[lockapi.ReentrantBackend](b, "reentrant locks")
	if err != nil {
		return false, err
	}
	return faulted(ctx, b, Refresh, func() (bool, error) { return rb.RefreshReentrant(ctx, key, value, hold, ttl) })
}

// PTTLReentrant calls the wrapped PTTLReentrant, subject to the PTTL fault.
func (b *Backend) PTTLReentrant(ctx context.Context, key, value, hold string) (time.Duration, bool, error) {
	rb, err := inner[lockapi.ReentrantBackend](b, "reentrant locks")
	if err != nil {
		return 0, false, err
	}
	r, err := faulted(ctx, b, PTTL, func() (acquired, error) {
		d, ok, err := rb.PTTLReentrant(ctx, key, value, hold)
		return acquired{fence: int64(d), ok: ok}, err
	})
	return time.Duration(r.fence), r.ok, err
}
