package ttl_test

import (
	"fmt"
	"time"

	"github.com/nxkv/nxkv/ttl"
)

// A reaper sleeps until NextDeadline, advances the wheel to the time it woke
// at, and drops whatever fires. Here the clock is simulated by jumping
// straight to each NextDeadline.
func Example() {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	w := ttl.New[string](start.UnixNano(), time.Millisecond)

	locks := []*ttl.Node[string]{{Value: "lock:a"}, {Value: "lock:b"}, {Value: "lock:c"}}
	w.Schedule(locks[0], start.Add(30*time.Millisecond).UnixNano())
	w.Schedule(locks[1], start.Add(10*time.Second).UnixNano())
	w.Schedule(locks[2], start.Add(5*time.Millisecond).UnixNano())
	w.Cancel(locks[2]) // released before it expired

	for w.Len() > 0 {
		next, _ := w.NextDeadline()
		w.Advance(next, func(n *ttl.Node[string]) {
			fmt.Printf("%s expired at +%v\n", n.Value, time.Unix(0, next).Sub(start))
		})
	}
	// Output:
	// lock:a expired at +30ms
	// lock:b expired at +10s
}
