package engine_test

// Planted bugs, built only here, prove that the checkers can fail: each test
// wraps the real engine with a known defect and asserts that the checker
// reports it.

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"github.com/nxkv/nxkv/engine"
)

// racySetNX splits SetNX into a Get and a Set, yielding in between to widen
// the window: two clients can both see the key absent and both "acquire".
type racySetNX struct{ *engine.Engine }

func (r racySetNX) SetNX(key, value string) (bool, error) {
	if _, ok := r.Engine.Get(key); ok {
		return false, nil
	}
	runtime.Gosched()
	return true, r.Engine.Set(key, value)
}

// splitDel deletes several keys one at a time, yielding in between: another
// client can see the first key gone and the second still there, which an
// atomic multi-key Del never shows.
type splitDel struct{ *engine.Engine }

func (s splitDel) Del(keys ...string) int {
	n := 0
	for _, k := range keys {
		n += s.Engine.Del(k)
		runtime.Gosched()
	}
	return n
}

// staleGet's Get ignores expiry: it remembers every value it has returned
// and keeps returning it after the engine reports the key absent, unless the
// key was deleted through the wrapper (Del, GetDel, CompareAndDelete).
type staleGet struct {
	*engine.Engine
	seen map[string]string
}

func (s *staleGet) Get(key string) (string, bool) {
	if v, ok := s.Engine.Get(key); ok {
		s.seen[key] = v
		return v, true
	}
	v, ok := s.seen[key]
	return v, ok
}

func (s *staleGet) Flush() {
	for k := range s.seen {
		if !engine.Reserved(k) {
			delete(s.seen, k)
		}
	}
	s.Engine.Flush()
}

func (s *staleGet) FlushAll() {
	clear(s.seen)
	s.Engine.FlushAll()
}

func (s *staleGet) Del(keys ...string) int {
	for _, k := range keys {
		delete(s.seen, k)
	}
	return s.Engine.Del(keys...)
}

func (s *staleGet) GetDel(key string) (string, bool) {
	delete(s.seen, key)
	return s.Engine.GetDel(key)
}

func (s *staleGet) CompareAndDelete(key, value string) bool {
	ok := s.Engine.CompareAndDelete(key, value)
	if ok {
		delete(s.seen, key)
	}
	return ok
}

// eagerExpiry is off by one at the boundary: it treats now == deadline as
// expired (Redis keeps the key readable, with PTTL 0).
type eagerExpiry struct{ *engine.Engine }

func (b eagerExpiry) Get(key string) (string, bool) {
	v, ok := b.Engine.Get(key)
	if ttl, live := b.Engine.PTTL(key); ok && live && ttl == 0 {
		return "", false
	}
	return v, ok
}

func (b eagerExpiry) PTTL(key string) (ttl time.Duration, ok bool) {
	ttl, ok = b.Engine.PTTL(key)
	if ok && ttl == 0 {
		return 0, false
	}
	return ttl, ok
}

// lazyWatch misses every change of a key that has a deadline when watched,
// its expiry included: a lock waiter built on it would sleep through the
// holder's TTL.
type lazyWatch struct{ *engine.Engine }

func (l lazyWatch) Watch(key string) (<-chan struct{}, func()) {
	ch, stop := l.Engine.Watch(key)
	ttl, ok := l.Engine.PTTL(key)
	if !ok || ttl == engine.NoExpiry {
		return ch, stop
	}
	// The key has a deadline: hand out a channel that ignores it.
	stop()
	never := make(chan struct{})
	return never, func() {}
}

// keyFence hands out fencing tokens from a per-key counter that a delete
// resets, the flaw of a counter kept under a deletable key: after a release
// the next holder's token repeats the previous one.
type keyFence struct {
	*engine.Engine
	n map[string]int64
}

func (k *keyFence) SetNXPXFenced(key, value string, ttl time.Duration) (int64, bool, error) {
	ok, err := k.Engine.SetNXPX(key, value, ttl)
	if !ok {
		return 0, false, err
	}
	k.n[key]++
	return k.n[key], true, nil
}

func (k *keyFence) CompareAndDelete(key, value string) bool {
	ok := k.Engine.CompareAndDelete(key, value)
	if ok {
		delete(k.n, key)
	}
	return ok
}

// quietPersist removes a TTL in a quiet section and names nothing: the key
// changes, its watchers wake, and the change feed's listeners are never
// told (a path that forgets to emit).
type quietPersist struct{ *engine.Engine }

func (q quietPersist) Persist(key string) bool {
	var ok bool
	q.Engine.Update([]string{key}, func(tx *engine.Tx) {
		tx.Quiet(true)
		ok = tx.Persist(key)
	})
	return ok
}

// misnamedIncr reports an INCRBY as a SET (the event a command built from
// Get and Set reports if it forgets to name itself), and forgets "new".
type misnamedIncr struct{ *engine.Engine }

func (m misnamedIncr) IncrBy(key string, n int64) (v int64, err error) {
	m.Engine.Update([]string{key}, func(tx *engine.Tx) {
		defer tx.Quiet(tx.Quiet(true))
		if v, err = tx.IncrBy(key, n); err == nil {
			tx.Notify(key, engine.KindSet)
		}
	})
	return v, err
}

// restartingCounter counts reserved keys as plain ones: an absent counter
// starts again at 0, so a counter deleted (by Del, Flush or expiry)
// repeats its values.
type restartingCounter struct{ *engine.Engine }

func (r restartingCounter) IncrBy(key string, n int64) (v int64, err error) {
	if !engine.Reserved(key) || r.Engine.Exists(key) {
		return r.Engine.IncrBy(key, n)
	}
	r.Engine.Update([]string{key}, func(tx *engine.Tx) {
		defer tx.Quiet(tx.Quiet(true)) // name the events an IncrBy would
		tx.Set(key, "0")
		if v, err = tx.IncrBy(key, n); err == nil {
			tx.Notify(key, engine.KindNew)
			tx.Notify(key, engine.KindIncrBy)
		}
	})
	return v, err
}

// flushAll's Flush deletes the reserved keys too, taking the lock
// bookkeeping with the caller's keys.
type flushAll struct{ *engine.Engine }

func (f flushAll) Flush() { f.Engine.FlushAll() }

var plantedModels = map[string]func(*engine.Engine, *clock.Mock) kv{
	"quiet-persist":      func(e *engine.Engine, _ *clock.Mock) kv { return quietPersist{e} },
	"misnamed-incr":      func(e *engine.Engine, _ *clock.Mock) kv { return misnamedIncr{e} },
	"flush-all":          func(e *engine.Engine, _ *clock.Mock) kv { return flushAll{e} },
	"key-fence":          func(e *engine.Engine, _ *clock.Mock) kv { return &keyFence{Engine: e, n: map[string]int64{}} },
	"restarting-counter": func(e *engine.Engine, _ *clock.Mock) kv { return restartingCounter{e} },
	"lazy-watch":         func(e *engine.Engine, _ *clock.Mock) kv { return lazyWatch{e} },
	"stale-get":          func(e *engine.Engine, _ *clock.Mock) kv { return &staleGet{Engine: e, seen: map[string]string{}} },
	"eager-expiry":       func(e *engine.Engine, _ *clock.Mock) kv { return eagerExpiry{e} },
}

// plantedEnv selects the planted bug TestPlantedModelChild runs.
const plantedEnv = "NXKV_PLANTED_MODEL"

// TestPlantedModelChild runs the rapid model check against a planted bug.
// It only runs as a child process of TestPlantedModelCatches*, so that
// rapid's failure can be asserted without failing the parent test.
func TestPlantedModelChild(t *testing.T) {
	name := os.Getenv(plantedEnv)
	if name == "" {
		t.Skip("runs only as a child of TestPlantedModelCatches*")
	}
	wrap, ok := plantedModels[name]
	if !ok {
		t.Fatalf("unknown planted bug %q", name)
	}
	rapid.Check(t, modelProp(wrap))
}

// runPlantedModel re-executes this test binary on TestPlantedModelChild with
// the named bug and returns its exit error and output.
func runPlantedModel(t *testing.T, name string) (error, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0],
		"-test.run=^TestPlantedModelChild$", "-test.count=1", "-test.v",
		"-rapid.checks=1000", "-rapid.nofailfile", "-rapid.shrinktime=5s")
	cmd.Env = append(os.Environ(), plantedEnv+"="+name)
	out, err := cmd.CombinedOutput()
	return err, string(out)
}

// assertModelCatches runs the planted bug and requires a rapid failure whose
// message contains every marker.
func assertModelCatches(t *testing.T, name string, markers ...string) {
	t.Helper()
	err, out := runPlantedModel(t, name)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("model check on planted %q: err = %v, want a failing exit; output:\n%s", name, err, out)
	}
	for _, m := range append([]string{"--- FAIL: TestPlantedModelChild", "[rapid] failed"}, markers...) {
		if !strings.Contains(out, m) {
			t.Fatalf("model check on planted %q: output lacks %q; output:\n%s", name, m, out)
		}
	}
	if i := strings.Index(out, "[rapid] failed"); i >= 0 {
		line, _, _ := strings.Cut(out[i:], "\n")
		t.Logf("caught: %s", line)
	}
}

// TestPlantedModelCatchesStaleGet: a Get that returns expired values must be
// reported by the model checker as an expired key being visible.
func TestPlantedModelCatchesStaleGet(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "stale-get", "want absent: expired")
}

// TestPlantedModelCatchesEagerExpiry: treating now == deadline as expired
// must be reported at exactly the deadline.
func TestPlantedModelCatchesEagerExpiry(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "eager-expiry", "want present", "now-deadline = 0s")
}

// TestPlantedModelCatchesResetFence: a fence that restarts after a release
// must be reported as not increasing.
func TestPlantedModelCatchesResetFence(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "key-fence", "the key's previous fence")
}

// TestPlantedModelCatchesRestartingCounter: a reserved counter that starts
// again at 0 once deleted must be reported as resuming below a value it
// had.
func TestPlantedModelCatchesRestartingCounter(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "restarting-counter", "a value it had")
}

// TestPlantedModelCatchesFlushAll: a Flush that deletes the reserved keys
// must be reported as losing a live reserved key.
func TestPlantedModelCatchesFlushAll(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "flush-all", `Get("nxkv:n") = absent, want present`)
}

// TestPlantedModelCatchesLazyWatch: a Watch that misses expiry (and any
// later change of a key that had a deadline) must be reported.
func TestPlantedModelCatchesLazyWatch(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "lazy-watch", "pending, want fired")
}

// TestPlantedModelCatchesQuietPersist: a change the change feed never
// reports must be caught.
func TestPlantedModelCatchesQuietPersist(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "quiet-persist", "change feed reported", `want ["persist`)
}

// TestPlantedModelCatchesMisnamedIncr: a change reported under the wrong
// name must be caught.
func TestPlantedModelCatchesMisnamedIncr(t *testing.T) {
	t.Parallel()
	assertModelCatches(t, "misnamed-incr", "change feed reported", "incrby")
}

// assertLinCatches runs concurrent rounds of cfg (a planted bug) until
// porcupine reports model Illegal, which it must within a bounded number
// of rounds, and returns the round that caught it.
func assertLinCatches(t *testing.T, what string, cfg linConfig, model porcupine.Model) int {
	t.Helper()
	const maxRounds = 40
	for r := 1; r <= maxRounds; r++ {
		res, path, _ := checkHistory(t, model, linRound(t, cfg, uint64(r)))
		switch res {
		case porcupine.Illegal:
			t.Logf("%s caught in round %d of %d (porcupine: %s)", what, r, maxRounds, res)
			if path != "" {
				_ = os.Remove(path) // expected failure: do not leave it behind
			}
			return r
		case porcupine.Unknown:
			t.Fatalf("round %d: porcupine timed out (Unknown), want Illegal or Ok", r)
		}
	}
	t.Fatalf("%s not caught in %d rounds: the checker cannot fail", what, maxRounds)
	return 0
}

// TestPlantedLinearizabilityCatchesRacySetNX: the split SetNX must make
// porcupine report Illegal within a bounded number of rounds.
func TestPlantedLinearizabilityCatchesRacySetNX(t *testing.T) {
	assertLinCatches(t, "racy SetNX", linConfig{
		workers: 8,
		opsPer:  60,
		keys:    []string{"lock"},
		mix:     []linKind{linSetNX, linSetNX, linSetNX, linSetNX, linGet, linCompareAndDelete, linCompareAndDelete, linDel},
		wrap:    func(e *engine.Engine) linKV { return racySetNX{e} },
	}, linModel)
}

// lateEvents reports a release's delete after its critical section, in a
// second one, as a feed that queued events and delivered them after the
// lock was released would: another client's acquisition can be reported
// before the release that let it in.
type lateEvents struct{ *engine.Engine }

func (l lateEvents) CompareAndDelete(key, value string) bool {
	var ok bool
	l.Engine.Update([]string{key}, func(tx *engine.Tx) {
		tx.Quiet(true)
		ok = tx.CompareAndDelete(key, value)
	})
	if ok {
		runtime.Gosched()
		l.Engine.Update([]string{key}, func(tx *engine.Tx) { tx.Notify(key, engine.KindDel) })
	}
	return ok
}

// TestPlantedLinearizabilityCatchesLateEvents: events delivered outside
// the critical section of their change must make the feed check report
// Illegal within a bounded number of rounds, while a round of the same
// workload without the feed is linearizable: only the events are wrong.
func TestPlantedLinearizabilityCatchesLateEvents(t *testing.T) {
	cfg := linConfig{
		workers: 8,
		opsPer:  60,
		keys:    []string{"lock"},
		mix:     []linKind{linSetNX, linSetNX, linSetNX, linSetNX, linGet, linCompareAndDelete, linCompareAndDelete, linCompareAndDelete},
		wrap:    func(e *engine.Engine) linKV { return lateEvents{e} },
		feed:    true,
	}
	caught := assertLinCatches(t, "late events", cfg, linModel)
	cfg.feed = false
	if res, path, _ := checkHistory(t, linModel, linRound(t, cfg, uint64(caught))); res != porcupine.Ok {
		t.Fatalf("round %d without the feed: porcupine = %s, want Ok (the planted bug is in the events only); visualization: %s", caught, res, path)
	}
}

// TestPlantedLinearizabilityCatchesSplitDel: a two-key Del done key by key
// must make the unpartitioned pair check report Illegal. The workload has no
// TTLs, so only atomicity can be at fault.
func TestPlantedLinearizabilityCatchesSplitDel(t *testing.T) {
	assertLinCatches(t, "split Del", linConfig{
		workers: 8,
		opsPer:  40,
		keys:    pairKeys[:],
		mix:     []linKind{linSetNX, linSetNX, linSetNX, linGet, linGet, linGet, linDelPair, linDelPair},
		wrap:    func(e *engine.Engine) linKV { return splitDel{e} },
	}, pairModel)
}
