package ttl

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// epoch2026 is a realistic Unix-nanosecond time: the engine's time line.
var epoch2026 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC).UnixNano()

// wheelAPI is the Wheel surface the model-based property drives, so that a
// wrapper with a planted bug can be checked by the very same property.
type wheelAPI interface {
	Schedule(n *Node[int], deadline int64)
	Cancel(n *Node[int])
	Advance(now int64, fire func(*Node[int]))
	NextDeadline() (int64, bool)
	Len() int
	Now() int64
	Tick() time.Duration
	verify() error
}

var _ wheelAPI = (*Wheel[int])(nil)

// noResched means a fire callback leaves the fired node alone.
const noResched = int64(-1 << 62)

// machine is the model-based state machine: a wheel under test and a plain
// map from node index to deadline holding what should be scheduled.
type machine struct {
	w     wheelAPI
	nodes []*Node[int]
	model map[int]int64
	now   int64 // the model's wheel time
	shift uint  // log2 of the wheel's tick
}

// wheelProperty returns the model-based property for wheels built by
// newWheel: random Schedule, Cancel, reschedule and Advance (by jumps from
// sub-tick to years, and to NextDeadline like a reaper) checked against the
// map after every step.
func wheelProperty(newWheel func(now int64, tick time.Duration) wheelAPI) func(*rapid.T) {
	return func(t *rapid.T) {
		tick := rapid.SampledFrom([]time.Duration{
			0, 1, time.Microsecond, time.Millisecond, 3 * time.Millisecond, time.Second, time.Hour,
		}).Draw(t, "tick")
		start := epoch2026 + rapid.Int64Range(0, int64(400*24*time.Hour)).Draw(t, "start")
		m := &machine{
			w:     newWheel(start, tick),
			model: map[int]int64{},
			now:   start,
		}
		m.shift = uint(bits.TrailingZeros64(uint64(m.w.Tick())))
		for i := range 12 {
			m.nodes = append(m.nodes, &Node[int]{Value: i})
		}
		node := rapid.IntRange(0, len(m.nodes)-1)
		t.Repeat(map[string]func(*rapid.T){
			"schedule": func(t *rapid.T) {
				i := node.Draw(t, "node")
				d := m.drawTime(t, "deadline")
				m.w.Schedule(m.nodes[i], d)
				m.model[i] = d
			},
			"cancel": func(t *rapid.T) {
				i := node.Draw(t, "node")
				m.w.Cancel(m.nodes[i])
				delete(m.model, i)
			},
			"advance": func(t *rapid.T) {
				m.advance(t, m.drawTime(t, "to"))
			},
			"advanceToNextDeadline": func(t *rapid.T) {
				d, ok := m.w.NextDeadline()
				if !ok {
					t.Skip("empty wheel")
				}
				m.advance(t, d)
			},
			"": m.check,
		})
	}
}

// drawTime draws a time relative to the model's wheel time: in the past,
// now, sub-tick, a few ticks, minutes, hours, days or years ahead, or just
// around a bucket boundary of some level.
func (m *machine) drawTime(t *rapid.T, label string) int64 {
	tick := int64(1) << m.shift
	upTo := func(d int64) int64 { return addSat(m.now, rapid.Int64Range(1, d).Draw(t, label)) }
	switch rapid.IntRange(0, 9).Draw(t, label+"Kind") {
	case 0:
		return m.now - rapid.Int64Range(0, int64(time.Hour)).Draw(t, label)
	case 1:
		return m.now
	case 2:
		return upTo(tick)
	case 3:
		return upTo(5 * tick)
	case 4:
		return upTo(int64(10 * time.Minute))
	case 5:
		return upTo(int64(30 * time.Hour))
	case 6:
		return upTo(int64(40 * 24 * time.Hour))
	case 7:
		return upTo(int64(5 * 365 * 24 * time.Hour))
	case 8:
		return upTo(200 * tick)
	default:
		level := rapid.IntRange(0, 7).Draw(t, label+"Level")
		s := min(m.shift+slotBits*uint(level), horizonShift)
		k := rapid.Int64Range(0, slots+1).Draw(t, label+"Buckets")
		delta := rapid.Int64Range(-1, 1).Draw(t, label+"Delta")
		if m.now>>s > math.MaxInt64>>s-k-1 {
			return math.MaxInt64 // the end of time is an edge worth testing too
		}
		return ((m.now>>s)+k)<<s + delta
	}
}

// addSat returns a+b for b >= 0, or math.MaxInt64 if that overflows.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// advance advances the wheel to target and checks that exactly the modelled
// nodes due by then fire, once each, unlinked, possibly rescheduling some
// from the fire callback.
func (m *machine) advance(t *rapid.T, target int64) {
	now := max(target, m.now)
	resched := rapid.SampledFrom([]int64{
		noResched, -1, 0, 1, int64(1) << m.shift, int64(time.Hour),
	}).Draw(t, "rescheduleInFireBy")
	reschedAt := now - 1
	if resched >= 0 {
		reschedAt = addSat(now, resched)
	}
	fired := map[int]bool{}
	later := map[int]int64{}
	m.w.Advance(target, func(n *Node[int]) {
		i := n.Value
		d, scheduled := m.model[i]
		switch {
		case n.Scheduled():
			t.Fatalf("node %d still scheduled while firing", i)
		case fired[i]:
			t.Fatalf("node %d fired twice in Advance(%d)", i, now)
		case !scheduled:
			t.Fatalf("node %d fired but not scheduled (cancelled or fired before)", i)
		case d > now:
			t.Fatalf("node %d fired early: deadline %d > now %d by %v", i, d, now, time.Duration(d-now))
		}
		fired[i] = true
		if resched != noResched && i%2 == 0 {
			m.w.Schedule(n, reschedAt)
			later[i] = reschedAt
		}
	})
	for _, i := range slices.Sorted(maps.Keys(m.model)) {
		if d := m.model[i]; d <= now && !fired[i] {
			t.Fatalf("node %d not fired: deadline %d <= now %d by %v", i, d, now, time.Duration(now-d))
		}
	}
	for i := range fired {
		delete(m.model, i)
	}
	maps.Copy(m.model, later)
	m.now = now
	if got := m.w.Now(); got != now {
		t.Fatalf("Now() = %d after Advance(%d), want %d", got, target, now)
	}
}

// check compares the wheel's observable state with the model.
func (m *machine) check(t *rapid.T) {
	if got, want := m.w.Len(), len(m.model); got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
	for i, n := range m.nodes {
		d, ok := n.Deadline()
		md, want := m.model[i]
		if ok != want || (ok && d != md) {
			t.Fatalf("node %d Deadline() = %d, %v, want %d, %v", i, d, ok, md, want)
		}
	}
	next, ok := m.w.NextDeadline()
	if ok != (len(m.model) > 0) {
		t.Fatalf("NextDeadline() ok = %v with %d scheduled", ok, len(m.model))
	}
	if ok {
		earliest := slices.Min(slices.Collect(maps.Values(m.model)))
		// At the end of time nothing is after now: the wheel says now.
		afterNow := addSat(m.now, 1)
		switch {
		case earliest <= m.now && next != afterNow:
			t.Fatalf("NextDeadline() = %d with a node due at %d <= now %d, want %d", next, earliest, m.now, afterNow)
		case earliest > m.now && (next > earliest || next <= m.now):
			t.Fatalf("NextDeadline() = %d, want in (now %d, earliest %d]", next, m.now, earliest)
		}
	}
	if err := m.w.verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

func TestWheelMatchesModel(t *testing.T) {
	rapid.Check(t, wheelProperty(func(now int64, tick time.Duration) wheelAPI {
		return New[int](now, tick)
	}))
}

// Planted bugs: wrappers around a correct wheel, built only in this test, that
// the model-based property must catch.

// bucketGranular lacks the exact-deadline check: it fires the whole level-0
// bucket holding the new time, so nodes sharing it with due ones fire early.
type bucketGranular struct{ *Wheel[int] }

func (w bucketGranular) Advance(now int64, fire func(*Node[int])) {
	w.Wheel.Advance(now, fire)
	cur := &w.levels[0].heads[uint64(w.now>>w.shift)&slotMask]
	for *cur != nil {
		n := *cur
		n.unlink()
		w.n--
		fire(n)
	}
}

// lostCancel ignores Cancel for some nodes.
type lostCancel struct{ *Wheel[int] }

func (w lostCancel) Cancel(n *Node[int]) {
	if n.Value%3 != 2 {
		w.Wheel.Cancel(n)
	}
}

// forgetfulCascade drops the nodes an Advance would move down from level 1
// or higher, as a wheel that cascades into a stale slot might.
type forgetfulCascade struct{ *Wheel[int] }

func (w forgetfulCascade) Advance(now int64, fire func(*Node[int])) {
	if now > w.now {
		s := w.shift + slotBits
		for l := 1; l < len(w.levels) && now>>s != w.now>>s; l++ {
			slot := &w.levels[l].heads[uint64(now>>s)&slotMask]
			for n := *slot; n != nil; n = *slot {
				n.unlink()
				w.n--
			}
			s += slotBits
		}
	}
	w.Wheel.Advance(now, fire)
}

func TestModelCatchesPlantedBugs(t *testing.T) {
	for _, f := range []struct{ name, value string }{
		{"rapid.nofailfile", "true"}, // a planted failure is expected: keep testdata clean
		{"rapid.shrinktime", "1s"},
	} {
		old := flag.Lookup(f.name).Value.String()
		if err := flag.Set(f.name, f.value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(f.name, old) })
	}
	tests := []struct {
		name string
		wrap func(*Wheel[int]) wheelAPI
		want []string // the failure message mentions one of these
	}{
		{"fire-whole-bucket", func(w *Wheel[int]) wheelAPI { return bucketGranular{w} }, []string{"fired early", "fired twice"}},
		{"lost-cancel", func(w *Wheel[int]) wheelAPI { return lostCancel{w} }, []string{"Len()", "not scheduled"}},
		{"forgetful-cascade", func(w *Wheel[int]) wheelAPI { return forgetfulCascade{w} }, []string{"not fired", "Len()"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordTB{name: t.Name()}
			rapid.Check(rec, wheelProperty(func(now int64, tick time.Duration) wheelAPI {
				return tt.wrap(New[int](now, tick))
			}))
			if !rec.failed {
				t.Fatalf("the model-based property passed a wheel with planted bug %s", tt.name)
			}
			msg := strings.Join(rec.msgs, "\n")
			if !slices.ContainsFunc(tt.want, func(w string) bool { return strings.Contains(msg, w) }) {
				t.Errorf("planted bug %s caught, but the failure mentions none of %q:\n%s", tt.name, tt.want, msg)
			}
			first, _, _ := strings.Cut(msg, "\nTo reproduce")
			t.Logf("caught: %s", first)
		})
	}
}

// recordTB is a rapid.TB that records failures instead of failing the test,
// so a test can assert that a property fails.
type recordTB struct {
	name   string
	failed bool
	msgs   []string
}

var _ rapid.TB = (*recordTB)(nil)

func (r *recordTB) Helper()                   {}
func (r *recordTB) Name() string              { return r.name }
func (r *recordTB) Logf(string, ...any)       {}
func (r *recordTB) Log(...any)                {}
func (r *recordTB) Skipf(string, ...any)      {}
func (r *recordTB) Skip(...any)               {}
func (r *recordTB) SkipNow()                  {}
func (r *recordTB) Errorf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)) }
func (r *recordTB) Error(a ...any)            { r.fail(fmt.Sprint(a...)) }
func (r *recordTB) Fatalf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)) }
func (r *recordTB) Fatal(a ...any)            { r.fail(fmt.Sprint(a...)) }
func (r *recordTB) FailNow()                  { r.failed = true }
func (r *recordTB) Fail()                     { r.failed = true }
func (r *recordTB) Failed() bool              { return r.failed }

func (r *recordTB) fail(msg string) {
	r.failed = true
	r.msgs = append(r.msgs, msg)
}

// TestWheelMatchesModelManyNodes is a seeded soak beside the rapid property:
// thousands of nodes, so buckets hold many nodes and cascades move many at
// once, checked against the same kind of map after every Advance.
func TestWheelMatchesModelManyNodes(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 2026))
		w := New[int](epoch2026, 0)
		nodes := make([]Node[int], 2000)
		model := map[int]int64{}
		spans := []int64{1 << 20, 50 << 20, int64(time.Minute), int64(time.Hour), int64(40 * 24 * time.Hour), int64(3 * 365 * 24 * time.Hour)}
		for i := range nodes {
			nodes[i].Value = i
		}
		for op := range 40_000 {
			i := rng.IntN(len(nodes))
			switch r := rng.IntN(10); {
			case r < 6:
				d := w.Now() - int64(time.Second) + rng.Int64N(spans[rng.IntN(len(spans))])
				w.Schedule(&nodes[i], d)
				model[i] = d
			case r < 8:
				w.Cancel(&nodes[i])
				delete(model, i)
			default:
				now := w.Now() + rng.Int64N(spans[rng.IntN(len(spans)-1)])/8
				fired := 0
				w.Advance(now, func(n *Node[int]) {
					if d, ok := model[n.Value]; !ok || d > now {
						t.Fatalf("seed %d op %d: node %d fired at %d, model deadline %d, %v", seed, op, n.Value, now, d, ok)
					}
					delete(model, n.Value)
					fired++
				})
				for i, d := range model {
					if d <= now {
						t.Fatalf("seed %d op %d: node %d not fired: deadline %d <= now %d", seed, op, i, d, now)
					}
				}
				if next, ok := w.NextDeadline(); ok && (next <= now || next > slices.Min(slices.Collect(maps.Values(model)))) {
					t.Fatalf("seed %d op %d: NextDeadline() = %d out of (now, earliest]", seed, op, next)
				}
			}
			if w.Len() != len(model) {
				t.Fatalf("seed %d op %d: Len() = %d, want %d", seed, op, w.Len(), len(model))
			}
			if op%5000 == 0 {
				if err := w.verify(); err != nil {
					t.Fatalf("seed %d op %d: %v", seed, op, err)
				}
			}
		}
	}
}
