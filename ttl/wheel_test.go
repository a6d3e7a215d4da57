package ttl

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

const (
	ms   = int64(time.Millisecond)
	sec  = int64(time.Second)
	hour = int64(time.Hour)
	day  = 24 * hour
	year = 365 * day
)

// step is one operation of a scripted wheel test. Times are offsets from
// the test's start time.
type step struct {
	op   byte  // 's' schedule, 'c' cancel, 'a' advance
	node int   // for 's' and 'c': an index into the test's handles
	at   int64 // deadline for 's', time for 'a'
	want []int // for 'a': the nodes (indexes) that must fire, sorted
}

func sched(node int, at int64) step      { return step{op: 's', node: node, at: at} }
func cancel(node int) step               { return step{op: 'c', node: node} }
func advance(at int64, want ...int) step { return step{op: 'a', at: at, want: want} }

func TestWheelScripts(t *testing.T) {
	tests := []struct {
		name  string
		start int64
		tick  time.Duration
		steps []step
	}{
		{"past deadline fires at next advance", epoch2026, 0, []step{
			sched(0, -hour), sched(1, 0), sched(2, 1),
			advance(0, 0, 1), advance(1, 2),
		}},
		{"past deadline fires even when advance goes backwards", epoch2026, 0, []step{
			advance(10 * sec), sched(0, 5*sec), advance(0, 0),
		}},
		{"deadline one ns ahead never fires early", epoch2026, 0, []step{
			sched(0, 1), advance(0), advance(1, 0),
		}},
		{"bucket mates fire at their own deadlines", epoch2026, 0, []step{
			// 2^20 aligns to a level-0 bucket start for the default tick.
			sched(0, 1<<20+10), sched(1, 1<<20+11), sched(2, 2<<20-1),
			advance(1<<20+10, 0), advance(1<<20 + 10), advance(2<<20-2, 1), advance(2<<20-1, 2),
		}},
		{"one tick to years ahead", epoch2026, 0, []step{
			sched(0, 1<<20), sched(1, 70*ms), sched(2, 5*sec), sched(3, 5*60*sec),
			sched(4, 5*hour), sched(5, 14*day), sched(6, 3*year), sched(7, 50*year),
			advance(1<<20 - 1), advance(1<<20, 0), advance(70*ms, 1), advance(5*sec, 2),
			advance(5*60*sec - 1), advance(5*60*sec, 3), advance(5*hour, 4), advance(14*day - 1),
			advance(14*day, 5), advance(3*year, 6), advance(50*year - 1), advance(50*year, 7),
		}},
		{"ten-hour jump fires what is due and keeps the rest", epoch2026, 0, []step{
			sched(0, 3*ms), sched(1, 2*hour), sched(2, 10*hour), sched(3, 10*hour+1),
			sched(4, 11*hour), sched(5, 3*year),
			advance(10*hour, 0, 1, 2), advance(10*hour+1, 3), advance(11*hour - 1), advance(11*hour, 4),
		}},
		{"jump of years fires the overflow", epoch2026, 0, []step{
			sched(0, 3*year), sched(1, 3*year+1), sched(2, 200*year),
			advance(4*year, 0, 1), advance(199 * year), advance(200*year, 2),
		}},
		{"reschedule moves earlier and later", epoch2026, 0, []step{
			sched(0, sec), sched(0, 10*ms), sched(1, 10*ms), sched(1, hour),
			advance(10*ms, 0), advance(sec), advance(hour - 1), advance(hour, 1),
		}},
		{"cancel", epoch2026, 0, []step{
			sched(0, 5*ms), sched(1, 5*ms), sched(2, 3*day), cancel(0), cancel(0), cancel(2), cancel(3),
			advance(10*day, 1),
		}},
		{"end of time", epoch2026, 0, []step{
			sched(0, math.MaxInt64-epoch2026), sched(1, math.MaxInt64-epoch2026-1),
			advance(math.MaxInt64-epoch2026-1, 1), advance(math.MaxInt64-epoch2026, 0),
			sched(2, math.MaxInt64-epoch2026), advance(math.MaxInt64-epoch2026, 2),
		}},
		{"negative times", -5 * sec, 0, []step{
			sched(0, 4*sec), sched(1, 5*sec), sched(2, 6*sec), advance(5*sec, 0, 1), advance(6*sec, 2),
		}},
		{"nanosecond tick", epoch2026, time.Nanosecond, []step{
			sched(0, 1), sched(1, 2), sched(2, 90*sec), sched(3, 3*year),
			advance(1, 0), advance(2, 1), advance(90*sec - 1), advance(90*sec, 2), advance(3*year, 3),
		}},
		{"coarse tick rounds down", epoch2026, 3 * time.Second, []step{
			sched(0, 2*sec+1), sched(1, 2*sec+2), advance(2*sec+1, 0), advance(2*sec+2, 1),
		}},
	}
	// Each script runs with its nodes as handles 0 to 7 and again as
	// handles spread over link chunks, on both sides of chunk boundaries.
	layouts := []struct {
		name    string
		handles [8]Handle
	}{
		{"dense", [8]Handle{0, 1, 2, 3, 4, 5, 6, 7}},
		{"spread", [8]Handle{100_000, 63, 64, 0, 127, 128, 4095, 1}},
	}
	for _, tt := range tests {
		for _, lay := range layouts {
			t.Run(tt.name+"/"+lay.name, func(t *testing.T) {
				w := New(tt.start, tt.tick)
				node := map[Handle]int{}
				for i, h := range lay.handles {
					node[h] = i
				}
				for si, s := range tt.steps {
					switch s.op {
					case 's':
						w.Schedule(lay.handles[s.node], tt.start+s.at)
					case 'c':
						w.Cancel(lay.handles[s.node])
					case 'a':
						var got []int
						w.Advance(tt.start+s.at, func(h Handle) { got = append(got, node[h]) })
						slices.Sort(got)
						if !slices.Equal(got, s.want) {
							t.Fatalf("step %d: Advance(start%+d) fired %v, want %v", si, s.at, got, s.want)
						}
						if next, ok := w.NextDeadline(); ok && next <= w.Now() && w.Now() != math.MaxInt64 {
							t.Fatalf("step %d: NextDeadline() = %d, want > now %d", si, next, w.Now())
						}
					}
					if err := w.verify(); err != nil {
						t.Fatalf("step %d: %v", si, err)
					}
				}
			})
		}
	}
}

// TestReaperFiresOnTime plays the engine's reaper: sleep until NextDeadline,
// Advance to it. Every handle must fire exactly at its deadline, and the
// number of wake-ups must stay within a few per level per handle.
func TestReaperFiresOnTime(t *testing.T) {
	for _, tick := range []time.Duration{0, time.Nanosecond, time.Millisecond, time.Second} {
		t.Run(time.Duration(tick).String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tick)))
			w := New(epoch2026, tick)
			spans := []int64{ms, 100 * ms, 10 * sec, hour, 10 * day, 3 * year, 30 * year}
			const handles = 400
			deadline := map[Handle]int64{} // the caller's own record, as the engine keeps
			for i := range handles {
				h := Handle(i * 37) // over many link chunks
				deadline[h] = epoch2026 + 1 + rng.Int64N(spans[i%len(spans)])
				w.Schedule(h, deadline[h])
			}
			fired, wakeups := 0, 0
			for {
				next, ok := w.NextDeadline()
				if !ok {
					break
				}
				if next <= w.Now() {
					t.Fatalf("NextDeadline() = %d, want > now %d", next, w.Now())
				}
				wakeups++
				w.Advance(next, func(h Handle) {
					fired++
					d, ok := deadline[h]
					if !ok || d != next {
						t.Errorf("handle %d with deadline %d, %v fired at %d", h, d, ok, next)
					}
					delete(deadline, h)
				})
			}
			if fired != handles || len(deadline) != 0 {
				t.Errorf("fired %d handles, %d left unfired; want %d, 0", fired, len(deadline), handles)
			}
			if limit := handles * (w.nlevels + 2); wakeups > limit {
				t.Errorf("%d wake-ups for %d handles, want at most %d", wakeups, handles, limit)
			}
			t.Logf("%d levels, %d wake-ups for %d handles", w.nlevels, wakeups, handles)
		})
	}
}

func TestFireCallbackMayScheduleAndCancel(t *testing.T) {
	t.Run("periodic self reschedule fires once per advance", func(t *testing.T) {
		w := New(epoch2026, 0)
		const h = 70 // in the second link chunk
		w.Schedule(h, epoch2026+ms)
		count := 0
		for i := int64(1); i <= 100; i++ {
			w.Advance(epoch2026+i*ms, func(got Handle) {
				count++
				if got != h {
					t.Fatalf("handle %d fired, want %d", got, h)
				}
				w.Schedule(got, epoch2026+(i+1)*ms)
			})
			if count != int(i) {
				t.Fatalf("after Advance %d fired %d times, want %d", i, count, i)
			}
			if d, ok := w.Deadline(h); !ok || d != epoch2026+(i+1)*ms {
				t.Fatalf("after Advance %d Deadline(%d) = now%+d, %v, want now+1ms, true", i, h, d-w.Now(), ok)
			}
		}
	})
	t.Run("reschedule into the past waits for the next advance", func(t *testing.T) {
		w := New(epoch2026, 0)
		w.Schedule(0, epoch2026)
		count := 0
		fire := func(h Handle) { count++; w.Schedule(h, epoch2026-hour) }
		w.Advance(epoch2026, fire)
		if count != 1 || !w.Scheduled(0) {
			t.Fatalf("fired %d times, Scheduled(0) = %v; want 1, true", count, w.Scheduled(0))
		}
		if next, _ := w.NextDeadline(); next != epoch2026+1 {
			t.Errorf("NextDeadline() = %d, want now+1 = %d", next, epoch2026+1)
		}
		w.Advance(epoch2026, fire)
		if count != 2 {
			t.Fatalf("fired %d times, want 2", count)
		}
	})
	t.Run("rescheduling a due handle before its turn defers it", func(t *testing.T) {
		for _, by := range []int64{-hour, 0, 1, ms, hour} {
			w := New(epoch2026, 0)
			a, b := Handle(3), Handle(100_000)
			w.Schedule(a, epoch2026+sec)
			w.Schedule(b, epoch2026+sec)
			now := epoch2026 + sec
			var first, other Handle = -1, -1
			var fired []Handle
			w.Advance(now, func(h Handle) {
				fired = append(fired, h)
				if first < 0 {
					first, other = h, a+b-h
					w.Schedule(other, now+by)
				}
			})
			if !slices.Equal(fired, []Handle{first}) {
				t.Fatalf("by %v: Advance fired %v, want only %d: %d was rescheduled before its turn", time.Duration(by), fired, first, other)
			}
			if d, ok := w.Deadline(other); !ok || d != now+by {
				t.Fatalf("by %v: Deadline(%d) = now%+d, %v, want now%+d, true", time.Duration(by), other, d-now, ok, by)
			}
			// A deadline at or before now fires at the next Advance, even one
			// that does not move time.
			fired = nil
			w.Advance(max(now, now+by)-1, func(h Handle) { fired = append(fired, h) })
			if by <= 0 && !slices.Equal(fired, []Handle{other}) || by > 0 && len(fired) != 0 {
				t.Fatalf("by %v: Advance(now%+d) fired %v", time.Duration(by), max(0, by)-1, fired)
			}
			w.Advance(max(now, now+by), func(h Handle) { fired = append(fired, h) })
			if !slices.Equal(fired, []Handle{other}) || w.Len() != 0 {
				t.Fatalf("by %v: rescheduled handle fired %v, Len() = %d; want [%d], 0", time.Duration(by), fired, w.Len(), other)
			}
		}
	})
	t.Run("scheduling handles in new link chunks from a callback", func(t *testing.T) {
		w := New(epoch2026, 0)
		for h := range Handle(10) {
			w.Schedule(h, epoch2026+ms)
		}
		chunks := len(w.links)
		w.Advance(epoch2026+ms, func(h Handle) {
			// Each grows the links while Advance is still firing.
			w.Schedule(5000*(h+1), epoch2026+2*ms+int64(h))
			w.Schedule(h, epoch2026+3*ms)
		})
		if len(w.links) <= chunks {
			t.Fatalf("links did not grow: %d chunks, was %d", len(w.links), chunks)
		}
		if err := w.verify(); err != nil {
			t.Fatal(err)
		}
		if w.Len() != 20 {
			t.Fatalf("Len() = %d, want 20", w.Len())
		}
		var got []Handle
		w.Advance(epoch2026+2*ms+9, func(h Handle) { got = append(got, h) })
		slices.Sort(got)
		want := []Handle{5000, 10000, 15000, 20000, 25000, 30000, 35000, 40000, 45000, 50000}
		if !slices.Equal(got, want) {
			t.Fatalf("Advance fired %v, want %v", got, want)
		}
		got = nil
		w.Advance(epoch2026+3*ms, func(h Handle) { got = append(got, h) })
		if len(got) != 10 || w.Len() != 0 {
			t.Fatalf("Advance fired %v, Len() = %d; want handles 0 to 9, 0", got, w.Len())
		}
	})
	t.Run("cancelling a due handle before its turn stops it", func(t *testing.T) {
		w := New(epoch2026, 0)
		handles := []Handle{0, 1, 62, 63, 64, 65, 127, 128, 4096, 100_000}
		for _, h := range handles {
			w.Schedule(h, epoch2026+sec)
		}
		count := 0
		w.Advance(epoch2026+sec, func(h Handle) {
			count++
			if w.Scheduled(h) {
				t.Errorf("handle %d still scheduled when fired", h)
			}
			for _, h := range handles {
				w.Cancel(h)
			}
		})
		if count != 1 || w.Len() != 0 {
			t.Errorf("fired %d, Len() = %d; want 1, 0", count, w.Len())
		}
	})
	t.Run("handles left by a panicking callback fire at the next advance", func(t *testing.T) {
		w := New(epoch2026, 0)
		for h := range Handle(3) {
			w.Schedule(h*64, epoch2026+ms)
		}
		func() {
			defer func() { _ = recover() }()
			w.Advance(epoch2026+ms, func(Handle) { panic("callback failed") })
		}()
		if next, _ := w.NextDeadline(); w.Len() != 2 || next != epoch2026+ms+1 {
			t.Fatalf("after a panic Len() = %d, NextDeadline() = now%+d; want 2, now+1", w.Len(), next-w.Now())
		}
		if err := w.verify(); err != nil {
			t.Fatal(err)
		}
		count := 0
		w.Advance(epoch2026+ms, func(Handle) { count++ })
		if count != 2 || w.Len() != 0 {
			t.Errorf("next Advance fired %d, Len() = %d; want 2, 0", count, w.Len())
		}
	})
	t.Run("Advance from a callback panics", func(t *testing.T) {
		w := New(epoch2026, 0)
		w.Schedule(0, epoch2026)
		defer func() {
			if recover() == nil {
				t.Fatal("nested Advance did not panic")
			}
			w.Advance(epoch2026, func(Handle) {}) // the wheel is usable again
		}()
		w.Advance(epoch2026, func(Handle) { w.Advance(epoch2026, nil) })
	})
}

// TestHandlesAcrossChunks files handles on both sides of link chunk
// boundaries and far beyond the first chunk, highest first, so a later chunk
// exists before the earlier ones are used.
func TestHandlesAcrossChunks(t *testing.T) {
	handles := []Handle{100_000, 64, 63, 0}
	neighbours := []Handle{1, 62, 65, 127, 128, 99_999, 100_001, 100_063, 100_064}
	w := New(epoch2026, 0)
	at := func(i int) int64 { return epoch2026 + int64(i+1)*sec }
	for i, h := range handles {
		w.Schedule(h, at(i))
	}
	for i, h := range handles {
		if d, ok := w.Deadline(h); !ok || d != at(i) || !w.Scheduled(h) {
			t.Errorf("Deadline(%d) = %d, %v, Scheduled = %v; want %d, true, true", h, d, ok, w.Scheduled(h), at(i))
		}
	}
	for _, h := range neighbours {
		if d, ok := w.Deadline(h); ok || d != 0 || w.Scheduled(h) {
			t.Errorf("unscheduled neighbour: Deadline(%d) = %d, %v, Scheduled = %v; want 0, false, false", h, d, ok, w.Scheduled(h))
		}
	}
	if w.Len() != len(handles) {
		t.Fatalf("Len() = %d, want %d", w.Len(), len(handles))
	}
	if err := w.verify(); err != nil {
		t.Fatal(err)
	}
	for i, h := range handles {
		var got []Handle
		w.Advance(at(i), func(h Handle) { got = append(got, h) })
		if !slices.Equal(got, []Handle{h}) {
			t.Fatalf("Advance(+%v) fired %v, want [%d]", time.Duration(at(i)-epoch2026), got, h)
		}
		if d, ok := w.Deadline(h); ok || d != 0 || w.Scheduled(h) {
			t.Errorf("fired: Deadline(%d) = %d, %v, Scheduled = %v; want 0, false, false", h, d, ok, w.Scheduled(h))
		}
	}
	// Cancel and reschedule reach handles in every chunk.
	now := w.Now()
	for _, h := range handles {
		w.Schedule(h, now+hour)
	}
	w.Cancel(100_000)
	w.Cancel(63)
	w.Schedule(0, now+2*hour)
	var got []Handle
	w.Advance(now+hour, func(h Handle) { got = append(got, h) })
	if !slices.Equal(got, []Handle{64}) {
		t.Fatalf("Advance(+1h) fired %v, want [64]", got)
	}
	got = nil
	w.Advance(now+2*hour, func(h Handle) { got = append(got, h) })
	if !slices.Equal(got, []Handle{0}) || w.Len() != 0 {
		t.Fatalf("Advance(+2h) fired %v, Len() = %d; want [0], 0", got, w.Len())
	}
}

// TestNeverSeenHandles checks that handles the wheel has never filed, in
// chunks that exist and in ones that do not, read as unscheduled, that
// cancelling them changes nothing, and that fired and cancelled handles read
// the same way.
func TestNeverSeenHandles(t *testing.T) {
	unseen := []Handle{0, 1, 63, 64, 99, 101, 127, 128, 100_000, math.MaxInt32, -1, -64, math.MinInt32}
	for _, seen := range [][]Handle{nil, {100}, {100, 100_000 + 5}} {
		w := New(epoch2026, 0)
		for _, h := range seen {
			w.Schedule(h, epoch2026+hour)
		}
		chunks := len(w.links)
		for _, h := range unseen {
			if slices.Contains(seen, h) {
				continue
			}
			if d, ok := w.Deadline(h); ok || d != 0 || w.Scheduled(h) {
				t.Errorf("after scheduling %v: Deadline(%d) = %d, %v, Scheduled = %v; want 0, false, false", seen, h, d, ok, w.Scheduled(h))
			}
			w.Cancel(h)
			if w.Len() != len(seen) || len(w.links) != chunks {
				t.Errorf("after scheduling %v: Cancel(%d) changed Len() to %d, link chunks %d to %d", seen, h, w.Len(), chunks, len(w.links))
			}
		}
		if err := w.verify(); err != nil {
			t.Errorf("after scheduling %v: %v", seen, err)
		}
	}
	w := New(epoch2026, 0)
	w.Schedule(7, epoch2026+ms)
	w.Schedule(8, epoch2026+ms)
	w.Cancel(8)
	w.Advance(epoch2026+ms, func(Handle) {})
	for _, h := range []Handle{7, 8} {
		if d, ok := w.Deadline(h); ok || d != 0 || w.Scheduled(h) {
			t.Errorf("fired or cancelled: Deadline(%d) = %d, %v, Scheduled = %v; want 0, false, false", h, d, ok, w.Scheduled(h))
		}
	}
}

// listOf returns the list that the scheduled handle h is on.
func listOf(w *Wheel, h Handle) int {
	p := w.link(h).prev
	for p >= 0 {
		p = w.link(Handle(p)).prev
	}
	return int(-p - 1)
}

// TestVerifyCatchesCorruption shows the invariant checker failing: each case
// corrupts a correct wheel in one way and verify must name the violation.
func TestVerifyCatchesCorruption(t *testing.T) {
	// The wheel holds: 0 and 1 in one level-0 bucket five ticks ahead (1
	// heads it, 0 follows), 2 in the bucket holding now, 64 on level 2, 65
	// in the overflow and 66 on the due list.
	const tick = 1 << 20
	now := epoch2026&^(tick-1) + 1000 // room on both sides within the bucket
	setup := func() *Wheel {
		w := New(now, 0)
		w.Schedule(0, now+5*tick+7)
		w.Schedule(1, now+5*tick+9)
		w.Schedule(2, now+3)
		w.Schedule(64, now+hour)
		w.Schedule(65, now+3*year)
		w.Schedule(66, now-1)
		return w
	}
	tests := []struct {
		name    string
		corrupt func(w *Wheel)
		want    string
	}{
		{"broken back link", func(w *Wheel) { w.link(0).prev = 2 }, "bad back link"},
		{"head's back link names another list", func(w *Wheel) { w.link(1).prev = int32(-(listOf(w, 2) + 1)) }, "bad back link"},
		{"back link of a lone handle", func(w *Wheel) { w.link(64).prev = 65 }, "bad back link"},
		{"forward link drops a handle", func(w *Wheel) { w.link(1).next = none }, "5 handles linked, Len 6"},
		{"forward link loops back", func(w *Wheel) { w.link(0).next = 1 }, "bad back link"},
		{"Len too small", func(w *Wheel) { w.n-- }, "more handles than Len"},
		{"Len too large", func(w *Wheel) { w.n++ }, "6 handles linked, Len 7"},
		{"occupied bit missing", func(w *Wheel) { w.occupied[0] = 1 << (listOf(w, 2) % slots) }, "not marked occupied"},
		{"handle in the wrong slot", func(w *Wheel) {
			w.unlink(2)
			w.push(listOf(w, 0), 2)
		}, "belongs in slot"},
		{"deadline 64 buckets ahead in its slot", func(w *Wheel) { w.link(0).deadline += slots * tick }, "64 or more buckets"},
		{"level-0 deadline not after now", func(w *Wheel) { w.link(2).deadline = now }, "not after now"},
		{"curMin after a deadline in the bucket holding now", func(w *Wheel) { w.curMin = now + 4 }, "curMin"},
		{"curMin not after now", func(w *Wheel) { w.curMin = now }, "curMin"},
		{"upper level holds the bucket holding now", func(w *Wheel) {
			w.unlink(64)
			w.link(64).deadline = now + 1
			s := w.shift + 2*slotBits
			i := int(uint64(now>>s) & slotMask)
			w.occupied[2] |= 1 << i
			w.push(2*slots+i, 64)
		}, "in the bucket holding now"},
		{"overflow handle that fits the levels", func(w *Wheel) { w.link(65).deadline = now + hour }, "fits the levels"},
		{"overflowMin after an overflow deadline", func(w *Wheel) { w.overflowMin = now + 4*year }, "before overflowMin"},
		{"due handle with a future deadline", func(w *Wheel) { w.link(66).deadline = now + 1 }, "after now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := setup()
			if err := w.verify(); err != nil {
				t.Fatalf("before corruption: verify() = %v, want nil", err)
			}
			tt.corrupt(w)
			err := w.verify()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("verify() = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNextDeadline(t *testing.T) {
	const tk = 1 << 20
	base := epoch2026 &^ (1<<26 - 1) // a level-1 bucket start, so spans are predictable
	tests := []struct {
		name     string
		deadline int64 // offset from base; the wheel is at base+7
		want     int64
	}{
		{"current level-0 bucket is exact", 9, 9},
		{"later level-0 bucket is its start", 5*tk + 123, 5 * tk},
		{"level 1 is its bucket start", 3<<26 + 5, 3 << 26},
		{"past deadline gives now+1", 3, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := New(base+7, 0)
			w.Schedule(100_000, base+tt.deadline)
			if got, ok := w.NextDeadline(); !ok || got != base+tt.want {
				t.Errorf("NextDeadline() = base%+d, %v, want base%+d, true", got-base, ok, tt.want)
			}
		})
	}
	w := New(epoch2026, 0)
	if got, ok := w.NextDeadline(); ok {
		t.Errorf("NextDeadline() on an empty wheel = %d, true, want false", got)
	}
}

func TestTick(t *testing.T) {
	tests := []struct {
		tick time.Duration
		want time.Duration
	}{
		{0, 1 << 20},
		{-time.Second, 1 << 20},
		{1, 1},
		{time.Millisecond, 1 << 19},
		{1 << 20, 1 << 20},
		{365 * 24 * time.Hour, 1 << 50},
	}
	for _, tt := range tests {
		if got := New(epoch2026, tt.tick).Tick(); got != tt.want {
			t.Errorf("New(now, %v).Tick() = %v, want %v", tt.tick, got, tt.want)
		}
	}
}

// TestLinkSize holds the documented per-handle cost: 16 bytes a link, 1 KiB
// a chunk.
func TestLinkSize(t *testing.T) {
	if got := unsafe.Sizeof(link{}); got != 16 {
		t.Errorf("unsafe.Sizeof(link{}) = %d, want 16", got)
	}
	if got := unsafe.Sizeof([linkChunk]link{}); got != 1024 {
		t.Errorf("unsafe.Sizeof([linkChunk]link{}) = %d, want 1024", got)
	}
}

func TestNoAllocations(t *testing.T) {
	w := New(epoch2026, 0)
	const handles = 1024
	const stride = 97 // handles over about 1550 link chunks
	spans := []int64{ms, 50 * ms, sec, hour, 3 * day, 3 * year}
	for i := range handles {
		w.Schedule(Handle(i*stride), epoch2026+1+int64(i)*spans[i%len(spans)]/handles)
	}
	now := epoch2026
	i := 0
	fire := func(h Handle) { w.Schedule(h, now+hour) }
	tests := []struct {
		name string
		f    func()
	}{
		{"Schedule+Cancel", func() {
			h := Handle(i % handles * stride)
			i++
			w.Cancel(h)
			w.Schedule(h, now+int64(i)*ms)
		}},
		{"reschedule", func() {
			i++
			w.Schedule(Handle(i%handles*stride), now+spans[i%len(spans)])
		}},
		{"first Schedule of a handle whose chunk exists", func() {
			i++
			h := Handle(1 + i%(handles-1)*stride) // never a multiple of stride
			w.Schedule(h, now+spans[i%len(spans)])
			w.Cancel(h)
		}},
		{"Advance", func() {
			now += 7 * ms
			w.Advance(now, fire)
		}},
		{"NextDeadline", func() { _, _ = w.NextDeadline() }},
		{"Scheduled+Deadline", func() {
			i++
			h := Handle(i % (2 * handles * stride)) // half beyond every chunk
			_, _ = w.Deadline(h)
			_ = w.Scheduled(h)
		}},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(1000, tt.f); got != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.name, got)
		}
	}
	if err := w.verify(); err != nil {
		t.Fatal(err)
	}
}
