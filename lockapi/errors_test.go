package lockapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// TestErrorMessages: every error says each thing once, and matches the
// sentinels the package doc promises.
func TestErrorMessages(t *testing.T) {
	bubble(t, true, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		ctx := context.Background()
		const key = "job:nightly"
		type check struct {
			name  string
			err   error
			want  string
			is    []error
			isNot []error
		}
		var checks []check
		add := func(name string, err error, want string, is, isNot []error) {
			checks = append(checks, check{name, err, want, is, isNot})
		}

		holder, err := c.Obtain(ctx, key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Obtain(ctx, key, time.Minute, nil)
		add("busy", err, `lockapi: obtain "job:nightly": lock not obtained`,
			[]error{lockapi.ErrNotObtained}, []error{context.DeadlineExceeded})
		wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err = c.Obtain(wctx, key, time.Minute, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
		cancel()
		add("busy until ctx ended", err, `lockapi: obtain "job:nightly": lock not obtained: context deadline exceeded`,
			[]error{lockapi.ErrNotObtained, context.DeadlineExceeded}, nil)
		fi.Inject(faultinject.Acquire, faultinject.Fault{Next: 1})
		_, err = c.Obtain(ctx, key+":free", time.Minute, nil)
		add("backend failure", err, `lockapi: obtain "job:nightly:free": faultinject: injected fault`,
			[]error{faultinject.ErrInjected}, []error{lockapi.ErrNotObtained})
		_, err = c.Obtain(ctx, key, 500*time.Microsecond, nil)
		add("ttl", err, `lockapi: obtain "job:nightly": invalid ttl: 500µs is below MinTTL (1ms)`,
			[]error{lockapi.ErrInvalidTTL}, nil)
		_, err = c.Obtain(ctx, "nxkv:x", time.Minute, nil)
		add("reserved key", err, `lockapi: obtain "nxkv:x": invalid key: the "nxkv:" prefix is reserved`,
			[]error{lockapi.ErrInvalidKey}, nil)

		lost := holder.Lost()
		e.Set(key, "someone else")
		<-lost
		add("loss", holder.Err(), `lockapi: "job:nightly": lock lost: expired, deleted or taken over`,
			[]error{lockapi.ErrLost, lockapi.ErrNotHeld}, nil)
		add("release after loss", holder.Release(ctx), `lockapi: release "job:nightly": lock not held: lock lost: expired, deleted or taken over`,
			[]error{lockapi.ErrNotHeld, lockapi.ErrLost}, []error{lockapi.ErrNotObtained})
		add("release twice", holder.Release(ctx), `lockapi: release "job:nightly": lock not held: already released`,
			[]error{lockapi.ErrNotHeld}, []error{lockapi.ErrLost})

		l, err := c.Obtain(ctx, "report", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{MaxExtensions: 1}})
		if err != nil {
			t.Fatal(err)
		}
		<-l.Lost()
		add("exhausted", l.Err(), `lockapi: "report": lock lost: watchdog extensions exhausted`,
			[]error{lockapi.ErrLost, lockapi.ErrExtensionsExhausted}, []error{lockapi.ErrNotHeld})

		for _, ch := range checks {
			if ch.err == nil {
				t.Errorf("%s: err = nil, want %q", ch.name, ch.want)
				continue
			}
			if got := ch.err.Error(); got != ch.want {
				t.Errorf("%s: Error() = %q, want %q", ch.name, got, ch.want)
			}
			if n := strings.Count(ch.err.Error(), "lockapi:"); n != 1 {
				t.Errorf("%s: %q says lockapi: %d times, want once", ch.name, ch.err, n)
			}
			for _, s := range ch.is {
				if !errors.Is(ch.err, s) {
					t.Errorf("%s: %v does not match %v", ch.name, ch.err, s)
				}
			}
			for _, s := range ch.isNot {
				if errors.Is(ch.err, s) {
					t.Errorf("%s: %v matches %v, want not", ch.name, ch.err, s)
				}
			}
			var le *lockapi.Error
			if !errors.As(ch.err, &le) || !strings.Contains(ch.want, `"`+le.Key+`"`) {
				t.Errorf("%s: errors.As(*lockapi.Error) = %v, %+v", ch.name, le != nil, le)
			}
		}
	})
}

// TestBackendDownIsNotBusy: the idiom `if errors.Is(err, ErrNotObtained) {
// busy }` must not take a backend outage for a busy lock, neither on the
// first attempt nor after waiting on a held key (ctx still live); only a
// wait that ctx ended on a held key is ErrNotObtained.
func TestBackendDownIsNotBusy(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		ctx := context.Background()
		retry := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(100 * time.Millisecond)}

		fi.Inject(faultinject.Acquire, faultinject.Fault{Err: errors.New("connection refused")})
		if _, err := c.Obtain(ctx, "k", time.Minute, retry); err == nil || errors.Is(err, lockapi.ErrNotObtained) {
			t.Errorf("Obtain with the backend down = %v, want an error that is not ErrNotObtained", err)
		}
		fi.Clear()

		holder, err := c.Obtain(ctx, "k", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(150 * time.Millisecond) // the waiter found the key held
			fi.Inject(faultinject.Acquire, faultinject.Fault{})
		}()
		if _, err := c.Obtain(ctx, "k", time.Minute, retry); !errors.Is(err, faultinject.ErrInjected) || errors.Is(err, lockapi.ErrNotObtained) {
			t.Errorf("Obtain waiting, then the backend down = %v, want ErrInjected and not ErrNotObtained", err)
		}
		fi.Clear()

		// ctx ends during an attempt made after waiting: the key was held
		// and ctx ended the wait, so ErrNotObtained, and ctx's error.
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		go func() {
			time.Sleep(150 * time.Millisecond) // the waiter found the key held
			fi.Inject(faultinject.Acquire, faultinject.Fault{Latency: time.Hour, NoError: true})
		}()
		_, err = c.Obtain(wctx, "k", time.Minute, retry)
		if !errors.Is(err, lockapi.ErrNotObtained) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Obtain on a held key until ctx ended in an attempt = %v, want ErrNotObtained and DeadlineExceeded", err)
		}
		fi.Clear()
		holder.Release(ctx)
	})
}
