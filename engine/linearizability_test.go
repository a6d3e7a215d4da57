package engine_test

// Linearizability: 8+ goroutines hammer a few keys while one goroutine
// advances the mock clock and another keeps calling Reap (the background
// reaper runs too); every operation reports (through SetNowHook) the
// time it read inside its critical section, and porcupine searches for a
// sequential order, consistent with real time, in which a single-key
// Redis model with expiry explains every result and in which the engine's
// clock never runs backwards. With the change feed recorded, each
// operation also reports the events it caused, each numbered in its key's
// order of delivery, and the order must also number every operation's
// events consecutively, in the order of the operations: a key's events
// are delivered in the linearization order of its operations.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
)

// linKV is the part of the engine the concurrent workload uses: single-key
// operations only, since each must be one critical section. The planted
// racy SetNX in planted_test.go implements it too.
type linKV interface {
	Get(key string) (string, bool)
	Set(key, value string) error
	SetPX(key, value string, ttl time.Duration) error
	SetNX(key, value string) (bool, error)
	SetNXPX(key, value string, ttl time.Duration) (bool, error)
	GetSet(key, value string) (string, bool, error)
	CompareAndDelete(key, value string) bool
	CompareAndPExpire(key, value string, ttl time.Duration) (bool, error)
	Del(keys ...string) int
	PExpire(key string, ttl time.Duration) (bool, error)
	PTTL(key string) (time.Duration, bool)
	Persist(key string) bool
}

var _ linKV = (*engine.Engine)(nil)

type linKind uint8

const (
	linGet linKind = iota
	linSet
	linSetPX
	linSetNX
	linSetNXPX
	linGetSet
	linCompareAndDelete
	linCompareAndPExpire
	linDel
	linPExpire
	linPTTL
	linPersist
	linDelPair // Del of both keys of pairKeys in one call
)

var linNames = [...]string{"Get", "Set", "SetPX", "SetNX", "SetNXPX", "GetSet", "CompareAndDelete", "CompareAndPExpire", "Del", "PExpire", "PTTL", "Persist", "DelPair"}

// linMix weights the workload towards lock traffic: acquire, read, release.
var linMix = []linKind{
	linSetNX, linSetNX, linSetNXPX, linSetNXPX, linSetNXPX, linSetNXPX,
	linGet, linGet, linGet, linGet, linPTTL, linPTTL, linCompareAndDelete, linCompareAndDelete,
	linCompareAndPExpire, linCompareAndPExpire, linPExpire, linPExpire,
	linGetSet, linDel, linSet, linSetPX, linPersist,
}

type linInput struct {
	kind linKind
	key  string
	val  string
	ttl  time.Duration
}

// linEvent is one change-feed event an operation caused: its kind and its
// number in its key's order of delivery (counting the workers' events
// only, not the reaper's).
type linEvent struct {
	kind engine.Kind
	seq  int64
}

// linOutput is a result plus the clock reading the operation reported.
type linOutput struct {
	// events are the change-feed events the operation caused, when feed
	// is set (the round recorded the feed).
	events []linEvent
	feed   bool
	val    string
	ok     bool
	failed bool // an error was returned (only ErrInvalidTTL is possible here)
	ttl    time.Duration
	n      int
	now    int64 // Unix ns the engine read, valid when hasNow
	hasNow bool
	reads  int // how many times the operation read the clock
}

// linState is one key's state along a linearization. last is the latest
// engine time seen, so time must never go backwards.
type linState struct {
	exists   bool
	val      string
	hasTTL   bool
	deadline int64
	last     int64
	// seq is how many events the key's operations have caused so far:
	// the next operation's events must be numbered from seq+1.
	seq int64
}

// linStep is the sequential specification of one key.
func linStep(state, input, output any) (bool, any) {
	s, in, out := state.(linState), input.(linInput), output.(linOutput)
	if out.hasNow {
		if out.now < s.last {
			return false, s // the engine's clock went backwards along this order
		}
		s.last = out.now
	}
	// A TTL <= 0 is rejected (or, for PExpire, deletes) without needing
	// the time; a positive one needs now to compute the deadline.
	if in.ttl <= 0 {
		switch in.kind {
		case linSetPX, linSetNXPX, linCompareAndPExpire:
			return out.failed && len(out.events) == 0, s // ErrInvalidTTL, nothing changes
		}
	} else if !out.hasNow && !out.failed {
		switch {
		case in.kind == linSetPX, out.ok && (in.kind == linSetNXPX || in.kind == linCompareAndPExpire || in.kind == linPExpire):
			return false, s // a deadline was computed without reading the clock
		}
	}
	if out.hasNow || !s.exists || !s.hasTTL || s.last > s.deadline {
		alive := s.exists && (!s.hasTTL || s.last <= s.deadline)
		return linDecide(s, in, out, alive)
	}
	// The key has a deadline not yet known to have passed, and the
	// operation read no clock. That is legal if the result and effect are
	// the same whether the key is alive or expired (a compare-and-delete of
	// another value, say), or if the reaper already reclaimed the key, which
	// it does only after the deadline: then time must have passed it.
	okAlive, nextAlive := linDecide(s, in, out, true)
	okDead, nextDead := linDecide(s, in, out, false)
	switch {
	case okAlive && okDead && nextAlive == nextDead:
		return true, nextAlive
	case okDead:
		nextDead.last = max(nextDead.last, s.deadline+1)
		return true, nextDead
	}
	return false, s
}

// linDecide applies in to s given whether the key is alive at s.last; it
// reports whether out is the right result, and its events (when recorded)
// the right events in the right place.
func linDecide(s linState, in linInput, out linOutput, alive bool) (bool, linState) {
	ok, next := linResult(s, in, out, alive)
	if !ok || !out.feed {
		return ok, next
	}
	evs := out.events
	for i, ev := range evs {
		if ev.seq != s.seq+int64(i)+1 {
			return false, s // another operation's events came between, or before
		}
	}
	reclaimed := len(evs) > 0 && evs[0].kind == engine.KindExpired
	if reclaimed {
		// The operation found the key expired and deleted it (unless the
		// reaper did first): only a key held past its deadline allows it.
		if !s.exists || alive {
			return false, s
		}
		evs = evs[1:]
		if next == s {
			next = linState{last: s.last}
		}
	}
	want := linWantEvents(in, out, alive)
	if len(evs) != len(want) {
		return false, s
	}
	for i, ev := range evs {
		if ev.kind != want[i] {
			return false, s
		}
	}
	next.seq = s.seq + int64(len(out.events))
	return true, next
}

// linWantEvents returns the events an operation with result out reports,
// after the reclamation of an expired key: Redis's keyspace events.
func linWantEvents(in linInput, out linOutput, alive bool) []engine.Kind {
	write := []engine.Kind{engine.KindSet}
	if !alive {
		write = []engine.Kind{engine.KindNew, engine.KindSet}
	}
	switch {
	case out.failed:
		return nil
	case in.kind == linSet, in.kind == linGetSet:
		return write
	case in.kind == linSetPX:
		return append(write, engine.KindExpire)
	case !out.ok && out.n == 0:
		return nil
	case in.kind == linSetNX:
		return write
	case in.kind == linSetNXPX:
		return append(write, engine.KindExpire)
	case in.kind == linCompareAndDelete, in.kind == linDel:
		return []engine.Kind{engine.KindDel}
	case in.kind == linCompareAndPExpire:
		return []engine.Kind{engine.KindExpire}
	case in.kind == linPExpire && in.ttl <= 0:
		return []engine.Kind{engine.KindDel}
	case in.kind == linPExpire:
		return []engine.Kind{engine.KindExpire}
	case in.kind == linPersist:
		return []engine.Kind{engine.KindPersist}
	}
	return nil // reads
}

// linResult applies in to s given whether the key is alive at s.last; it
// reports whether out is the right result. An operation that does not write
// leaves s as it is (an expired entry stays expired as time only advances).
func linResult(s linState, in linInput, out linOutput, alive bool) (bool, linState) {
	now := s.last
	val := s.val
	if !alive {
		val = ""
	}
	put := func(v string, ttl time.Duration) linState {
		n := linState{exists: true, val: v, last: s.last, seq: s.seq}
		if ttl > 0 {
			n.hasTTL, n.deadline = true, now+int64(ttl)
		}
		return n
	}
	gone := linState{last: s.last, seq: s.seq}
	switch in.kind {
	case linGet:
		return out.ok == alive && out.val == val, s
	case linSet:
		return true, put(in.val, 0)
	case linSetPX:
		return !out.failed, put(in.val, in.ttl)
	case linSetNX:
		if alive {
			return !out.ok, s
		}
		return out.ok, put(in.val, 0)
	case linSetNXPX:
		if out.failed {
			return false, s
		}
		if alive {
			return !out.ok, s
		}
		return out.ok, put(in.val, in.ttl)
	case linGetSet:
		return out.ok == alive && out.val == val, put(in.val, 0)
	case linCompareAndDelete:
		if alive && s.val == in.val {
			return out.ok, gone
		}
		return !out.ok, s
	case linCompareAndPExpire:
		if out.failed {
			return false, s
		}
		if alive && s.val == in.val {
			n := s
			n.hasTTL, n.deadline = true, now+int64(in.ttl)
			return out.ok, n
		}
		return !out.ok, s
	case linDel:
		if alive {
			return out.n == 1, gone
		}
		return out.n == 0, s
	case linPExpire:
		if !alive {
			return !out.ok, s
		}
		if in.ttl <= 0 {
			return out.ok, gone
		}
		n := s
		n.hasTTL, n.deadline = true, now+int64(in.ttl)
		return out.ok, n
	case linPTTL:
		switch {
		case !alive:
			return !out.ok, s
		case !s.hasTTL:
			return out.ok && out.ttl == engine.NoExpiry, s
		default:
			return out.ok && out.ttl == time.Duration(s.deadline-now), s
		}
	case linPersist:
		if alive && s.hasTTL {
			n := s
			n.hasTTL, n.deadline = false, 0
			return out.ok, n
		}
		return !out.ok, s
	}
	return false, s
}

var linModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(linInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		parts := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() any { return linState{} },
	Step: linStep,
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		at := "no clock"
		if out.hasNow {
			at = "t=" + time.Unix(0, out.now).UTC().Format("15:04:05.000000000")
		}
		for _, ev := range out.events {
			at += fmt.Sprintf(" %s#%d", ev.kind, ev.seq)
		}
		var res string
		switch in.kind {
		case linGet, linGetSet:
			res = fmt.Sprintf("%q, %v", out.val, out.ok)
		case linDel:
			res = strconv.Itoa(out.n)
		case linPTTL:
			res = fmt.Sprintf("%v, %v", out.ttl, out.ok)
		case linSet:
			res = "ok"
		default:
			res = fmt.Sprintf("%v (err %v)", out.ok, out.failed)
		}
		return fmt.Sprintf("%s(%q, %q, %v) -> %s [%s]", linNames[in.kind], in.key, in.val, in.ttl, res, at)
	},
	DescribeState: func(state any) string {
		s := state.(linState)
		if !s.exists {
			return "absent"
		}
		if !s.hasTTL {
			return fmt.Sprintf("%q", s.val)
		}
		return fmt.Sprintf("%q until %s", s.val, time.Unix(0, s.deadline).UTC().Format("15:04:05.000000000"))
	},
}

// goid returns the calling goroutine's id, parsed from its stack header
// ("goroutine 123 [running]:"). Test-only: it maps clock-hook calls to the
// worker that made them.
func goid() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	b := bytes.TrimPrefix(buf[:n], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		id, err := strconv.ParseInt(string(b[:i]), 10, 64)
		if err == nil {
			return id
		}
	}
	return -1
}

// clockSlot records the clock reads of one worker's current operation, and
// the change-feed events it caused; only that worker's goroutine writes or
// reads it (the engine calls listeners on the goroutine of the change).
type clockSlot struct {
	now    int64
	reads  int
	events []linEvent
}

type linConfig struct {
	workers int
	opsPer  int
	keys    []string
	mix     []linKind
	// wrap, if set, replaces the engine under test (a planted bug).
	wrap func(*engine.Engine) linKV
	// shards is the engine's shard count (0: 2).
	shards int
	// churn goroutines insert and delete thousands of other keys in a
	// loop, unrecorded, so that the recorded keys' shard grows, rehashes
	// and compacts (renumbering entries) under the recorded operations,
	// and its groups fill with colliding keys.
	churn int
	// feed records the change feed: each operation's events, numbered in
	// their key's order of delivery.
	feed bool
}

// linRound runs one concurrent round and returns the recorded history.
func linRound(t *testing.T, cfg linConfig, seed uint64) []porcupine.Operation {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	shards := cfg.shards
	if shards == 0 {
		shards = 2
	}
	e := engine.New(engine.Options{Clock: clk, Shards: shards})
	defer e.Close()
	var sut linKV = e
	if cfg.wrap != nil {
		sut = cfg.wrap(e)
	}

	// Workers register their goroutine ids before any operation; the map
	// is then published to the hook and only read. The hook is installed
	// at once, before any concurrent use of the engine.
	slots := map[int64]*clockSlot{}
	var published atomic.Pointer[map[int64]*clockSlot]
	engine.SetNowHook(e, func(now int64) {
		m := published.Load()
		if m == nil {
			return
		}
		if s, ok := (*m)[goid()]; ok {
			if now == math.MinInt64 { // the operation discarded its reading
				s.reads--
				return
			}
			if s.reads == 0 {
				s.now = now
			}
			s.reads++
		}
	})
	if cfg.feed {
		var seqMu sync.Mutex
		seqs := map[string]int64{}
		defer e.Listen(func(ev engine.Event) {
			m := published.Load()
			if m == nil {
				return
			}
			slot, ok := (*m)[goid()]
			if !ok {
				return // the reaper, Reap or a churn goroutine
			}
			seqMu.Lock()
			seqs[ev.Key]++
			n := seqs[ev.Key]
			seqMu.Unlock()
			slot.events = append(slot.events, linEvent{ev.Kind, n})
		})()
	}
	var mu sync.Mutex
	var registered, done sync.WaitGroup
	start := make(chan struct{})
	histories := make([][]porcupine.Operation, cfg.workers)
	begin := time.Now()
	stamp := func() int64 { return int64(time.Since(begin)) }

	registered.Add(cfg.workers)
	done.Add(cfg.workers)
	for w := 0; w < cfg.workers; w++ {
		go func() {
			defer done.Done()
			slot := &clockSlot{}
			mu.Lock()
			slots[goid()] = slot
			mu.Unlock()
			registered.Done()
			<-start
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			var mine []string // tokens this worker wrote, for compare-and-delete
			for i := 0; i < cfg.opsPer; i++ {
				in := linInput{
					kind: cfg.mix[rng.IntN(len(cfg.mix))],
					key:  cfg.keys[rng.IntN(len(cfg.keys))],
					val:  fmt.Sprintf("w%d-%d", w, i),
					// A round lasts a few ms of real time, in which the
					// advancer (1 ms of real time per Add) moves the mock
					// clock by a few hundred µs per Add: TTLs this short
					// expire while the workers run.
					ttl: time.Duration(1+rng.IntN(20)) * 50 * time.Microsecond,
				}
				if rng.IntN(10) == 0 {
					in.ttl = -time.Duration(rng.IntN(2)) * time.Millisecond // 0 or negative
				}
				if in.kind == linDelPair {
					in.key = pairKeys[0] + "+" + pairKeys[1]
				}
				if (in.kind == linCompareAndDelete || in.kind == linCompareAndPExpire) && len(mine) > 0 && rng.IntN(4) != 0 {
					in.val = mine[rng.IntN(len(mine))]
				}
				*slot = clockSlot{}
				call := stamp()
				out := linApply(sut, in)
				ret := stamp()
				out.now, out.hasNow, out.reads = slot.now, slot.reads > 0, slot.reads
				out.events, out.feed = slot.events, cfg.feed
				if isWrite(in.kind) {
					mine = append(mine, in.val)
				}
				if in.kind == linGet && out.ok {
					mine = append(mine, out.val)
				}
				histories[w] = append(histories[w], porcupine.Operation{
					ClientId: w, Input: in, Call: call, Output: out, Return: ret,
				})
				runtime.Gosched()
				if i%4 == 3 {
					// Pace the worker by the clock rather than by sleeping:
					// wait (yielding) until the advancer has moved it, so
					// the round spans many clock steps and keys expire
					// between and during operations.
					for seen := clk.Now(); !clk.Now().After(seen); {
						runtime.Gosched()
					}
				}
			}
		}()
	}
	registered.Wait()
	published.Store(&slots)

	var stop atomic.Bool
	advDone := make(chan struct{})
	go func() { // the one and only clock advancer
		defer close(advDone)
		rng := rand.New(rand.NewPCG(seed, 1<<32))
		for !stop.Load() {
			clk.Add(time.Duration(rng.IntN(400)) * time.Microsecond)
		}
	}()
	var churned sync.WaitGroup
	for c := range cfg.churn {
		churned.Add(1)
		go func() {
			defer churned.Done()
			const fill = 1000 // 1,000 keys grow one shard's index to 2,048 slots
			keys := make([]string, fill)
			for i := range keys {
				keys[i] = "fill-" + strconv.Itoa(c) + "-" + strconv.Itoa(i)
			}
			for !stop.Load() {
				for _, k := range keys {
					e.SetNXPX(k, "f", time.Hour)
				}
				for _, k := range keys {
					e.Del(k)
				}
				runtime.Gosched()
			}
		}()
	}
	reapDone := make(chan struct{})
	go func() { // synchronous reclamation racing with the workers
		defer close(reapDone)
		for !stop.Load() {
			e.Reap()
			runtime.Gosched()
		}
	}()
	close(start)
	done.Wait()
	stop.Store(true)
	churned.Wait()
	<-advDone
	<-reapDone
	if err := engine.Verify(e); err != nil {
		t.Errorf("after the round: engine.Verify = %v, want nil", err)
	}

	var history []porcupine.Operation
	for _, h := range histories {
		history = append(history, h...)
	}
	return history
}

func isWrite(k linKind) bool {
	switch k {
	case linSet, linSetPX, linSetNX, linSetNXPX, linGetSet:
		return true
	}
	return false
}

func linApply(sut linKV, in linInput) linOutput {
	var out linOutput
	var err error
	switch in.kind {
	case linGet:
		out.val, out.ok = sut.Get(in.key)
	case linSet:
		sut.Set(in.key, in.val)
		out.ok = true
	case linSetPX:
		err = sut.SetPX(in.key, in.val, in.ttl)
		out.ok = err == nil
	case linSetNX:
		out.ok, _ = sut.SetNX(in.key, in.val)
	case linSetNXPX:
		out.ok, err = sut.SetNXPX(in.key, in.val, in.ttl)
	case linGetSet:
		out.val, out.ok, _ = sut.GetSet(in.key, in.val)
	case linCompareAndDelete:
		out.ok = sut.CompareAndDelete(in.key, in.val)
	case linCompareAndPExpire:
		out.ok, err = sut.CompareAndPExpire(in.key, in.val, in.ttl)
	case linDel:
		out.n = sut.Del(in.key)
	case linPExpire:
		out.ok, _ = sut.PExpire(in.key, in.ttl)
	case linPTTL:
		out.ttl, out.ok = sut.PTTL(in.key)
	case linPersist:
		out.ok = sut.Persist(in.key)
	case linDelPair:
		out.n = sut.Del(pairKeys[0], pairKeys[1])
	}
	out.failed = err != nil
	return out
}

// expiriesSeen replays the linearization porcupine found and counts the
// operations that met a key whose deadline had passed, so a test can show
// that expiry was actually exercised.
func expiriesSeen(info porcupine.LinearizationInfo) int {
	n := 0
	for _, part := range info.PartialLinearizationsOperations() {
		var best []porcupine.Operation
		for _, l := range part {
			if len(l) > len(best) {
				best = l
			}
		}
		var st any = linModel.Init()
		for _, op := range best {
			prev := st.(linState)
			_, st = linModel.Step(st, op.Input, op.Output)
			if prev.exists && prev.hasTTL && st.(linState).last > prev.deadline {
				n++
			}
		}
	}
	return n
}

// checkHistory runs porcupine; on a violation it writes the visualization to
// a file that outlives the test and returns its path.
func checkHistory(t *testing.T, model porcupine.Model, history []porcupine.Operation) (porcupine.CheckResult, string, int) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(model, history, 30*time.Second)
	if res == porcupine.Ok {
		if model.Partition == nil {
			return res, "", 0
		}
		return res, "", expiriesSeen(info)
	}
	f, err := os.CreateTemp("", "nxkv-linearizability-*.html")
	if err != nil {
		t.Logf("cannot write visualization: %v", err)
		return res, "", 0
	}
	defer f.Close()
	if err := porcupine.Visualize(model, info, f); err != nil {
		t.Logf("cannot write visualization: %v", err)
	}
	return res, f.Name(), 0
}

var linDefault = linConfig{workers: 8, opsPer: 100, keys: []string{"k0", "k1", "k2"}, mix: linMix}

// TestLinearizable checks several concurrent rounds with porcupine, and that
// no operation reads the clock more than once.
func TestLinearizable(t *testing.T) {
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	const maxRounds = 20
	times := map[int64]bool{}
	totalExpiries := 0
	// Run the planned rounds, and more (bounded) until some operation has
	// met an expired key: the point is checking under a moving clock.
	for r := 0; r < rounds || (totalExpiries == 0 && r < maxRounds); r++ {
		seed := uint64(time.Now().UnixNano())
		history := linRound(t, linDefault, seed)
		if len(history) < 500 {
			t.Fatalf("round %d recorded %d operations, want >= 500", r, len(history))
		}
		timed := 0
		for _, op := range history {
			out := op.Output.(linOutput)
			if out.reads > 1 {
				in := op.Input.(linInput)
				t.Errorf("%s(%q) read the clock %d times, want at most once", linNames[in.kind], in.key, out.reads)
			}
			if out.hasNow {
				timed++
				times[out.now] = true
			}
		}
		res, path, expiries := checkHistory(t, linModel, history)
		if res != porcupine.Ok {
			t.Fatalf("round %d (seed %d): porcupine = %s, want Ok; visualization: %s", r, seed, res, path)
		}
		totalExpiries += expiries
		t.Logf("round %d (seed %d): %d ops, %d read the clock, %d met an expired key: linearizable", r, seed, len(history), timed, expiries)
	}
	if len(times) < 3 || totalExpiries == 0 {
		t.Errorf("%d distinct clock readings, %d ops met an expired key; want >= 3 and > 0", len(times), totalExpiries)
	}
}

// checkLinRounds runs rounds concurrent rounds of cfg (fewer with -short)
// and requires porcupine to find each linearizable under linModel. It
// returns how many change-feed events the operations caused.
func checkLinRounds(t *testing.T, cfg linConfig, rounds int, what string) (events int) {
	t.Helper()
	if testing.Short() {
		rounds = (rounds + 1) / 2
	}
	for r := range rounds {
		seed := uint64(time.Now().UnixNano())
		history := linRound(t, cfg, seed)
		n := 0
		for _, op := range history {
			n += len(op.Output.(linOutput).events)
		}
		res, path, expiries := checkHistory(t, linModel, history)
		if res != porcupine.Ok {
			t.Fatalf("round %d (seed %d): porcupine = %s, want Ok; visualization: %s", r, seed, res, path)
		}
		t.Logf("round %d (seed %d): %d ops %s, %d events, %d met an expired key: linearizable", r, seed, len(history), what, n, expiries)
		events += n
	}
	return events
}

// TestLinearizableFeed checks, with porcupine, that the change feed
// delivers each key's events in the linearization order of its
// operations, each operation's events together and named as Redis names
// them, with the clock moving and the reaper reclaiming.
func TestLinearizableFeed(t *testing.T) {
	cfg := linDefault
	cfg.feed = true
	if n := checkLinRounds(t, cfg, 4, "with the feed"); n < 100 {
		t.Fatalf("the operations caused %d events, want >= 100: is the feed recorded?", n)
	}
}

// TestLinearizableUnderResize runs the single-key check on one shard while
// other goroutines grow, rehash and compact it: lock-free reads and locked
// writes of the recorded keys, and their events, must stay linearizable
// while the index and the entry store are rebuilt under them.
func TestLinearizableUnderResize(t *testing.T) {
	cfg := linDefault
	cfg.shards, cfg.churn, cfg.feed = 1, 2, true
	cfg.keys = []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	checkLinRounds(t, cfg, 3, "under resizes")
}

// TestLinearizabilityModelRejects checks the step function itself on
// hand-made sequential facts, so a model that accepts everything cannot
// pass the suite.
func TestLinearizabilityModelRejects(t *testing.T) {
	d := epoch.UnixNano()
	held := linState{exists: true, val: "a", hasTTL: true, deadline: d + 10, last: d}
	tests := []struct {
		name  string
		state linState
		in    linInput
		out   linOutput
		want  bool
	}{
		{"get alive at deadline", held, linInput{kind: linGet}, linOutput{val: "a", ok: true, now: d + 10, hasNow: true}, true},
		{"get after deadline", held, linInput{kind: linGet}, linOutput{val: "a", ok: true, now: d + 11, hasNow: true}, false},
		{"get without clock on ttl key", held, linInput{kind: linGet}, linOutput{val: "a", ok: true}, false},
		{"time goes backwards", held, linInput{kind: linGet}, linOutput{val: "a", ok: true, now: d - 1, hasNow: true}, false},
		{"setnx on held key", held, linInput{kind: linSetNX, val: "b"}, linOutput{ok: true, now: d + 1, hasNow: true}, false},
		{"setnx after expiry", held, linInput{kind: linSetNX, val: "b"}, linOutput{ok: true, now: d + 11, hasNow: true}, true},
		{"pttl exact", held, linInput{kind: linPTTL}, linOutput{ttl: 4, ok: true, now: d + 6, hasNow: true}, true},
		{"pttl wrong", held, linInput{kind: linPTTL}, linOutput{ttl: 5, ok: true, now: d + 6, hasNow: true}, false},
		{"cad wrong value", held, linInput{kind: linCompareAndDelete, val: "z"}, linOutput{ok: true, now: d, hasNow: true}, false},
	}
	for _, tt := range tests {
		if got, _ := linStep(tt.state, tt.in, tt.out); got != tt.want {
			t.Errorf("%s: linStep = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// pairKeys are the two keys of the multi-key Del check.
var pairKeys = [2]string{"p0", "p1"}

// pairState is both keys of pairKeys; their last fields are kept equal,
// the latest engine time along the linearization.
type pairState struct{ a, b linState }

// pairStep is the sequential specification of two keys with single-key
// operations and a Del of both, which the engine documents as atomic.
func pairStep(state, input, output any) (bool, any) {
	p, in, out := state.(pairState), input.(linInput), output.(linOutput)
	sync := func(a, b linState) pairState {
		last := max(a.last, b.last)
		a.last, b.last = last, last
		return pairState{a, b}
	}
	switch in.key {
	case pairKeys[0]:
		ok, next := linStep(p.a, in, out)
		return ok, sync(next.(linState), p.b)
	case pairKeys[1]:
		ok, next := linStep(p.b, in, out)
		return ok, sync(p.a, next.(linState))
	}
	// Del of both: one clock read at most, shared by both keys.
	last := p.a.last
	if out.hasNow {
		if out.now < last {
			return false, p
		}
		last = out.now
	}
	bump := last
	deleted := 0
	keys := [2]linState{p.a, p.b}
	for i, s := range keys {
		switch {
		case !s.exists:
		case !s.hasTTL || out.hasNow || last > s.deadline:
			if !s.hasTTL || last <= s.deadline {
				deleted++
				keys[i] = linState{}
			}
		default:
			// A deadline, yet no clock read: only a key the reaper already
			// reclaimed (after its deadline) explains it.
			bump = max(bump, s.deadline+1)
		}
	}
	if deleted != out.n {
		return false, p
	}
	keys[0].last, keys[1].last = bump, bump
	return true, pairState{keys[0], keys[1]}
}

var pairModel = porcupine.Model{
	Init:              func() any { return pairState{} },
	Step:              pairStep,
	DescribeOperation: linModel.DescribeOperation,
	DescribeState: func(state any) string {
		p := state.(pairState)
		return pairKeys[0] + ": " + linModel.DescribeState(p.a) + ", " + pairKeys[1] + ": " + linModel.DescribeState(p.b)
	},
}

// TestLinearizableMultiKeyDel checks, without partitioning, that Del of two
// keys is atomic with respect to single-key operations on either key (the
// engine locks both shards).
func TestLinearizableMultiKeyDel(t *testing.T) {
	cfg := linConfig{
		workers: 8,
		opsPer:  40,
		keys:    pairKeys[:],
		mix: []linKind{
			linSetNX, linSetNX, linSetNXPX, linSetNXPX, linGet, linGet, linGet,
			linDelPair, linDelPair, linCompareAndDelete, linPTTL, linPExpire,
		},
	}
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	for r := 0; r < rounds; r++ {
		seed := uint64(time.Now().UnixNano())
		history := linRound(t, cfg, seed)
		pairs := 0
		for _, op := range history {
			if op.Input.(linInput).kind == linDelPair {
				if out := op.Output.(linOutput); out.reads > 1 {
					t.Errorf("Del(%q, %q) read the clock %d times, want at most once", pairKeys[0], pairKeys[1], out.reads)
				}
				pairs++
			}
		}
		res, path, _ := checkHistory(t, pairModel, history)
		if res != porcupine.Ok {
			t.Fatalf("round %d (seed %d): porcupine = %s, want Ok; visualization: %s", r, seed, res, path)
		}
		t.Logf("round %d (seed %d): %d ops (%d two-key Del): linearizable", r, seed, len(history), pairs)
	}
}
