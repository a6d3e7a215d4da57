package lockapi

import (
	"fmt"
	"time"

	"github.com/nxkv/nxkv/clock"
)

// ClientOption configures a Client in New.
type ClientOption func(*Client)

// WithClock makes the Client use c for every wait: retry delays, waiting
// windows and watchdog timers. Tests pass a *clock.Mock. The default is the
// real clock.
func WithClock(c clock.Clock) ClientOption {
	return func(cl *Client) {
		if c != nil {
			cl.clock = c
		}
	}
}

// WithFIFO makes the Client serve its own Obtain calls on a key in arrival
// order (see the package doc). Other Clients can still barge.
func WithFIFO() ClientOption {
	return func(cl *Client) { cl.fifo = true }
}

// Option configures one Obtain call.
type Option func(*obtainConfig)

type obtainConfig struct {
	retry     RetryStrategy
	token     string
	tokenSet  bool
	metadata  string
	refresh   AutoRefresh
	refreshOn bool
}

// buildConfig applies opts to a heap config only when there are options, so
// an Obtain without options allocates nothing for them.
func buildConfig(opts []Option) obtainConfig {
	c := new(obtainConfig)
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return *c
}

// WithRetry sets the Obtain's retry strategy; nil means NoRetry.
func WithRetry(s RetryStrategy) Option {
	return func(c *obtainConfig) { c.retry = s }
}

// WithToken makes the Obtain use token instead of a generated one. The
// caller must keep tokens unique per acquisition (a reused token lets an old
// holder release a new holder's lock), and, when combining it with
// WithMetadata, of a fixed length so that readers can split the value. An
// empty token is ErrInvalidOption.
func WithToken(token string) Option {
	return func(c *obtainConfig) { c.token, c.tokenSet = token, true }
}

// WithMetadata stores md after the token in the lock's value (value = token
// + md), for other processes to read. Lock.Metadata returns it.
func WithMetadata(md string) Option {
	return func(c *obtainConfig) { c.metadata = md }
}

// AutoRefresh configures the watchdog of WithAutoRefresh. The zero value
// refreshes every ttl/3 with the Obtain's ttl, without limit.
type AutoRefresh struct {
	// Interval is the time between refreshes; 0 means ttl/3. It must be
	// shorter than TTL.
	Interval time.Duration
	// TTL is the TTL each refresh sets; 0 means the Obtain's ttl.
	TTL time.Duration
	// MaxExtensions bounds the number of successful refreshes; 0 means no
	// limit. When it is reached the watchdog stops refreshing and the lock
	// is declared lost (ErrExtensionsExhausted) when its validity ends.
	MaxExtensions int
}

// WithAutoRefresh starts a watchdog that keeps the lock alive as ar says
// until Release or loss (see the package doc).
func WithAutoRefresh(ar AutoRefresh) Option {
	return func(c *obtainConfig) { c.refresh, c.refreshOn = ar, true }
}

// check validates the config against the Obtain's ttl and fills watchdog
// defaults.
func (c *obtainConfig) check(ttl time.Duration) error {
	if c.tokenSet && c.token == "" {
		return fmt.Errorf("%w: empty token", ErrInvalidOption)
	}
	if !c.refreshOn {
		return nil
	}
	r := &c.refresh
	if r.Interval < 0 || r.TTL < 0 || r.MaxExtensions < 0 {
		return fmt.Errorf("%w: negative watchdog setting %+v", ErrInvalidOption, *r)
	}
	if r.TTL == 0 {
		r.TTL = ttl
	}
	if r.Interval == 0 {
		r.Interval = r.TTL / 3
	}
	if r.Interval <= 0 || r.Interval >= r.TTL || r.Interval >= ttl {
		return fmt.Errorf("%w: watchdog interval %v must be positive and shorter than the ttl", ErrInvalidOption, r.Interval)
	}
	return nil
}
