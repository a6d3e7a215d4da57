package goredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// TestAttackSlotLimit: AcquireSlot, a public method, refuses a limit
// outside [1, MaxLimit] with an error instead of panicking (a negative
// limit) or building a script call without bound (a huge one).
func TestAttackSlotLimit(t *testing.T) {
	_, _, rc := nxkvServer(t)
	b := goredis.New(rc, goredis.Options{})
	for _, limit := range []int{-1, 0, lockapi.MaxLimit + 1, 1 << 40} {
		_, _, ok, err := b.AcquireSlot(context.Background(), "pool", limit, "v", time.Minute)
		if ok || !errors.Is(err, lockapi.ErrInvalidOption) {
			t.Errorf("AcquireSlot(limit %d) = %v, %v; want ErrInvalidOption", limit, ok, err)
		}
	}
}
