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
	Schedule(h Handle, deadline int64)
	Cancel(h Handle)
	Scheduled(h Handle) bool
	Deadline(h Handle) (int64, bool)
	Advance(now int64, fire func(Handle))
	NextDeadline() (int64, bool)
	Len() int
	Now() int64
	Tick() time.Duration
	verify() error
}

var _ wheelAPI = (*Wheel)(nil)

// modelHandles are the handles the property schedules: a dense run in the
// first link chunk, both sides of the first chunk boundaries, and handles
// many chunks further on, so a wheel that confuses chunks is caught.
var modelHandles = []Handle{0, 1, 2, 3, 4, 5, 62, 63, 64, 65, 4097, 100_000}

// unseenHandles are never scheduled by the property: in the first chunk,
// in a later chunk that exists (it holds 100_000), in chunks that do not,
// and negative. The wheel must report each unscheduled.
var unseenHandles = []Handle{6, 61, 66, 100_001, 100_063, 100_064, 1 << 20, math.MaxInt32, -1, math.MinInt32}

// noResched means a fire callback leaves the fired handle alone.
const noResched = int64(-1 << 62)

// machine is the model-based state machine: a wheel under test and a plain
// map from handle to deadline holding what should be scheduled.
type machine struct {
	w     wheelAPI
	model map[Handle]int64
	now   int64 // the model's wheel time
	shift uint  // log2 of the wheel's tick
}

// wheelProperty returns the model-based property for wheels built by
// newWheel: random Schedule, Cancel, reschedule and Advance (by jumps from
// sub-tick to years, and to NextDeadline like a reaper), with fire callbacks
// that reschedule the fired handle and cancel or reschedule others, checked
// against the map after every step.
func wheelProperty(newWheel func(now int64, tick time.Duration) wheelAPI) func(*rapid.T) {
	return func(t *rapid.T) {
		tick := rapid.SampledFrom([]time.Duration{
			0, 1, time.Microsecond, time.Millisecond, 3 * time.Millisecond, time.Second, time.Hour,
		}).Draw(t, "tick")
		start := epoch2026 + rapid.Int64Range(0, int64(400*24*time.Hour)).Draw(t, "start")
		m := &machine{
			w:     newWheel(start, tick),
			model: map[Handle]int64{},
			now:   start,
		}
		m.shift = uint(bits.TrailingZeros64(uint64(m.w.Tick())))
		handle := rapid.SampledFrom(modelHandles)
		t.Repeat(map[string]func(*rapid.T){
			"schedule": func(t *rapid.T) {
				h := handle.Draw(t, "handle")
				d := m.drawTime(t, "deadline")
				m.w.Schedule(h, d)
				m.model[h] = d
			},
			"cancel": func(t *rapid.T) {
				h := handle.Draw(t, "handle")
				m.w.Cancel(h)
				delete(m.model, h)
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
// handles due by then fire, once each, unscheduled while firing. The fire
// callback may reschedule the fired handle, and cancel or reschedule any
// other; a handle touched that way before its turn must not fire in this
// Advance, and one scheduled at or before now waits for the next.
func (m *machine) advance(t *rapid.T, target int64) {
	now := max(target, m.now)
	resched := rapid.SampledFrom([]int64{
		noResched, -1, 0, 1, int64(1) << m.shift, int64(time.Hour),
	}).Draw(t, "rescheduleInFireBy")
	reschedAt := now - 1
	if resched >= 0 {
		reschedAt = addSat(now, resched)
	}
	// pending holds the handles that must still fire in this Advance.
	pending := map[Handle]bool{}
	for h, d := range m.model {
		if d <= now {
			pending[h] = true
		}
	}
	touched := map[Handle]bool{} // scheduled or cancelled by a callback
	fired := map[Handle]bool{}
	m.now = now // callbacks draw times relative to the new time
	m.w.Advance(target, func(h Handle) {
		d, scheduled := m.model[h]
		switch {
		case m.w.Scheduled(h):
			t.Fatalf("handle %d still scheduled while firing", h)
		case fired[h]:
			t.Fatalf("handle %d fired twice in Advance(%d)", h, now)
		case !scheduled:
			t.Fatalf("handle %d fired but not scheduled (cancelled or fired before)", h)
		case d > now:
			t.Fatalf("handle %d fired early: deadline %d > now %d by %v", h, d, now, time.Duration(d-now))
		case touched[h]:
			t.Fatalf("handle %d fired in the Advance whose callback rescheduled it to %d", h, d)
		}
		if d, ok := m.w.Deadline(h); ok {
			t.Fatalf("Deadline(%d) = %d, true while firing, want false", h, d)
		}
		fired[h] = true
		delete(pending, h)
		delete(m.model, h)
		if resched != noResched && h%2 == 0 {
			m.w.Schedule(h, reschedAt)
			m.model[h] = reschedAt
			touched[h] = true
		}
		switch rapid.IntRange(0, 3).Draw(t, "touchInFire") {
		case 1:
			o := rapid.SampledFrom(modelHandles).Draw(t, "cancelInFire")
			m.w.Cancel(o)
			delete(m.model, o)
			delete(pending, o)
			touched[o] = true
		case 2:
			o := rapid.SampledFrom(modelHandles).Draw(t, "rescheduleInFire")
			d := m.drawTime(t, "rescheduleInFireAt")
			m.w.Schedule(o, d)
			m.model[o] = d
			delete(pending, o)
			touched[o] = true
		}
	})
	for _, h := range slices.Sorted(maps.Keys(pending)) {
		t.Fatalf("handle %d not fired: deadline <= now %d", h, now)
	}
	if got := m.w.Now(); got != now {
		t.Fatalf("Now() = %d after Advance(%d), want %d", got, target, now)
	}
}

// check compares the wheel's observable state with the model.
func (m *machine) check(t *rapid.T) {
	if got, want := m.w.Len(), len(m.model); got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
	for _, h := range modelHandles {
		d, ok := m.w.Deadline(h)
		md, want := m.model[h]
		if ok != want || (ok && d != md) {
			t.Fatalf("Deadline(%d) = %d, %v, want %d, %v", h, d, ok, md, want)
		}
		if got := m.w.Scheduled(h); got != want {
			t.Fatalf("Scheduled(%d) = %v, want %v", h, got, want)
		}
	}
	for _, h := range unseenHandles {
		if d, ok := m.w.Deadline(h); ok || d != 0 || m.w.Scheduled(h) {
			t.Fatalf("never-scheduled handle %d: Deadline() = %d, %v, Scheduled() = %v, want 0, false, false",
				h, d, ok, m.w.Scheduled(h))
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
			t.Fatalf("NextDeadline() = %d with a handle due at %d <= now %d, want %d", next, earliest, m.now, afterNow)
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
		return New(now, tick)
	}))
}

// Planted bugs: wrappers around a correct wheel, built only in this test, that
// the model-based property must catch.

// bucketGranular lacks the exact-deadline check: it fires the whole level-0
// bucket holding the new time, so handles sharing it with due ones fire early.
type bucketGranular struct{ *Wheel }

func (w bucketGranular) Advance(now int64, fire func(Handle)) {
	w.Wheel.Advance(now, fire)
	cur := int(uint64(w.now>>w.shift) & slotMask) // level 0's list for now
	for w.heads[cur] != none {
		h := w.heads[cur]
		w.unlink(h)
		w.n--
		fire(h)
	}
}

// lostCancel ignores Cancel for some handles.
type lostCancel struct{ *Wheel }

func (w lostCancel) Cancel(h Handle) {
	if h%3 != 2 {
		w.Wheel.Cancel(h)
	}
}

// forgetfulCascade drops the handles an Advance would move down from level 1
// or higher, as a wheel that cascades into a stale slot might.
type forgetfulCascade struct{ *Wheel }

func (w forgetfulCascade) Advance(now int64, fire func(Handle)) {
	if now > w.now {
		s := w.shift + slotBits
		for l := 1; l < w.nlevels && now>>s != w.now>>s; l++ {
			list := l*slots + int(uint64(now>>s)&slotMask)
			for h := w.heads[list]; h != none; h = w.heads[list] {
				w.unlink(h)
				w.n--
			}
			s += slotBits
		}
	}
	w.Wheel.Advance(now, fire)
}

// firstChunkOnly keeps every handle's link in the first chunk, as a link
// lookup that forgot the chunk index would: handles 64 apart alias.
type firstChunkOnly struct{ *Wheel }

func (w firstChunkOnly) Schedule(h Handle, d int64) { w.Wheel.Schedule(h&(linkChunk-1), d) }
func (w firstChunkOnly) Cancel(h Handle)            { w.Wheel.Cancel(h & (linkChunk - 1)) }
func (w firstChunkOnly) Scheduled(h Handle) bool    { return w.Wheel.Scheduled(h & (linkChunk - 1)) }
func (w firstChunkOnly) Deadline(h Handle) (int64, bool) {
	return w.Wheel.Deadline(h & (linkChunk - 1))
}

// staleBackLink files handles as a push that forgets to point the old list
// head's back link at the new head would: the lists stay walkable forwards,
// so the invariant checker sees it at once, but unlinking the old head later
// drops the new one from its list, so it never fires.
type staleBackLink struct{ *Wheel }

func (w staleBackLink) Schedule(h Handle, d int64) {
	w.Wheel.Schedule(h, d)
	if next := w.link(h).next; next != none {
		w.link(next).prev = w.link(h).prev
	}
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
		wrap func(*Wheel) wheelAPI
		want []string // the failure message mentions one of these
	}{
		{"fire-whole-bucket", func(w *Wheel) wheelAPI { return bucketGranular{w} }, []string{"fired early", "fired twice"}},
		{"lost-cancel", func(w *Wheel) wheelAPI { return lostCancel{w} }, []string{"Len()", "not scheduled"}},
		{"forgetful-cascade", func(w *Wheel) wheelAPI { return forgetfulCascade{w} }, []string{"not fired", "Len()"}},
		{"first-chunk-only", func(w *Wheel) wheelAPI { return firstChunkOnly{w} }, []string{"Deadline(", "Scheduled(", "never-scheduled"}},
		{"stale-back-link", func(w *Wheel) wheelAPI { return staleBackLink{w} }, []string{"bad back link", "NextDeadline()", "not fired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordTB{name: t.Name()}
			rapid.Check(rec, wheelProperty(func(now int64, tick time.Duration) wheelAPI {
				return tt.wrap(New(now, tick))
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

// TestWheelMatchesModelManyHandles is a seeded soak beside the rapid
// property: thousands of handles over many link chunks, so buckets hold many
// handles and cascades move many at once, checked against the same kind of
// map after every Advance.
func TestWheelMatchesModelManyHandles(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 2026))
		w := New(epoch2026, 0)
		const handles = 2000
		model := map[Handle]int64{}
		spans := []int64{1 << 20, 50 << 20, int64(time.Minute), int64(time.Hour), int64(40 * 24 * time.Hour), int64(3 * 365 * 24 * time.Hour)}
		for op := range 40_000 {
			h := Handle(rng.IntN(handles))
			switch r := rng.IntN(10); {
			case r < 6:
				d := w.Now() - int64(time.Second) + rng.Int64N(spans[rng.IntN(len(spans))])
				w.Schedule(h, d)
				model[h] = d
			case r < 8:
				w.Cancel(h)
				delete(model, h)
			default:
				now := w.Now() + rng.Int64N(spans[rng.IntN(len(spans)-1)])/8
				w.Advance(now, func(h Handle) {
					if d, ok := model[h]; !ok || d > now {
						t.Fatalf("seed %d op %d: handle %d fired at %d, model deadline %d, %v", seed, op, h, now, d, ok)
					}
					delete(model, h)
				})
				for h, d := range model {
					if d <= now {
						t.Fatalf("seed %d op %d: handle %d not fired: deadline %d <= now %d", seed, op, h, d, now)
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
				for h := range Handle(handles) {
					d, ok := w.Deadline(h)
					if md, want := model[h]; ok != want || d != md {
						t.Fatalf("seed %d op %d: Deadline(%d) = %d, %v, want %d, %v", seed, op, h, d, ok, md, want)
					}
				}
			}
		}
	}
}
