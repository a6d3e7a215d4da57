package ttl

import (
	"math"
	"math/rand/v2"
	"slices"
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
	node int   // for 's' and 'c'
	at   int64 // deadline for 's', time for 'a'
	want []int // for 'a': the nodes that must fire, sorted
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := New[int](tt.start, tt.tick)
			nodes := make([]Node[int], 8)
			for i := range nodes {
				nodes[i].Value = i
			}
			for si, s := range tt.steps {
				switch s.op {
				case 's':
					w.Schedule(&nodes[s.node], tt.start+s.at)
				case 'c':
					w.Cancel(&nodes[s.node])
				case 'a':
					var got []int
					w.Advance(tt.start+s.at, func(n *Node[int]) { got = append(got, n.Value) })
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

// TestReaperFiresOnTime plays the engine's reaper: sleep until NextDeadline,
// Advance to it. Every node must fire exactly at its deadline, and the
// number of wake-ups must stay within a few per level per node.
func TestReaperFiresOnTime(t *testing.T) {
	for _, tick := range []time.Duration{0, time.Nanosecond, time.Millisecond, time.Second} {
		t.Run(time.Duration(tick).String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tick)))
			w := New[int](epoch2026, tick)
			spans := []int64{ms, 100 * ms, 10 * sec, hour, 10 * day, 3 * year, 30 * year}
			nodes := make([]Node[int], 400)
			for i := range nodes {
				nodes[i].Value = i
				w.Schedule(&nodes[i], epoch2026+1+rng.Int64N(spans[i%len(spans)]))
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
				w.Advance(next, func(n *Node[int]) {
					fired++
					if n.deadline != next {
						t.Errorf("node %d with deadline %d fired at %d", n.Value, n.deadline, next)
					}
				})
			}
			if fired != len(nodes) {
				t.Errorf("fired %d nodes, want %d", fired, len(nodes))
			}
			if limit := len(nodes) * (len(w.levels) + 2); wakeups > limit {
				t.Errorf("%d wake-ups for %d nodes, want at most %d", wakeups, len(nodes), limit)
			}
			t.Logf("%d levels, %d wake-ups for %d nodes", len(w.levels), wakeups, len(nodes))
		})
	}
}

func TestFireCallbackMayScheduleAndCancel(t *testing.T) {
	t.Run("periodic self reschedule fires once per advance", func(t *testing.T) {
		w := New[int](epoch2026, 0)
		var n Node[int]
		w.Schedule(&n, epoch2026+ms)
		count := 0
		for i := int64(1); i <= 100; i++ {
			w.Advance(epoch2026+i*ms, func(n *Node[int]) {
				count++
				w.Schedule(n, epoch2026+(i+1)*ms)
			})
			if count != int(i) {
				t.Fatalf("after Advance %d fired %d times, want %d", i, count, i)
			}
		}
	})
	t.Run("reschedule into the past waits for the next advance", func(t *testing.T) {
		w := New[int](epoch2026, 0)
		var n Node[int]
		w.Schedule(&n, epoch2026)
		count := 0
		fire := func(n *Node[int]) { count++; w.Schedule(n, epoch2026-hour) }
		w.Advance(epoch2026, fire)
		if count != 1 || !n.Scheduled() {
			t.Fatalf("fired %d times, Scheduled() = %v; want 1, true", count, n.Scheduled())
		}
		if next, _ := w.NextDeadline(); next != epoch2026+1 {
			t.Errorf("NextDeadline() = %d, want now+1 = %d", next, epoch2026+1)
		}
		w.Advance(epoch2026, fire)
		if count != 2 {
			t.Fatalf("fired %d times, want 2", count)
		}
	})
	t.Run("cancelling a due node before its turn stops it", func(t *testing.T) {
		w := New[int](epoch2026, 0)
		nodes := make([]Node[int], 10)
		for i := range nodes {
			nodes[i].Value = i
			w.Schedule(&nodes[i], epoch2026+sec)
		}
		count := 0
		w.Advance(epoch2026+sec, func(n *Node[int]) {
			count++
			if n.Scheduled() {
				t.Errorf("node %d still scheduled when fired", n.Value)
			}
			for i := range nodes {
				w.Cancel(&nodes[i])
			}
		})
		if count != 1 || w.Len() != 0 {
			t.Errorf("fired %d, Len() = %d; want 1, 0", count, w.Len())
		}
	})
	t.Run("nodes left by a panicking callback fire at the next advance", func(t *testing.T) {
		w := New[int](epoch2026, 0)
		nodes := make([]Node[int], 3)
		for i := range nodes {
			w.Schedule(&nodes[i], epoch2026+ms)
		}
		func() {
			defer func() { _ = recover() }()
			w.Advance(epoch2026+ms, func(*Node[int]) { panic("callback failed") })
		}()
		if next, _ := w.NextDeadline(); w.Len() != 2 || next != epoch2026+ms+1 {
			t.Fatalf("after a panic Len() = %d, NextDeadline() = now%+d; want 2, now+1", w.Len(), next-w.Now())
		}
		if err := w.verify(); err != nil {
			t.Fatal(err)
		}
		count := 0
		w.Advance(epoch2026+ms, func(*Node[int]) { count++ })
		if count != 2 || w.Len() != 0 {
			t.Errorf("next Advance fired %d, Len() = %d; want 2, 0", count, w.Len())
		}
	})
	t.Run("Advance from a callback panics", func(t *testing.T) {
		w := New[int](epoch2026, 0)
		var n Node[int]
		w.Schedule(&n, epoch2026)
		defer func() {
			if recover() == nil {
				t.Fatal("nested Advance did not panic")
			}
			w.Advance(epoch2026, func(*Node[int]) {}) // the wheel is usable again
		}()
		w.Advance(epoch2026, func(*Node[int]) { w.Advance(epoch2026, nil) })
	})
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
			w := New[int](base+7, 0)
			var n Node[int]
			w.Schedule(&n, base+tt.deadline)
			if got, ok := w.NextDeadline(); !ok || got != base+tt.want {
				t.Errorf("NextDeadline() = base%+d, %v, want base%+d, true", got-base, ok, tt.want)
			}
		})
	}
	w := New[int](epoch2026, 0)
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
		if got := New[int](epoch2026, tt.tick).Tick(); got != tt.want {
			t.Errorf("New(now, %v).Tick() = %v, want %v", tt.tick, got, tt.want)
		}
	}
}

// item is the engine's wheel payload: key, value, deadline.
type item struct {
	key, value string
	exp        int64
}

func TestNodeSize(t *testing.T) {
	if got := unsafe.Sizeof(Node[item]{}); got != 64 {
		t.Errorf("unsafe.Sizeof(Node[item]{}) = %d, want 64", got)
	}
	if got := unsafe.Sizeof(Node[struct{}]{}); got != 3*unsafe.Sizeof(uintptr(0)) {
		t.Errorf("unsafe.Sizeof(Node[struct{}]{}) = %d, want 3 words", got)
	}
}

func TestNoAllocations(t *testing.T) {
	w := New[item](epoch2026, 0)
	nodes := make([]Node[item], 1024)
	spans := []int64{ms, 50 * ms, sec, hour, 3 * day, 3 * year}
	for i := range nodes {
		w.Schedule(&nodes[i], epoch2026+1+int64(i)*spans[i%len(spans)]/int64(len(nodes)))
	}
	now := epoch2026
	i := 0
	fire := func(n *Node[item]) { w.Schedule(n, now+hour) }
	tests := []struct {
		name string
		f    func()
	}{
		{"Schedule+Cancel", func() {
			n := &nodes[i%len(nodes)]
			i++
			w.Cancel(n)
			w.Schedule(n, now+int64(i)*ms)
		}},
		{"reschedule", func() {
			i++
			w.Schedule(&nodes[i%len(nodes)], now+spans[i%len(spans)])
		}},
		{"Advance", func() {
			now += 7 * ms
			w.Advance(now, fire)
		}},
		{"NextDeadline", func() { _, _ = w.NextDeadline() }},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(1000, tt.f); got != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.name, got)
		}
	}
}
