package resp

import (
	"testing"
	"time"
)

// TestElapsedUsecAddsUp: calls shorter than a microsecond add up to their
// true total, as Redis counts them (the microsecond of the end less that of
// the start); truncating each call's duration counted none of them.
func TestElapsedUsecAddsUp(t *testing.T) {
	var total int64
	for start := time.Duration(0); start < 10*time.Microsecond; start += 100 * time.Nanosecond {
		total += elapsedUsec(start, start+300*time.Nanosecond)
	}
	// 100 calls of 0.3 us: 30 us.
	if total != 30 {
		t.Fatalf("100 calls of 300 ns counted %d us, want 30", total)
	}
	if got := elapsedUsec(900, 1100); got != 1 {
		t.Errorf("a call across a microsecond boundary counted %d us, want 1", got)
	}
}
