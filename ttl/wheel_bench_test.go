package ttl

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// timers is a benchmark's own record of its handles, indexed by handle, as
// the engine keeps each entry's deadline beside the wheel: the deadline a
// handle was last scheduled at and the period a fire callback re-arms it by.
type timers struct {
	deadline []int64
	period   []int64
}

// add schedules the next handle (one past the last added) at deadline with
// the given re-arm period and returns it.
func (tm *timers) add(w *Wheel, deadline, period int64) Handle {
	h := Handle(len(tm.deadline))
	tm.deadline = append(tm.deadline, deadline)
	tm.period = append(tm.period, period)
	w.Schedule(h, deadline)
	return h
}

// rearm is a fire callback that schedules h again one period after its
// deadline.
func (tm *timers) rearm(w *Wheel, h Handle) {
	tm.deadline[h] += tm.period[h]
	w.Schedule(h, tm.deadline[h])
}

// background fills w with handles 0 to n-1 whose deadlines spread over ten
// minutes to a day ahead, so benchmarks run against a populated wheel. Their
// period is one day, for benchmarks that re-arm fired handles.
func background(w *Wheel, n int) *timers {
	rng := rand.New(rand.NewPCG(1, 2))
	tm := &timers{}
	for range n {
		tm.add(w, w.Now()+int64(10*time.Minute)+rng.Int64N(day), day)
	}
	return tm
}

var ttls = []time.Duration{10 * time.Millisecond, 30 * time.Second, time.Hour, 3 * 365 * 24 * time.Hour}

func BenchmarkScheduleCancel(b *testing.B) {
	for _, ttl := range ttls {
		b.Run(fmt.Sprintf("ttl=%v", ttl), func(b *testing.B) {
			w := New(epoch2026, 0)
			background(w, 100_000)
			h := Handle(100_000)
			w.Schedule(h, w.now+int64(ttl)) // its link chunk now exists
			w.Cancel(h)
			b.ReportAllocs()
			i := int64(0)
			for b.Loop() {
				i++
				w.Schedule(h, w.now+int64(ttl)+i&1023)
				w.Cancel(h)
			}
		})
	}
}

func BenchmarkReschedule(b *testing.B) {
	for _, ttl := range ttls {
		b.Run(fmt.Sprintf("ttl=%v", ttl), func(b *testing.B) {
			w := New(epoch2026, 0)
			n := len(background(w, 100_000).deadline)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				w.Schedule(Handle(i%n), w.now+int64(ttl)+int64(i&1023))
			}
		})
	}
}

// BenchmarkAdvance advances one tick at a time with a steady N handles due
// per tick (each fired handle is re-armed one tick later), over 100k
// background handles re-armed daily (about one more due per tick once a day
// has passed).
func BenchmarkAdvance(b *testing.B) {
	for _, expiring := range []int{0, 1, 100, 10_000} {
		b.Run(fmt.Sprintf("due/tick=%d", expiring), func(b *testing.B) {
			w := New(epoch2026, 0)
			tm := background(w, 100_000)
			tick := int64(w.Tick())
			for i := range expiring {
				tm.add(w, w.now+1+int64(i)%tick, tick)
			}
			fired := 0
			fire := func(h Handle) {
				fired++
				tm.rearm(w, h)
			}
			b.ReportAllocs()
			now := w.now
			for b.Loop() {
				now += tick
				w.Advance(now, fire)
			}
			b.ReportMetric(float64(fired)/float64(b.N), "fired/op")
		})
	}
}

// BenchmarkAdvanceJump advances by a long jump (10 hours is 34 million
// default ticks) with a few timers spread over twice the jump, so about half
// fire and the rest cascade. The fire callback re-arms each fired handle
// within twice the jump again, so the op includes that Schedule: the steady
// state of a reaper that wakes rarely.
func BenchmarkAdvanceJump(b *testing.B) {
	for _, bc := range []struct {
		jump   time.Duration
		timers int
	}{
		{10 * time.Hour, 16},
		{10 * time.Hour, 1000},
		{30 * 24 * time.Hour, 16},
	} {
		b.Run(fmt.Sprintf("jump=%v,timers=%d", bc.jump, bc.timers), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			offsets := make([]int64, 4096)
			for i := range offsets {
				offsets[i] = 1 + rng.Int64N(2*int64(bc.jump))
			}
			var w *Wheel
			i := 0
			fired := 0
			fire := func(h Handle) {
				fired++
				i++
				w.Schedule(h, w.now+offsets[i%len(offsets)])
			}
			b.ReportAllocs()
			for b.Loop() {
				if w == nil || w.now > epoch2026+100*year { // stay far from the end of int64 time
					b.StopTimer()
					w = New(epoch2026, 0)
					for h := range Handle(bc.timers) {
						i++
						w.Schedule(h, w.now+offsets[i%len(offsets)])
					}
					b.StartTimer()
				}
				w.Advance(w.now+int64(bc.jump), fire)
			}
			b.ReportMetric(float64(fired)/float64(b.N), "fired/op")
		})
	}
}

func BenchmarkNextDeadline(b *testing.B) {
	for _, bc := range []struct {
		name    string
		timers  int
		nearest time.Duration
	}{
		{"nearest=5ms", 100_000, 5 * time.Millisecond},
		{"nearest=10min", 100_000, 10 * time.Minute},
		{"nearest=2years", 1, 2 * 365 * 24 * time.Hour},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := New(epoch2026, 0)
			tm := background(w, bc.timers)
			tm.add(w, w.now+int64(bc.nearest), 0)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := w.NextDeadline(); !ok {
					b.Fatal("empty wheel")
				}
			}
		})
	}
}
