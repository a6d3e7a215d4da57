package engine_test

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// newShared returns n engines sharing budget b, closed with the test.
func newShared(t testing.TB, b *engine.Budget, n, shards int) []*engine.Engine {
	t.Helper()
	es := make([]*engine.Engine, n)
	for i := range es {
		es[i] = engine.New(engine.Options{Budget: b, Shards: shards})
		t.Cleanup(func() { es[i].Close() })
	}
	return es
}

// fill writes keys prefix0, prefix1... into e until a write fails or n
// keys are written, and returns how many it wrote and the error.
func fill(e *engine.Engine, prefix string, n int) (int, error) {
	for i := range n {
		if err := e.Set(prefix+strconv.Itoa(i), "value"); err != nil {
			return i, err
		}
	}
	return n, nil
}

func verifyAll(t *testing.T, es ...*engine.Engine) {
	t.Helper()
	for _, e := range es {
		if err := e.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBudgetShared: engines sharing a budget are bounded together: under
// NoEviction, what one holds refuses the other's writes, and a delete in
// one makes room for the other; the budget's Used is the sum of theirs.
func TestBudgetShared(t *testing.T) {
	const max = 4096
	b := engine.NewBudget(max, engine.NoEviction, 0)
	es := newShared(t, b, 2, 4)
	a, c := es[0], es[1]
	n, err := fill(a, "a", 1000)
	if !errors.Is(err, engine.ErrOOM) {
		t.Fatalf("filling a: %d keys, %v; want ErrOOM", n, err)
	}
	if err := c.Set("c", "value"); !errors.Is(err, engine.ErrOOM) {
		t.Fatalf("Set on the other engine of a full budget = %v, want ErrOOM", err)
	}
	if st, ua, uc := b.Stats(), a.MemoryStats().Used, c.MemoryStats().Used; st.Used != ua+uc || uc != 0 || st.Used <= max {
		t.Fatalf("budget Used %d, engines %d and %d: want the sum, over %d", st.Used, ua, uc, max)
	}
	for i := range 3 {
		a.Del("a" + strconv.Itoa(i))
	}
	if err := c.Set("c", "value"); err != nil {
		t.Fatalf("Set on the other engine after deletes = %v", err)
	}
	if st := b.Stats(); st.Evicted != 0 || st.Max != max || st.Policy != engine.NoEviction || st.Samples != engine.DefaultSamples {
		t.Fatalf("Stats = %+v", st)
	}
	verifyAll(t, a, c)
}

// TestBudgetEvictsAcrossEngines: a write to an empty engine of a full
// budget evicts from the engine that holds the keys, which reports the
// eviction to its listeners; both engines' and the budget's counts agree.
func TestBudgetEvictsAcrossEngines(t *testing.T) {
	const max = 8 << 10
	b := engine.NewBudget(max, engine.AllKeysLRU, 0)
	es := newShared(t, b, 2, 4)
	a, c := es[0], es[1]
	var reported atomic.Int64
	defer a.Listen(func(ev engine.Event) {
		if ev.Kind == engine.KindEvicted {
			reported.Add(1)
		}
	})()
	before, err := fill(a, "a", int(max/cost("a000", "value", false))+10)
	if err != nil {
		t.Fatalf("filling a: %d keys, %v", before, err)
	}
	for i := range 20 {
		k := "c" + strconv.Itoa(i)
		if err := c.Set(k, "value"); err != nil {
			t.Fatalf("Set %s: %v", k, err)
		}
		if used := b.Stats().Used; used > max+cost(k, "value", false) {
			t.Fatalf("budget holds %d, over %d by more than one write", used, max)
		}
	}
	sa, sc, sb := a.MemoryStats(), c.MemoryStats(), b.Stats()
	if sa.Evicted == 0 || sa.Evicted+sc.Evicted != sb.Evicted || a.Len()+int(sa.Evicted) != before || c.Len()+int(sc.Evicted) != 20 {
		t.Fatalf("evicted: a %d (wrote %d, holds %d), c %d, budget %d", sa.Evicted, before, a.Len(), sc.Evicted, sb.Evicted)
	}
	if reported.Load() != sa.Evicted {
		t.Fatalf("a reported %d evictions, counts %d", reported.Load(), sa.Evicted)
	}
	verifyAll(t, a, c)
}

// TestBudgetSetMax: a bound lowered at run time is kept from the next
// write on, even from a bound whose shards held back their counts (the
// quantum shrinks: the next admission adds every shard's change first);
// raised or removed, it admits again; the engine's invariants hold
// throughout.
func TestBudgetSetMax(t *testing.T) {
	const big = 64 << 20 // 1 MiB a shard: shards hold back up to 4 KiB each
	b := engine.NewBudget(big, engine.AllKeysLRU, 0)
	e := newShared(t, b, 1, 16)[0]
	for i := range 2000 {
		e.Set("k"+strconv.Itoa(i), "0123456789abcdef")
	}
	verifyAll(t, e)
	exact := e.MemoryStats().Used
	if lag := exact - b.Stats().Used; lag <= 0 {
		t.Logf("the shards hold back nothing (lag %d): the test shows less", lag)
	}
	const small = 16 << 10
	b.SetMax(small)
	verifyAll(t, e) // stale shards may hold back more until the next write
	if err := e.Set("new", "v"); err != nil {
		t.Fatal(err)
	}
	if u, st := e.MemoryStats().Used, b.Stats(); u > small+cost("new", "v", false) || st.Used != u || st.Max != small {
		t.Fatalf("after SetMax(%d) and a write: the engine holds %d, the budget says %+v", small, u, st)
	}
	verifyAll(t, e)
	if err := b.SetPolicy(engine.NoEviction); err != nil {
		t.Fatal(err)
	}
	n, err := fill(e, "x", 1000)
	if !errors.Is(err, engine.ErrOOM) {
		t.Fatalf("filling under noeviction: %d keys, %v", n, err)
	}
	b.SetMax(0)
	if n, err := fill(e, "y", 1000); err != nil {
		t.Fatalf("without a bound: %d keys, %v", n, err)
	}
	if st := b.Stats(); st.Used != e.MemoryStats().Used || st.Max != 0 {
		t.Fatalf("without a bound the count goes on: budget %+v, engine %d", st, e.MemoryStats().Used)
	}
	verifyAll(t, e)
}

// TestBudgetSetPolicy: a policy changed at run time applies to the next
// write; an unknown one is refused and changes nothing.
func TestBudgetSetPolicy(t *testing.T) {
	e, _ := newBounded(t, engine.Options{MaxMemory: 2048, Shards: 2})
	if _, err := fill(e, "k", 1000); !errors.Is(err, engine.ErrOOM) {
		t.Fatal(err)
	}
	b := e.Budget()
	if err := b.SetPolicy(engine.Policy(99)); err == nil || b.Policy() != engine.NoEviction {
		t.Fatalf("SetPolicy(99) = %v, policy %s", err, b.Policy())
	}
	if err := b.SetPolicy(engine.AllKeysRandom); err != nil {
		t.Fatal(err)
	}
	if err := e.Set("new", "value"); err != nil {
		t.Fatalf("Set after switching to allkeys-random: %v", err)
	}
	if st := e.MemoryStats(); st.Evicted == 0 || st.Policy != engine.AllKeysRandom {
		t.Fatalf("%+v", st)
	}
	b.SetSamples(0)
	if st := b.Stats(); st.Samples != engine.DefaultSamples {
		t.Fatalf("SetSamples(0): %d samples", st.Samples)
	}
	b.SetSamples(10)
	if st := e.MemoryStats(); st.Samples != 10 {
		t.Fatalf("SetSamples(10): %d samples", st.Samples)
	}
}

// TestBudgetCharge: bytes charged count against the bound: a charge past
// it refuses writes to an empty engine under NoEviction and makes an
// evicting policy evict every key it may, then refuse; releasing the
// charge admits writes again.
func TestBudgetCharge(t *testing.T) {
	for _, p := range []engine.Policy{engine.NoEviction, engine.AllKeysLRU} {
		t.Run(p.String(), func(t *testing.T) {
			b := engine.NewBudget(4096, p, 0)
			e := newShared(t, b, 1, 4)[0]
			if err := e.Set("a", "1"); err != nil {
				t.Fatal(err)
			}
			b.Charge(5000)
			if err := e.Set("b", "1"); !errors.Is(err, engine.ErrOOM) {
				t.Fatalf("Set with a charge past the bound = %v, want ErrOOM", err)
			}
			if err := b.Evict(); !errors.Is(err, engine.ErrOOM) {
				t.Fatalf("Evict with a charge past the bound = %v, want ErrOOM", err)
			}
			wantLen := 1
			if p != engine.NoEviction {
				wantLen = 0 // evicted, and still over
			}
			if e.Len() != wantLen {
				t.Fatalf("Len = %d, want %d", e.Len(), wantLen)
			}
			if v, _ := e.Get("a"); p == engine.NoEviction && v != "1" {
				t.Fatal("a read failed under a charge")
			}
			if st := b.Stats(); st.Charged != 5000 || st.Used != e.MemoryStats().Used+5000 {
				t.Fatalf("Stats = %+v, engine holds %d", st, e.MemoryStats().Used)
			}
			b.Charge(-5000)
			if err := e.Set("b", "1"); err != nil {
				t.Fatalf("Set after the charge is released = %v", err)
			}
			verifyAll(t, e)
		})
	}
}

// TestUpdateAdmitted: over its bound under NoEviction, an Update's writes
// fail with ErrOOM, while an UpdateAdmitted section (whose caller admitted
// it) writes; Budget.Evict then reports ErrOOM, and the next admitted write
// is refused.
func TestUpdateAdmitted(t *testing.T) {
	e, _ := newBounded(t, engine.Options{MaxMemory: 2048, Shards: 2})
	if _, err := fill(e, "k", 1000); !errors.Is(err, engine.ErrOOM) {
		t.Fatal(err)
	}
	var refused, admitted error
	e.Update(nil, func(tx *engine.Tx) { refused = tx.Set("u", "v") })
	e.UpdateAdmitted(nil, func(tx *engine.Tx) { admitted = tx.Set("u", "v") })
	if !errors.Is(refused, engine.ErrOOM) || admitted != nil || !e.Exists("u") {
		t.Fatalf("Update: %v, UpdateAdmitted: %v, u exists %v", refused, admitted, e.Exists("u"))
	}
	if err := e.Budget().Evict(); !errors.Is(err, engine.ErrOOM) {
		t.Fatalf("Evict = %v, want ErrOOM", err)
	}
	e.Budget().SetMax(1 << 20)
	if err := e.Budget().Evict(); err != nil {
		t.Fatalf("Evict under the bound = %v", err)
	}
	verifyAll(t, e)
}

// TestBudgetWithMaxMemoryPanics: a budget and the options it replaces are
// not given together.
func TestBudgetWithMaxMemoryPanics(t *testing.T) {
	for name, opts := range map[string]engine.Options{
		"MaxMemory": {MaxMemory: 1},
		"Policy":    {Policy: engine.AllKeysLRU},
		"Samples":   {Samples: 3},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New with a Budget and %s did not panic", name)
				}
			}()
			opts.Budget = engine.NewBudget(0, engine.NoEviction, 0)
			engine.New(opts).Close()
		}()
	}
}

// TestMemoryOverhead: an engine reports what its shards hold whatever they
// store, which Used leaves out, and a budget its members' together.
func TestMemoryOverhead(t *testing.T) {
	b := engine.NewBudget(0, engine.NoEviction, 0)
	es := newShared(t, b, 2, 4)
	st := es[0].MemoryStats()
	if st.Overhead < 4*2048 || st.Overhead > 4*8192 || st.Used != 0 {
		t.Fatalf("four empty shards: %+v, want an overhead of 2 to 8 KiB a shard and nothing used", st)
	}
	if got := b.Stats().Overhead; got != 2*st.Overhead {
		t.Fatalf("budget overhead %d, want %d", got, 2*st.Overhead)
	}
	plain := engine.New(engine.Options{Shards: 4})
	defer plain.Close()
	if o := plain.MemoryStats().Overhead; o <= 0 || o >= st.Overhead {
		t.Fatalf("an unbounded engine's overhead %d, want positive and less than a bounded one's %d (no metadata)", o, st.Overhead)
	}
}

// TestBudgetConcurrent: writers on engines sharing a budget, while the
// bound and policy change under them, never hold more than the bound by
// more than one write each once the changes stop, and every engine's
// invariants hold (run with -race).
func TestBudgetConcurrent(t *testing.T) {
	b := engine.NewBudget(64<<20, engine.AllKeysLRU, 0)
	es := newShared(t, b, 3, 4)
	const writers, writes = 3, 3000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := es[w%len(es)]
			for i := range writes {
				k := fmt.Sprintf("w%d:%d", w, i%500)
				if err := e.SetPX(k, "0123456789", time.Hour); err != nil && !errors.Is(err, engine.ErrOOM) {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					e.Get(k)
				}
			}
		}()
	}
	for i := range 200 {
		b.SetMax(int64(8<<10) << (i % 14))
		_ = b.SetPolicy([]engine.Policy{engine.AllKeysLRU, engine.VolatileTTL, engine.AllKeysLFU}[i%3])
	}
	wg.Wait()
	const max = 16 << 10
	b.SetMax(max)
	if err := es[0].Set("last", "v"); err != nil {
		t.Fatal(err)
	}
	used := int64(0)
	for _, e := range es {
		used += e.MemoryStats().Used
	}
	if used > max+cost("last", "v", false) {
		t.Fatalf("the engines hold %d, over %d by more than the last write", used, max)
	}
	verifyAll(t, es...)
}
