package lockapi

import (
	"fmt"
	"strings"
	"time"

	"github.com/nxkv/nxkv/clock"
)

// The input contract, the same on every backend (see the package doc).
const (
	// MinTTL is the shortest lock TTL: one millisecond, the resolution of
	// Redis's PX. Backends may round a TTL up to whole milliseconds, never
	// down.
	MinTTL = time.Millisecond
	// MaxTTL is the longest lock TTL: ten years of 365 days.
	MaxTTL = 10 * 365 * 24 * time.Hour
	// ReservedPrefix starts the keys nxkv keeps for itself on every backend
	// (the Redis backend's fencing counters); Obtain refuses them.
	ReservedPrefix = "nxkv:"
)

// Options configures a Client in New. The zero value selects every default.
type Options struct {
	// Clock is used for every wait: retry delays, waiting windows, watchdog
	// timers and lease ends. nil selects the backend's clock when the
	// backend has one (it implements Clocker, as the in-process backend
	// does), so a clock injected into the engine is given once; otherwise
	// the real clock. A *clock.Mock of github.com/benbjohnson/clock
	// satisfies clock.Clock.
	Clock clock.Clock
	// FIFO makes the Client serve its own Obtain calls on a key in arrival
	// order (see the package doc). Other Clients can still barge.
	FIFO bool
	// OnEvent, when not nil, is called for every acquisition, release,
	// loss and failed refresh of the Client's locks (see Event), on the
	// goroutine where it happened and never while the Client holds a lock
	// of its own. Keep it short. It may call the Lock's methods: releasing
	// a lock whose refresh failed, or that was lost, from here is safe
	// (Release does not wait for the watchdog or loss monitor that is
	// running the callback). LogEvents adapts a log/slog logger.
	OnEvent func(Event)
	// HoldTimeEvery sets which leases Stats.HoldTime times: one
	// acquisition in HoldTimeEvery (counted per Client), since timing a
	// lease costs two clock reads, a quarter of an uncontended in-process
	// Obtain+Release on a small VM (35-60ns each). 0 selects 16; 1 times
	// every lease; a negative value none. With OnEvent set every lease is
	// timed, for the events' timings.
	HoldTimeEvery int
}

// ObtainOptions configures one Obtain call. A nil *ObtainOptions, like the
// zero value, selects every default.
type ObtainOptions struct {
	// Retry is the retry strategy; nil means NoRetry.
	Retry RetryStrategy
	// Token replaces the generated token; "" means generate one. The caller
	// must keep tokens unique per acquisition (a reused token lets an old
	// holder release a new holder's lock), and, when combining it with
	// Metadata, of a fixed length so that readers can split the value.
	Token string
	// Metadata is stored after the token in the lock's value (value = token
	// + Metadata), for other processes to read. Lock.Metadata returns it.
	Metadata string
	// AutoRefresh, when not nil, starts a watchdog that keeps the lock alive
	// as it says until Release or loss (see the package doc).
	AutoRefresh *AutoRefresh
	// Reentrant makes Obtain reentrant (Client.Obtain only): the owner, the
	// holder of the same Token (and Metadata), may obtain the key again
	// while it holds it, and each Obtain is one more hold (Lock.Holds),
	// each released by its own Lock's Release; the key is freed with the
	// last hold. Pass the first Lock's Token to the later Obtain calls.
	// Only a key first obtained with Reentrant can be re-entered. See the
	// package doc.
	Reentrant bool
}

// AutoRefresh configures the watchdog of ObtainOptions.AutoRefresh. The
// zero value refreshes every ttl/3 with the Obtain's ttl, without limit.
type AutoRefresh struct {
	// Interval is the time between refreshes; 0 means a third of the
	// shorter of TTL and the Obtain's ttl. It must be shorter than both.
	Interval time.Duration
	// TTL is the TTL each refresh sets; 0 means the Obtain's ttl. It must be
	// in [MinTTL, MaxTTL].
	TTL time.Duration
	// MaxExtensions bounds the number of successful refreshes; 0 means no
	// limit. When it is reached the watchdog stops refreshing and the lock
	// is declared lost (ErrExtensionsExhausted) when its lease ends.
	MaxExtensions int
}

// checkTTL returns an *Error matching ErrInvalidTTL for a ttl outside
// [MinTTL, MaxTTL].
func checkTTL(op, key string, ttl time.Duration) error {
	switch {
	case ttl < MinTTL:
		return newError(op, key, ErrInvalidTTL, fmt.Sprintf("%v is below MinTTL (%v)", ttl, MinTTL), nil)
	case ttl > MaxTTL:
		return newError(op, key, ErrInvalidTTL, fmt.Sprintf("%v is above MaxTTL (%v)", ttl, MaxTTL), nil)
	}
	return nil
}

// checkKey returns an *Error matching ErrInvalidKey for an empty or
// reserved key.
func checkKey(key string) error {
	switch {
	case key == "":
		return newError("obtain", key, ErrInvalidKey, "empty", nil)
	case strings.HasPrefix(key, ReservedPrefix):
		return newError("obtain", key, ErrInvalidKey, fmt.Sprintf("the %q prefix is reserved", ReservedPrefix), nil)
	}
	return nil
}

// resolve validates ar against the Obtain's ttl and returns it with its
// defaults filled in.
func (ar AutoRefresh) resolve(key string, ttl time.Duration) (AutoRefresh, error) {
	invalid := func(format string, args ...any) (AutoRefresh, error) {
		return AutoRefresh{}, newError("obtain", key, ErrInvalidOption, fmt.Sprintf(format, args...), nil)
	}
	if ar.Interval < 0 || ar.TTL < 0 || ar.MaxExtensions < 0 {
		return invalid("negative AutoRefresh setting %+v", ar)
	}
	if ar.TTL == 0 {
		ar.TTL = ttl
	}
	if ar.TTL < MinTTL || ar.TTL > MaxTTL {
		return invalid("AutoRefresh.TTL %v outside [MinTTL, MaxTTL]", ar.TTL)
	}
	if ar.Interval == 0 {
		// The first refresh must land within the Obtain's lease, the
		// later ones within the refreshed leases.
		ar.Interval = min(ar.TTL, ttl) / 3
	}
	if ar.Interval >= ar.TTL || ar.Interval >= ttl {
		return invalid("AutoRefresh.Interval %v must be shorter than the ttl", ar.Interval)
	}
	return ar, nil
}
