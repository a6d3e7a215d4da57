package legacy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTest returns a Locker over a fresh memKV with a mock clock at epoch, a
// 10 s timeout and a 1 s release margin unless opts says otherwise.
func newTest(t *testing.T, opts Options) (*Locker, *memKV, *clock.Mock) {
	t.Helper()
	kv := newMemKV()
	clk := clock.NewMock()
	clk.Set(epoch)
	if opts.Clock == nil {
		opts.Clock = clk
	}
	l, err := New(kv, opts)
	if err != nil {
		t.Fatalf("New(%+v) = %v", opts, err)
	}
	return l, kv, clk
}

func TestNewRejectsBadOptions(t *testing.T) {
	kv := newMemKV()
	tests := []struct {
		name string
		kv   KV
		opts Options
	}{
		{"nil kv", nil, Options{}},
		{"unknown unit", kv, Options{Unit: 7}},
		{"negative timeout", kv, Options{Timeout: -time.Second}},
		{"negative retry delay", kv, Options{RetryDelay: -time.Millisecond}},
		{"negative margin", kv, Options{ReleaseMargin: -time.Millisecond}},
		{"margin equal to timeout", kv, Options{Timeout: time.Second, ReleaseMargin: time.Second}},
		{"margin above default timeout", kv, Options{ReleaseMargin: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(tt.kv, tt.opts)
			if !errors.Is(err, ErrInvalidOptions) || l != nil {
				t.Fatalf("New(%v, %+v) = %v, %v, want nil, ErrInvalidOptions", tt.kv, tt.opts, l, err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	l, err := New(newMemKV(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.timeout != DefaultTimeout || l.retryDelay != DefaultRetryDelay || l.margin != time.Second || l.unit != Seconds {
		t.Fatalf("New(kv, Options{}) = timeout %v, retry %v, margin %v, unit %v, want %v, %v, 1s, seconds",
			l.timeout, l.retryDelay, l.margin, l.unit, DefaultTimeout, DefaultRetryDelay)
	}
	if l.Timeout() != DefaultTimeout {
		t.Fatalf("Timeout() = %v, want %v", l.Timeout(), DefaultTimeout)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		unit Unit
		in   string
		want int64 // -1: malformed
	}{
		{Seconds, "1795338000", 1795338000},
		{Seconds, "1795338000.75", 1795338000}, // Python str(time.time()+...)
		{Seconds, "1795338000.", 1795338000},
		{Seconds, "0", 0},
		{Seconds, "99999999999", 99999999999},
		{Seconds, "100000000000", -1}, // a milliseconds value: implausible
		{Seconds, "1795338000123", -1},
		{Milliseconds, "1795338000123", 1795338000123},
		{Milliseconds, "1795338000123.5", 1795338000123},
		{Milliseconds, "1795338000", -1}, // a seconds value: 1970 in ms
		{Seconds, "", -1},
		{Seconds, "not-a-timestamp", -1},
		{Seconds, "-5", -1},
		{Seconds, "+5", -1},
		{Seconds, " 1795338000", -1},
		{Seconds, "1795338000\n", -1},
		{Seconds, "1.795338e9", -1},
		{Seconds, "0x6b0", -1},
		{Seconds, "1795338000.5.1", -1},
		{Seconds, ".5", -1},
		{Seconds, "1795338000.5x", -1},
		{Milliseconds, "99999999999999999999", -1}, // overflows int64
	}
	for _, tt := range tests {
		got, err := tt.unit.parse(tt.in)
		switch {
		case tt.want < 0 && !errors.Is(err, ErrMalformed):
			t.Errorf("%v.parse(%q) = %d, %v, want ErrMalformed", tt.unit, tt.in, got, err)
		case tt.want >= 0 && (err != nil || got != tt.want):
			t.Errorf("%v.parse(%q) = %d, %v, want %d", tt.unit, tt.in, got, err, tt.want)
		}
	}
}

func TestStamp(t *testing.T) {
	tests := []struct {
		unit    Unit
		timeout time.Duration
		now     time.Time
		want    int64
	}{
		{Seconds, 10 * time.Second, epoch, epoch.Unix() + 11},
		{Seconds, 10 * time.Second, epoch.Add(999 * time.Millisecond), epoch.Unix() + 11},
		{Seconds, 1500 * time.Millisecond, epoch, epoch.Unix() + 3}, // rounded up
		{Seconds, 200 * time.Millisecond, epoch, epoch.Unix() + 2},
		{Milliseconds, 250 * time.Millisecond, epoch, epoch.UnixMilli() + 251},
		{Milliseconds, 1500 * time.Microsecond, epoch, epoch.UnixMilli() + 3},
	}
	for _, tt := range tests {
		l, _, _ := newTest(t, Options{Unit: tt.unit, Timeout: tt.timeout, ReleaseMargin: tt.timeout / 2})
		if got := l.stamp(tt.now); got != strconv.FormatInt(tt.want, 10) {
			t.Errorf("stamp(%v) with %v, %v = %s, want %d", tt.now, tt.unit, tt.timeout, got, tt.want)
		}
	}
}

func TestExpiryBoundary(t *testing.T) {
	l, _, _ := newTest(t, Options{})
	v := strconv.FormatInt(epoch.Unix(), 10)
	tests := []struct {
		now  time.Time
		want bool
	}{
		{epoch.Add(-time.Second), false},
		{epoch, false},                             // now == T: still held, like a Redis deadline
		{epoch.Add(999 * time.Millisecond), false}, // same second
		{epoch.Add(time.Second), true},             // next second
		{epoch.Add(time.Second + time.Nanosecond), true},
	}
	for _, tt := range tests {
		if got, err := l.expired(v, tt.now); err != nil || got != tt.want {
			t.Errorf("expired(%s, %v) = %v, %v, want %v", v, tt.now, got, err, tt.want)
		}
	}
}

func TestTryObtainAndRelease(t *testing.T) {
	ctx := context.Background()
	l, kv, clk := newTest(t, Options{})
	lk, err := l.TryObtain(ctx, "lock.foo")
	if err != nil {
		t.Fatalf("TryObtain = %v", err)
	}
	if got, want := lk.Value(), fmt.Sprint(epoch.Unix()+11); got != want {
		t.Fatalf("Value() = %s, want %s", got, want)
	}
	if v, _ := kv.get("lock.foo"); v != lk.Value() {
		t.Fatalf("stored value = %s, want %s", v, lk.Value())
	}
	if lk.Key() != "lock.foo" || !lk.Deadline().Equal(epoch.Add(10*time.Second)) || lk.TTL() != 10*time.Second {
		t.Fatalf("Key, Deadline, TTL = %s, %v, %v, want lock.foo, %v, 10s", lk.Key(), lk.Deadline(), lk.TTL(), epoch.Add(10*time.Second))
	}
	if _, err := l.TryObtain(ctx, "lock.foo"); !errors.Is(err, ErrNotObtained) {
		t.Fatalf("second TryObtain = %v, want ErrNotObtained", err)
	}
	clk.Add(5 * time.Second)
	if err := lk.Release(ctx); err != nil {
		t.Fatalf("Release = %v", err)
	}
	if _, ok := kv.get("lock.foo"); ok {
		t.Fatal("key still present after Release")
	}
	if lk.TTL() != 0 {
		t.Fatalf("TTL() after Release = %v, want 0", lk.TTL())
	}
	if _, err := l.TryObtain(ctx, ""); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf(`TryObtain("") = %v, want ErrInvalidKey`, err)
	}
}

func TestReleaseRefusesLateDelete(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		elapsed time.Duration
		deletes bool
	}{
		{0, true},
		{9*time.Second - time.Nanosecond, true}, // more than the 1 s margin remains
		{9 * time.Second, false},                // exactly the margin remains
		{10 * time.Second, false},               // the timeout passed
		{20 * time.Second, false},               // long expired
	}
	for _, tt := range tests {
		t.Run(tt.elapsed.String(), func(t *testing.T) {
			l, kv, clk := newTest(t, Options{})
			lk, err := l.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			clk.Add(tt.elapsed)
			err = lk.Release(ctx)
			_, present := kv.get("k")
			if tt.deletes && (err != nil || present) {
				t.Fatalf("Release after %v = %v, key present %v, want nil, false", tt.elapsed, err, present)
			}
			if !tt.deletes && (!errors.Is(err, ErrNotHeld) || !present) {
				t.Fatalf("Release after %v = %v, key present %v, want ErrNotHeld, true", tt.elapsed, err, present)
			}
		})
	}
}

func TestReleaseNeverDeletesSuccessorsLock(t *testing.T) {
	ctx := context.Background()
	l, kv, clk := newTest(t, Options{})
	a, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(12 * time.Second) // a's stored time has passed
	b, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("TryObtain over an expired lock = %v", err)
	}
	if err := a.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("expired a.Release = %v, want ErrNotHeld", err)
	}
	if v, _ := kv.get("k"); v != b.Value() {
		t.Fatalf("stored value = %q, want b's %q", v, b.Value())
	}
	if err := b.Release(ctx); err != nil {
		t.Fatalf("b.Release = %v", err)
	}
	if err := b.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("second b.Release = %v, want ErrNotHeld", err)
	}
	c, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("third b.Release = %v, want ErrNotHeld", err)
	}
	if v, ok := kv.get("k"); !ok || v != c.Value() {
		t.Fatalf("stored value = %q, %v, want c's %q", v, ok, c.Value())
	}
}

func TestReleaseOfDeletedKey(t *testing.T) {
	ctx := context.Background()
	l, kv, _ := newTest(t, Options{})
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = kv.Del(ctx, "k") // some other party deleted it
	if err := lk.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release of a deleted key = %v, want ErrNotHeld", err)
	}
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	l, kv, clk := newTest(t, Options{})
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(8 * time.Second)
	if err := lk.Refresh(ctx); err != nil {
		t.Fatalf("Refresh = %v", err)
	}
	want := fmt.Sprint(epoch.Unix() + 8 + 11)
	if v, _ := kv.get("k"); v != want || lk.Value() != want {
		t.Fatalf("stored, Value() = %s, %s, want %s", v, lk.Value(), want)
	}
	if got := lk.Deadline(); !got.Equal(epoch.Add(18 * time.Second)) {
		t.Fatalf("Deadline() = %v, want %v", got, epoch.Add(18*time.Second))
	}
	clk.Add(8 * time.Second) // past the original stored time, within the refreshed one
	other, _, _ := newTest(t, Options{Clock: clk})
	other.kv = kv
	if _, err := other.TryObtain(ctx, "k"); !errors.Is(err, ErrNotObtained) {
		t.Fatalf("TryObtain of a refreshed lock = %v, want ErrNotObtained", err)
	}
	clk.Add(time.Second) // 1 s left: within the margin
	if err := lk.Refresh(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("late Refresh = %v, want ErrNotHeld", err)
	}
	if v, _ := kv.get("k"); v != want {
		t.Fatalf("late Refresh wrote %s, want %s kept", v, want)
	}
	if err := lk.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release after a failed Refresh = %v, want ErrNotHeld", err)
	}
}

func TestMalformedValueIsNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"not-a-timestamp", "tok:8f3a", "1.795e9", "", "-1"} {
		l, kv, clk := newTest(t, Options{})
		kv.set("k", v)
		clk.Add(time.Hour)
		_, err := l.TryObtain(ctx, "k")
		if !errors.Is(err, ErrNotObtained) || !errors.Is(err, ErrMalformed) {
			t.Errorf("TryObtain over %q = %v, want ErrNotObtained and ErrMalformed", v, err)
		}
		if got, _ := kv.get("k"); got != v {
			t.Errorf("TryObtain over %q changed it to %q", v, got)
		}
	}
}

func TestFractionalValuesFromOtherClients(t *testing.T) {
	ctx := context.Background()
	l, kv, clk := newTest(t, Options{})
	held := fmt.Sprintf("%d.731", epoch.Unix()+5) // Python: str(time.time() + 4 + 1)
	kv.set("k", held)
	clk.Add(5*time.Second + 900*time.Millisecond) // same second as the stored time
	if _, err := l.TryObtain(ctx, "k"); !errors.Is(err, ErrNotObtained) || errors.Is(err, ErrMalformed) {
		t.Fatalf("TryObtain at the stored second = %v, want ErrNotObtained (held)", err)
	}
	clk.Add(100 * time.Millisecond)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatalf("TryObtain after the stored time = %v", err)
	}
	if want := fmt.Sprint(epoch.Unix() + 6 + 11); lk.Value() != want {
		t.Fatalf("Value() = %s, want %s", lk.Value(), want)
	}
}

// TestInteropWithLegacyApp plays "another legacy application" that follows
// the Redis page literally with integer seconds, and checks that each side
// understands the other's timestamps.
func TestInteropWithLegacyApp(t *testing.T) {
	ctx := context.Background()
	l, kv, clk := newTest(t, Options{Timeout: 30 * time.Second, ReleaseMargin: 2 * time.Second})
	legacyAppNow := func() int64 { return clk.Now().Unix() }

	// The other app takes the lock with a 30 s timeout.
	kv.set("lock.foo", strconv.FormatInt(legacyAppNow()+30+1, 10))
	clk.Add(31 * time.Second) // at its stored second: still held
	if _, err := l.TryObtain(ctx, "lock.foo"); !errors.Is(err, ErrNotObtained) {
		t.Fatalf("TryObtain of the app's live lock = %v, want ErrNotObtained", err)
	}
	clk.Add(time.Second) // the app crashed; its time has passed
	lk, err := l.TryObtain(ctx, "lock.foo")
	if err != nil {
		t.Fatalf("TryObtain of the app's expired lock = %v", err)
	}

	// The app, in turn, reads our value as a plain Unix time in seconds that
	// has not passed, so it waits.
	v, _ := kv.get("lock.foo")
	theirs, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("the app cannot parse our value %q: %v", v, err)
	}
	if want := legacyAppNow() + 30 + 1; theirs != want {
		t.Fatalf("our value = %d, want now + timeout + 1 = %d", theirs, want)
	}
	clk.Add(29 * time.Second)
	if theirs < legacyAppNow() {
		t.Fatalf("the app sees our lock expired at %d < %d while we hold it", theirs, legacyAppNow())
	}
	if err := lk.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Release within the margin = %v, want ErrNotHeld", err)
	}
}

func TestMillisecondsLockerLeavesSecondsLockAlone(t *testing.T) {
	ctx := context.Background()
	l, kv, _ := newTest(t, Options{Unit: Milliseconds, Timeout: 500 * time.Millisecond})
	secs := strconv.FormatInt(epoch.Unix()+31, 10) // a live lock of a seconds app
	kv.set("k", secs)
	if _, err := l.TryObtain(ctx, "k"); !errors.Is(err, ErrMalformed) {
		t.Fatalf("ms TryObtain over a seconds value = %v, want ErrMalformed", err)
	}
	if v, _ := kv.get("k"); v != secs {
		t.Fatalf("value changed to %s", v)
	}
}

// obtainResult is what a background Obtain returned.
type obtainResult struct {
	lk  *Lock
	err error
}

func obtainAsync(ctx context.Context, l *Locker, key string) <-chan obtainResult {
	done := make(chan obtainResult, 1)
	go func() {
		lk, err := l.Obtain(ctx, key)
		done <- obtainResult{lk, err}
	}()
	return done
}

// advanceUntil moves clk by step until done delivers (from this goroutine
// only), failing after limit steps.
func advanceUntil(t *testing.T, clk *clock.Mock, step time.Duration, limit int, done <-chan obtainResult) obtainResult {
	t.Helper()
	for range limit {
		select {
		case r := <-done:
			return r
		default:
			clk.Add(step)
		}
	}
	select {
	case r := <-done:
		return r
	default:
		t.Fatalf("Obtain did not return within %d steps of %v", limit, step)
		return obtainResult{}
	}
}

func TestObtainWaitsForRelease(t *testing.T) {
	ctx := context.Background()
	l, _, clk := newTest(t, Options{RetryDelay: 50 * time.Millisecond})
	a, err := l.Obtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	done := obtainAsync(ctx, l, "k")
	for range 20 { // the waiter polls while a holds the lock
		clk.Add(50 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("Obtain of a held lock returned %v, %v", r.lk, r.err)
	default:
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	released := clk.Now()
	r := advanceUntil(t, clk, 10*time.Millisecond, 100, done)
	if r.err != nil {
		t.Fatalf("Obtain after Release = %v", r.err)
	}
	if waited := clk.Now().Sub(released); waited > 60*time.Millisecond {
		t.Fatalf("Obtain acquired %v after Release, want within one retry delay", waited)
	}
}

func TestObtainTakesOverCrashedHolder(t *testing.T) {
	ctx := context.Background()
	l, _, clk := newTest(t, Options{RetryDelay: 250 * time.Millisecond})
	if _, err := l.Obtain(ctx, "k"); err != nil { // then "crashes"
		t.Fatal(err)
	}
	done := obtainAsync(ctx, l, "k")
	r := advanceUntil(t, clk, 250*time.Millisecond, 100, done)
	if r.err != nil {
		t.Fatalf("Obtain over a crashed holder = %v", r.err)
	}
	// The stored time epoch+11 s has passed only from epoch+12 s on.
	if got, earliest := r.lk.Deadline().Add(-10*time.Second), epoch.Add(12*time.Second); got.Before(earliest) {
		t.Fatalf("took over at %v, before the stored time passed (%v)", got, earliest)
	}
	if err := r.lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// getNotifyKV signals every Get on gets.
type getNotifyKV struct {
	*memKV
	gets chan struct{}
}

func (k getNotifyKV) Get(ctx context.Context, key string) (string, bool, error) {
	defer func() {
		select {
		case k.gets <- struct{}{}:
		default:
		}
	}()
	return k.memKV.Get(ctx, key)
}

func TestObtainCancelled(t *testing.T) {
	ml, kv, _ := newTest(t, Options{})
	gets := make(chan struct{}, 1)
	l, err := New(getNotifyKV{kv, gets}, Options{Clock: ml.clock})
	if err != nil {
		t.Fatal(err)
	}
	kv.set("k", "garbage")
	ctx, cancel := context.WithCancel(context.Background())
	done := obtainAsync(ctx, l, "k")
	<-gets // the first attempt saw the malformed value
	cancel()
	r := <-done
	for _, want := range []error{ErrNotObtained, context.Canceled, ErrMalformed} {
		if !errors.Is(r.err, want) {
			t.Errorf("cancelled Obtain = %v, want it to wrap %v", r.err, want)
		}
	}
	if _, err := l.TryObtain(ctx, "other"); !errors.Is(err, ErrNotObtained) || !errors.Is(err, context.Canceled) {
		t.Errorf("TryObtain with a cancelled ctx = %v, want ErrNotObtained and context.Canceled", err)
	}
	if _, ok := kv.get("other"); ok {
		t.Error("TryObtain with a cancelled ctx wrote the key")
	}
}

// failKV fails every call with err.
type failKV struct{ err error }

func (f failKV) SetNX(context.Context, string, string) (bool, error) { return false, f.err }
func (f failKV) Get(context.Context, string) (string, bool, error)   { return "", false, f.err }
func (f failKV) GetSet(context.Context, string, string) (string, bool, error) {
	return "", false, f.err
}
func (f failKV) Del(context.Context, string) (bool, error) { return false, f.err }

func TestKVErrorsAreWrapped(t *testing.T) {
	boom := errors.New("connection reset")
	l, err := New(failKV{boom}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Obtain(context.Background(), "k")
	if !errors.Is(err, boom) || errors.Is(err, ErrNotObtained) {
		t.Fatalf("Obtain over a failing KV = %v, want it to wrap only the KV error", err)
	}
	ml, kv, _ := newTest(t, Options{})
	lk, err := ml.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	lk.l = &Locker{kv: failKV{boom}, clock: ml.clock, unit: ml.unit, timeout: ml.timeout, stampAdd: ml.stampAdd, margin: ml.margin}
	if err := lk.Release(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Release over a failing KV = %v, want the KV error", err)
	}
	lk.l = ml // the connection is back: Release can be retried
	if err := lk.Release(context.Background()); err != nil {
		t.Fatalf("retried Release = %v", err)
	}
	if _, ok := kv.get("k"); ok {
		t.Fatal("key present after the retried Release")
	}
}

func TestReleaseAndRefreshWithEndedCtx(t *testing.T) {
	l, kv, _ := newTest(t, Options{})
	lk, err := l.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := lk.Refresh(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Refresh(cancelled) = %v, want context.Canceled", err)
	}
	if err := lk.Release(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Release(cancelled) = %v, want context.Canceled", err)
	}
	if v, ok := kv.get("k"); !ok || v != lk.Value() {
		t.Fatalf("key = %q, %v after cancelled calls, want %q untouched", v, ok, lk.Value())
	}
	if err := lk.Release(context.Background()); err != nil {
		t.Fatalf("Release = %v, want nil", err)
	}
}

// FuzzParse checks that parse never panics, accepts exactly the documented
// grammar, and returns the integer part.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1795338031", "1795338031.5", "1795338031123", "", "x", "1.", ".1", "-1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, u := range []Unit{Seconds, Milliseconds} {
			// The reference: digits, optionally "." and digits, whose
			// integer part fits int64 and is plausible for u.
			intPart, frac, _ := strings.Cut(v, ".")
			want, perr := strconv.ParseInt(intPart, 10, 64)
			valid := intPart != "" && strings.Trim(intPart, "0123456789") == "" &&
				strings.Trim(frac, "0123456789") == "" && perr == nil &&
				(u == Seconds) == (want < plausibleBound)
			n, err := u.parse(v)
			switch {
			case err != nil && !errors.Is(err, ErrMalformed):
				t.Fatalf("%v.parse(%q) error %v does not wrap ErrMalformed", u, v, err)
			case err != nil && valid:
				t.Fatalf("%v.parse(%q) = %v, want %d", u, v, err, want)
			case err == nil && !valid:
				t.Fatalf("%v.parse(%q) = %d, want ErrMalformed", u, v, n)
			case err == nil && n != want:
				t.Fatalf("%v.parse(%q) = %d, want %d", u, v, n, want)
			}
		}
	})
}
