package ttl

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// background fills w with n nodes whose deadlines spread over ten minutes to
// a day ahead, so benchmarks run against a populated wheel. Their Value.exp
// is a period of one day, for benchmarks that re-arm fired nodes.
func background(w *Wheel[item], n int) []Node[item] {
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := make([]Node[item], n)
	for i := range nodes {
		nodes[i].Value.exp = day
		w.Schedule(&nodes[i], w.Now()+int64(10*time.Minute)+rng.Int64N(day))
	}
	return nodes
}

var ttls = []time.Duration{10 * time.Millisecond, 30 * time.Second, time.Hour, 3 * 365 * 24 * time.Hour}

func BenchmarkScheduleCancel(b *testing.B) {
	for _, ttl := range ttls {
		b.Run(fmt.Sprintf("ttl=%v", ttl), func(b *testing.B) {
			w := New[item](epoch2026, 0)
			background(w, 100_000)
			var n Node[item]
			b.ReportAllocs()
			i := int64(0)
			for b.Loop() {
				i++
				w.Schedule(&n, w.now+int64(ttl)+i&1023)
				w.Cancel(&n)
			}
		})
	}
}

func BenchmarkReschedule(b *testing.B) {
	for _, ttl := range ttls {
		b.Run(fmt.Sprintf("ttl=%v", ttl), func(b *testing.B) {
			w := New[item](epoch2026, 0)
			nodes := background(w, 100_000)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				w.Schedule(&nodes[i%len(nodes)], w.now+int64(ttl)+int64(i&1023))
			}
		})
	}
}

// BenchmarkAdvance advances one tick at a time with a steady N nodes due per
// tick (each fired node is re-armed one tick later), over 100k background
// nodes re-armed daily (about one more due per tick once a day has passed).
func BenchmarkAdvance(b *testing.B) {
	for _, expiring := range []int{0, 1, 100, 10_000} {
		b.Run(fmt.Sprintf("due/tick=%d", expiring), func(b *testing.B) {
			w := New[item](epoch2026, 0)
			background(w, 100_000)
			tick := int64(w.Tick())
			nodes := make([]Node[item], expiring)
			for i := range nodes {
				nodes[i].Value.exp = tick
				w.Schedule(&nodes[i], w.now+1+int64(i)%tick)
			}
			fired := 0
			fire := func(n *Node[item]) {
				fired++
				w.Schedule(n, n.deadline+n.Value.exp)
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
// fire and the rest cascade. The fire callback re-arms each fired node within
// twice the jump again, so the op includes that Schedule: the steady state
// of a reaper that wakes rarely.
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
			var w *Wheel[item]
			nodes := make([]Node[item], bc.timers)
			i := 0
			fired := 0
			fire := func(n *Node[item]) {
				fired++
				i++
				w.Schedule(n, w.now+offsets[i%len(offsets)])
			}
			b.ReportAllocs()
			for b.Loop() {
				if w == nil || w.now > epoch2026+100*year { // stay far from the end of int64 time
					b.StopTimer()
					w = New[item](epoch2026, 0)
					for j := range nodes {
						i++
						nodes[j] = Node[item]{}
						w.Schedule(&nodes[j], w.now+offsets[i%len(offsets)])
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
			w := New[item](epoch2026, 0)
			background(w, bc.timers)
			var n Node[item]
			w.Schedule(&n, w.now+int64(bc.nearest))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := w.NextDeadline(); !ok {
					b.Fatal("empty wheel")
				}
			}
		})
	}
}
