package inproc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// TestAttackSlotLimit: AcquireSlot, a public method, refuses a limit
// outside [1, MaxLimit] with an error instead of panicking (a negative
// limit) or allocating without bound (a huge one), and InspectSemaphore
// with a huge limit returns at once.
func TestAttackSlotLimit(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	b := inproc.New(e, inproc.Options{})
	for _, limit := range []int{-1, 0, lockapi.MaxLimit + 1, 1 << 40} {
		_, _, ok, err := b.AcquireSlot(context.Background(), "pool", limit, "v", time.Minute)
		if ok || !errors.Is(err, lockapi.ErrInvalidOption) {
			t.Errorf("AcquireSlot(limit %d) = %v, %v; want ErrInvalidOption", limit, ok, err)
		}
	}
	if info := b.InspectSemaphore("pool", 1<<40); len(info.Holders) != 0 {
		t.Errorf("InspectSemaphore = %+v, want no holder", info)
	}
	if info := b.InspectSemaphore("pool", -1); len(info.Holders) != 0 {
		t.Errorf("InspectSemaphore = %+v, want no holder", info)
	}
}
