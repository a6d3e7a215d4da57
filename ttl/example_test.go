package ttl_test

import (
	"fmt"
	"time"

	"github.com/nxkv/nxkv/ttl"
)

// A reaper sleeps until NextDeadline, advances the wheel to the time it woke
// at, and drops whatever fires. The wheel files handles, so the caller keeps
// its entries wherever it likes and names them by number: here, indexes into
// a slice of lock names. The clock is simulated by jumping straight to each
// NextDeadline.
func Example() {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	w := ttl.New(start.UnixNano(), time.Millisecond)

	locks := []string{"lock:a", "lock:b", "lock:c"} // handle i names locks[i]
	w.Schedule(0, start.Add(30*time.Millisecond).UnixNano())
	w.Schedule(1, start.Add(10*time.Second).UnixNano())
	w.Schedule(2, start.Add(5*time.Millisecond).UnixNano())
	w.Cancel(2) // released before it expired

	for w.Len() > 0 {
		next, _ := w.NextDeadline()
		w.Advance(next, func(h ttl.Handle) {
			fmt.Printf("%s expired at +%v\n", locks[h], time.Unix(0, next).Sub(start))
		})
	}
	// Output:
	// lock:a expired at +30ms
	// lock:b expired at +10s
}

// A fire callback may schedule the handle that fired again: here a lease
// renewed every 250ms until it has fired three times.
func ExampleWheel_Advance() {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	w := ttl.New(start.UnixNano(), time.Millisecond)

	const lease ttl.Handle = 7
	renewals := 0
	w.Schedule(lease, start.Add(250*time.Millisecond).UnixNano())
	for w.Len() > 0 {
		next, _ := w.NextDeadline()
		w.Advance(next, func(h ttl.Handle) {
			fmt.Printf("handle %d fired at +%v\n", h, time.Unix(0, next).Sub(start))
			if renewals++; renewals < 3 {
				w.Schedule(h, next+int64(250*time.Millisecond))
			}
		})
	}
	_, scheduled := w.Deadline(lease)
	fmt.Println("scheduled:", scheduled)
	// Output:
	// handle 7 fired at +250ms
	// handle 7 fired at +500ms
	// handle 7 fired at +750ms
	// scheduled: false
}
