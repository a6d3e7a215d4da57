package goredis_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi/goredis"
	"github.com/nxkv/nxkv/lockapi/legacy"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// legacyEpoch is where the legacy tests' mock clocks start. The timestamps
// in lock values are the clients' own time, so the server's clock plays no
// part and the tests need no sleeping.
var legacyEpoch = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// legacyClient connects to addr with go-redis retries off (as LegacyKV's doc
// advises), closing the client at the end of the test.
func legacyClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func legacyLocker(t *testing.T, c redis.UniversalClient, clk clock.Clock, opts legacy.Options) *legacy.Locker {
	t.Helper()
	opts.Clock = clk
	l, err := legacy.New(goredis.LegacyKV(c), opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// legacyCommands records the names of the commands a client sends.
type legacyCommands struct {
	mu    sync.Mutex
	names []string
}

func (r *legacyCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *legacyCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		r.names = append(r.names, cmd.Name())
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (r *legacyCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestLegacyKVCommands(t *testing.T) {
	srv := redistest.Start(t)
	c := legacyClient(t, srv.Addr)
	rec := &legacyCommands{}
	c.AddHook(rec)
	kv := goredis.LegacyKV(c)
	ctx := context.Background()

	if v, ok, err := kv.Get(ctx, "k"); ok || err != nil {
		t.Fatalf("Get(absent) = %q, %v, %v, want absent", v, ok, err)
	}
	if set, err := kv.SetNX(ctx, "k", "1"); !set || err != nil {
		t.Fatalf("SetNX(absent) = %v, %v, want true, nil", set, err)
	}
	if set, err := kv.SetNX(ctx, "k", "2"); set || err != nil {
		t.Fatalf("SetNX(present) = %v, %v, want false, nil", set, err)
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl != -1 {
		t.Fatalf("PTTL after SETNX = %v, want no TTL (-1)", ttl)
	}
	if v, ok, err := kv.Get(ctx, "k"); v != "1" || !ok || err != nil {
		t.Fatalf("Get = %q, %v, %v, want 1, true, nil", v, ok, err)
	}
	if old, ok, err := kv.GetSet(ctx, "k", "3"); old != "1" || !ok || err != nil {
		t.Fatalf("GetSet(present) = %q, %v, %v, want 1, true, nil", old, ok, err)
	}
	if del, err := kv.Del(ctx, "k"); !del || err != nil {
		t.Fatalf("Del(present) = %v, %v, want true, nil", del, err)
	}
	if del, err := kv.Del(ctx, "k"); del || err != nil {
		t.Fatalf("Del(absent) = %v, %v, want false, nil", del, err)
	}
	if old, ok, err := kv.GetSet(ctx, "k", "4"); ok || err != nil {
		t.Fatalf("GetSet(absent) = %q, %v, %v, want absent", old, ok, err)
	}
	rec.mu.Lock()
	var got []string
	for _, name := range rec.names {
		switch name {
		case "hello", "client": // connection setup
		default:
			got = append(got, name)
		}
	}
	rec.mu.Unlock()
	want := []string{"get", "setnx", "setnx", "pttl", "get", "getset", "del", "del", "getset"}
	if len(got) != len(want) {
		t.Fatalf("commands = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("commands = %q, want %q", got, want)
		}
	}

	// A server error is an error, not an answer, and the Locker wraps it.
	c.LPush(ctx, "list", "x")
	if _, _, err := kv.Get(ctx, "list"); err == nil {
		t.Fatal("Get of a list = nil error, want WRONGTYPE")
	}
	l := legacyLocker(t, c, nil, legacy.Options{})
	if _, err := l.TryObtain(ctx, "list"); err == nil || errors.Is(err, legacy.ErrNotObtained) {
		t.Fatalf("TryObtain on a list = %v, want the server's error", err)
	}
}

// legacyRefusals counts refused SETNX calls.
type legacyRefusals struct {
	legacy.KV
	n *atomic.Int32
}

func (k legacyRefusals) SetNX(ctx context.Context, key, value string) (bool, error) {
	set, err := k.KV.SetNX(ctx, key, value)
	if err == nil && !set {
		k.n.Add(1)
	}
	return set, err
}

// legacyContention is the outcome of legacyContend.
type legacyContention struct {
	acquired, violations, refused int32
	errs                          []error
	mockTime                      time.Duration
}

// legacyContend runs clients goroutines, each with its own connection and
// Locker over wrap(LegacyKV), acquiring one key rounds times on a real
// server; inside the critical section each calls hold and checks that nobody
// else is inside. A shared mock clock, advanced from this goroutine only,
// drives their retries.
func legacyContend(t *testing.T, addr string, clients, rounds int, wrap func(legacy.KV) legacy.KV, hold func(round int, clk *clock.Mock)) legacyContention {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(legacyEpoch)
	var inside, acquired, violations atomic.Int32
	var refused atomic.Int32 // SETNX refusals: proof that the clients contended
	errs := make(chan error, clients)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range clients {
		kv := wrap(legacyRefusals{goredis.LegacyKV(legacyClient(t, addr)), &refused})
		l, err := legacy.New(kv, legacy.Options{Clock: clk, Timeout: 10 * time.Second, RetryDelay: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for round := range rounds {
				lk, err := l.Obtain(ctx, "lock.shared")
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					violations.Add(1)
				}
				hold(round, clk)
				acquired.Add(1)
				inside.Add(-1)
				if err := lk.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	start := clk.Now()
drive:
	for i := 0; ; i++ {
		select {
		case <-finished:
			break drive
		default:
		}
		if i == 100_000 { // 1000 s of mock time: the clients are stuck
			cancel()
			<-finished
			break
		}
		clk.Add(10 * time.Millisecond)
	}
	close(errs)
	out := legacyContention{
		acquired:   acquired.Load(),
		violations: violations.Load(),
		refused:    refused.Load(),
		mockTime:   clk.Now().Sub(start),
	}
	for err := range errs {
		out.errs = append(out.errs, err)
	}
	return out
}

// TestLegacyMutualExclusionOverRedis: several clients contend on a real
// server and never overlap.
func TestLegacyMutualExclusionOverRedis(t *testing.T) {
	srv := redistest.Start(t)
	const clients, rounds = 4, 25
	// Holding the lock until the mock clock moves on makes the others run
	// into it, however fast the machine.
	hold := func(_ int, clk *clock.Mock) { <-clk.After(time.Millisecond) }
	r := legacyContend(t, srv.Addr, clients, rounds, func(kv legacy.KV) legacy.KV { return kv }, hold)
	for _, err := range r.errs {
		t.Errorf("client failed: %v", err)
	}
	if r.violations != 0 {
		t.Fatalf("%d acquisitions overlapped another holder", r.violations)
	}
	if r.acquired != clients*rounds {
		t.Fatalf("acquisitions = %d, want %d", r.acquired, clients*rounds)
	}
	if r.refused == 0 {
		t.Fatal("no SETNX was refused: the clients never contended")
	}
	t.Logf("%d acquisitions, %d refused SETNX, over %v of mock time", r.acquired, r.refused, r.mockTime)
}

// legacyBrokenSetNX is a planted bug: its SetNX overwrites a present key and
// claims success.
type legacyBrokenSetNX struct{ legacy.KV }

func (k legacyBrokenSetNX) SetNX(ctx context.Context, key, value string) (bool, error) {
	_, _, err := k.KV.GetSet(ctx, key, value)
	return err == nil, err
}

// TestLegacyExclusionCheckCatchesBrokenLock shows that legacyContend's
// overlap check fails a lock that admits two holders: with the planted
// SETNX, the first holder waits inside its critical section until a second
// one has entered.
func TestLegacyExclusionCheckCatchesBrokenLock(t *testing.T) {
	srv := redistest.Start(t)
	var entered atomic.Int32
	second := make(chan struct{})
	hold := func(round int, _ *clock.Mock) {
		if round > 0 {
			return
		}
		if entered.Add(1) == 2 {
			close(second)
		}
		<-second
	}
	wrap := func(kv legacy.KV) legacy.KV { return legacyBrokenSetNX{kv} }
	r := legacyContend(t, srv.Addr, 2, 3, wrap, hold)
	if r.violations == 0 {
		t.Fatalf("legacyContend over a broken SETNX reported no overlap (%d acquisitions, errors %v)", r.acquired, r.errs)
	}
}

// TestLegacyCrashedHoldersRecovered lets a legacy application (raw SETNX of a
// seconds timestamp) and then a Locker crash while holding the lock, and
// checks that the next client takes over exactly when the stored time has
// passed on its clock.
func TestLegacyCrashedHoldersRecovered(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clk := clock.NewMock()
	clk.Set(legacyEpoch)
	raw := legacyClient(t, srv.Addr)
	opts := legacy.Options{Timeout: 10 * time.Second, RetryDelay: 250 * time.Millisecond}

	// The legacy application: SETNX lock.foo <now + 30 + 1>, then it dies.
	appValue := strconv.FormatInt(clk.Now().Unix()+31, 10)
	if ok, err := raw.Do(ctx, "setnx", "lock.foo", appValue).Bool(); !ok || err != nil {
		t.Fatalf("raw SETNX = %v, %v", ok, err)
	}
	b := legacyLocker(t, legacyClient(t, srv.Addr), clk, opts)
	clk.Add(31 * time.Second) // the stored second itself: still held
	if _, err := b.TryObtain(ctx, "lock.foo"); !errors.Is(err, legacy.ErrNotObtained) {
		t.Fatalf("TryObtain of the app's live lock = %v, want ErrNotObtained", err)
	}
	lkB := legacyObtainDriven(t, clk, b, 250*time.Millisecond)
	if at, earliest := lkB.Deadline().Add(-opts.Timeout), legacyEpoch.Add(32*time.Second); at.Before(earliest) {
		t.Fatalf("b took over at %v, before the app's time passed (%v)", at, earliest)
	}
	if v := raw.Get(ctx, "lock.foo").Val(); v != lkB.Value() {
		t.Fatalf("stored value = %q, want b's %q", v, lkB.Value())
	}
	if ttl := raw.PTTL(ctx, "lock.foo").Val(); ttl >= 0 {
		t.Fatalf("PTTL = %v, want no Redis TTL", ttl)
	}

	// b crashes too: its connection goes away with the lock held.
	c := legacyLocker(t, legacyClient(t, srv.Addr), clk, opts)
	lkC := legacyObtainDriven(t, clk, c, 250*time.Millisecond)
	if at, earliest := lkC.Deadline().Add(-opts.Timeout), lkB.Deadline().Add(time.Second); !at.After(earliest) {
		t.Fatalf("c took over at %v, not more than a second after b's deadline %v", at, lkB.Deadline())
	}
	// b's late Release is refused and leaves c's lock alone.
	if err := lkB.Release(ctx); !errors.Is(err, legacy.ErrNotHeld) {
		t.Fatalf("b's late Release = %v, want ErrNotHeld", err)
	}
	if v := raw.Get(ctx, "lock.foo").Val(); v != lkC.Value() {
		t.Fatalf("stored value = %q, want c's %q", v, lkC.Value())
	}
	if err := lkC.Release(ctx); err != nil {
		t.Fatalf("c's Release = %v", err)
	}
	if n := raw.Exists(ctx, "lock.foo").Val(); n != 0 {
		t.Fatalf("EXISTS after c's Release = %d, want 0", n)
	}
}

// legacyObtainDriven runs l.Obtain in the background and advances clk by step
// from this goroutine until it returns.
func legacyObtainDriven(t *testing.T, clk *clock.Mock, l *legacy.Locker, step time.Duration) *legacy.Lock {
	t.Helper()
	type result struct {
		lk  *legacy.Lock
		err error
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		lk, err := l.Obtain(ctx, "lock.foo")
		done <- result{lk, err}
	}()
	for i := 0; ; i++ {
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("Obtain = %v", r.err)
			}
			return r.lk
		default:
			if i == 1000 {
				cancel()
				<-done
				t.Fatalf("Obtain did not return within %d steps of %v", i, step)
			}
			clk.Add(step)
		}
	}
}

// TestLegacyConformance runs the lockapi conformance suite over the legacy
// lock's Backend on a real server, in milliseconds (with seconds a lock frees
// up to 2 s after its TTL, which the suite rejects; see legacy.Backend). Its
// time is the client's mock clock: no Redis TTL is involved.
func TestLegacyConformance(t *testing.T) {
	srv := redistest.Start(t)
	c := legacyClient(t, srv.Addr)
	locktest.Run(t, func(t *testing.T) locktest.Env {
		clk := clock.NewMock()
		clk.Set(locktest.Epoch)
		b, err := legacy.NewBackend(goredis.LegacyKV(c), legacy.Options{Clock: clk, Unit: legacy.Milliseconds})
		if err != nil {
			t.Fatal(err)
		}
		return locktest.Env{Backend: b, Clock: clk, Advance: clk.Add}
	})
}

// BenchmarkLegacyObtainRelease is an uncontended legacy Obtain+Release over
// loopback: two round trips (SETNX, DEL).
func BenchmarkLegacyObtainRelease(b *testing.B) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	l, err := legacy.New(goredis.LegacyKV(c), legacy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lk, err := l.Obtain(ctx, "lock.bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
