package legacy

// A deterministic simulation of several clients running a lock protocol over
// one shared memKV. Each client is a coroutine (iter.Pull) whose KV makes the
// call at once and then suspends the client, so a scheduler (a script or
// rapid) chooses which client makes the next KV call, when the shared mock
// clock moves, and which client crashes (is never resumed). A client's step
// runs from the return of its previous KV call up to and including its next
// one, so the clock reading a write depends on and the write itself happen in
// one step, as the protocol assumes; the package doc discusses pauses between
// them.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/benbjohnson/clock"
)

const simKey = "lock.foo"

var errCrashed = errors.New("sim: client crashed")

// action is what a holding client does at its next step.
type action uint8

const (
	actThink action = iota // keep holding, touch nothing
	actRefresh
	actRelease
)

func (a action) String() string {
	return [...]string{"think", "refresh", "release"}[a]
}

// stepKV is one client's view of the shared memKV.
type stepKV struct {
	c     *simClient
	kv    *memKV
	yield func(struct{}) bool
	dead  bool
}

var _ KV = (*stepKV)(nil)

// pause suspends the client until the scheduler resumes it; errCrashed once
// the scheduler has stopped it for good.
func (s *stepKV) pause() error {
	if s.dead || !s.yield(struct{}{}) {
		s.dead = true
		return errCrashed
	}
	return nil
}

func (s *stepKV) SetNX(ctx context.Context, key, value string) (bool, error) {
	if s.dead {
		return false, errCrashed
	}
	ok, _ := s.kv.SetNX(ctx, key, value)
	s.c.sim.tracef("%s SETNX %s -> %v", s.c, value, ok)
	return ok, s.pause()
}

func (s *stepKV) Get(ctx context.Context, key string) (string, bool, error) {
	if s.dead {
		return "", false, errCrashed
	}
	v, ok, _ := s.kv.Get(ctx, key)
	if ok && s.c.sim.getLies {
		v = "99999999999" // planted bug: every lock looks held for ages
	}
	s.c.sim.tracef("%s GET -> %q %v", s.c, v, ok)
	return v, ok, s.pause()
}

func (s *stepKV) GetSet(ctx context.Context, key, value string) (string, bool, error) {
	if s.dead {
		return "", false, errCrashed
	}
	old, ok, _ := s.kv.GetSet(ctx, key, value)
	s.c.sim.tracef("%s GETSET %s -> %q %v", s.c, value, old, ok)
	return old, ok, s.pause()
}

func (s *stepKV) Del(ctx context.Context, key string) (bool, error) {
	if s.dead {
		return false, errCrashed
	}
	ok, _ := s.kv.Del(ctx, key)
	s.c.sim.tracef("%s DEL -> %v", s.c, ok)
	return ok, s.pause()
}

// simClient is one simulated client. Its model fields are written by its
// program on its coroutine and read by the scheduler between steps; the
// coroutine hand-off orders those accesses.
type simClient struct {
	id   int
	sim  *sim
	kv   *stepKV
	next func() (struct{}, bool)
	stop func()

	holding  bool      // believes it holds the lock
	deadline time.Time // its own deadline while holding
	acquired int       // acquisitions so far
	action   action    // what to do at the next step while holding
	crashed  bool
	err      error // an unexpected error from the protocol
}

func (c *simClient) String() string { return fmt.Sprintf("c%d", c.id) }

// GoString keeps rapid's logs of drawn clients short.
func (c *simClient) GoString() string { return c.String() }

func (c *simClient) hold(deadline time.Time) {
	c.holding, c.deadline = true, deadline
	c.acquired++
	c.sim.tracef("%s holds until %s", c, deadline.Format(time.RFC3339Nano))
}

// step resumes the client for one step.
func (c *simClient) step() {
	if _, ok := c.next(); !ok && !c.crashed && c.err == nil {
		c.err = errors.New("program ended")
	}
}

// program is a lock protocol as run by one simulated client.
type program func(c *simClient)

type sim struct {
	clk     *clock.Mock
	kv      *memKV
	clients []*simClient
	trace   []string
	getLies bool // planted bug for the progress check: see stepKV.Get
}

func newSim(start time.Time, n int, prog func(s *sim) program) *sim {
	s := &sim{clk: clock.NewMock(), kv: newMemKV()}
	s.clk.Set(start)
	p := prog(s)
	for i := range n {
		c := &simClient{id: i + 1, sim: s}
		c.kv = &stepKV{c: c, kv: s.kv}
		c.next, c.stop = iter.Pull(func(yield func(struct{}) bool) {
			c.kv.yield = yield
			p(c)
		})
		s.clients = append(s.clients, c)
	}
	return s
}

func (s *sim) tracef(format string, args ...any) {
	s.trace = append(s.trace, fmt.Sprintf("%s "+format,
		append([]any{s.clk.Now().Format("15:04:05.000000")}, args...)...))
}

func (s *sim) advance(d time.Duration) {
	s.clk.Add(d)
	s.tracef("clock +%v", d)
}

func (s *sim) crash(c *simClient) {
	c.crashed = true
	s.tracef("%s crashes", c)
}

// close stops every coroutine.
func (s *sim) close() {
	for _, c := range s.clients {
		c.stop()
	}
}

// holders returns the clients that believe they hold an unexpired lock
// (now <= their own deadline), crashed or not.
func (s *sim) holders() []*simClient {
	now := s.clk.Now()
	var hs []*simClient
	for _, c := range s.clients {
		if c.holding && !now.After(c.deadline) {
			hs = append(hs, c)
		}
	}
	return hs
}

// check returns an error describing a broken invariant: two holders, or a
// client that met an unexpected error.
func (s *sim) check() error {
	for _, c := range s.clients {
		if c.err != nil {
			return fmt.Errorf("%s: unexpected error: %w\n%s", c, c.err, s.dump())
		}
	}
	if hs := s.holders(); len(hs) > 1 {
		return fmt.Errorf("mutual exclusion broken: %v all hold the lock at %s\n%s",
			hs, s.clk.Now().Format(time.RFC3339Nano), s.dump())
	}
	return nil
}

func (s *sim) dump() string {
	return "trace:\n\t" + strings.Join(s.trace, "\n\t")
}

// skewedClock is a clock offset from the shared one: a client whose clock
// is wrong, or (for a negative offset) one that read the clock and was
// paused for that long before its write.
type skewedClock struct {
	clock.Clock
	offset time.Duration
}

func (c skewedClock) Now() time.Time { return c.Clock.Now().Add(c.offset) }

// realProgram runs the package's Locker: TryObtain until it holds, then
// think, refresh or release as the scheduler says.
func realProgram(opts Options) func(s *sim) program {
	return skewedProgram(opts, nil)
}

// skewedProgram is realProgram with the clock of client i offset by
// skew[i].
func skewedProgram(opts Options, skew map[int]time.Duration) func(s *sim) program {
	return func(s *sim) program {
		return func(c *simClient) {
			opts := opts
			opts.Clock = s.clk
			if d, ok := skew[c.id]; ok {
				opts.Clock = skewedClock{s.clk, d}
			}
			l, err := New(c.kv, opts)
			if err != nil {
				c.err = err
				return
			}
			ctx := context.Background()
			for {
				lk, err := l.TryObtain(ctx, simKey)
				switch {
				case errors.Is(err, errCrashed):
					return
				case errors.Is(err, ErrNotObtained):
					continue // the scheduler decides how long the retry waits
				case err != nil:
					c.err = err
					return
				}
				c.hold(lk.Deadline())
				for c.holding {
					if c.kv.pause() != nil {
						return
					}
					var err error
					switch c.action {
					case actThink:
						continue
					case actRelease:
						c.holding = false // it stops relying on the lock first
						err = lk.Release(ctx)
					case actRefresh:
						err = lk.Refresh(ctx)
						if err == nil {
							c.deadline = lk.Deadline()
							s.tracef("%s refreshed until %s", c, c.deadline.Format(time.RFC3339Nano))
						}
					}
					switch {
					case errors.Is(err, errCrashed):
						return
					case errors.Is(err, ErrNotHeld):
						c.holding = false
						s.tracef("%s: %v", c, err)
					case err != nil:
						c.err = err
						return
					}
				}
			}
		}
	}
}

// naiveProgram is the WRONG recovery the Redis page warns about, built only
// here: on an expired lock it sends DEL and then SETNX. Everything else
// (timestamps, expiry test, guarded release) is as in the package.
func naiveProgram(opts Options) func(s *sim) program {
	return func(s *sim) program {
		return func(c *simClient) {
			opts.Clock = s.clk
			l, err := New(c.kv, opts) // only for its stamp and expiry helpers
			if err != nil {
				c.err = err
				return
			}
			ctx := context.Background()
			for {
				now := s.clk.Now()
				set, err := c.kv.SetNX(ctx, simKey, l.stamp(now))
				if err != nil {
					return
				}
				if !set {
					cur, ok, err := c.kv.Get(ctx, simKey)
					if err != nil {
						return
					}
					if !ok {
						continue
					}
					if exp, err := l.expired(cur, s.clk.Now()); err != nil || !exp {
						continue
					}
					if _, err := c.kv.Del(ctx, simKey); err != nil {
						return
					}
					now = s.clk.Now()
					if set, err = c.kv.SetNX(ctx, simKey, l.stamp(now)); err != nil {
						return
					}
					if !set {
						continue
					}
				}
				c.hold(now.Add(l.timeout))
				for c.holding {
					if c.kv.pause() != nil {
						return
					}
					if c.action != actRelease {
						continue
					}
					c.holding = false
					if c.deadline.Sub(s.clk.Now()) > l.margin {
						if _, err := c.kv.Del(ctx, simKey); err != nil {
							return
						}
					}
				}
			}
		}
	}
}

// live returns the clients not crashed.
func (s *sim) live() []*simClient {
	var cs []*simClient
	for _, c := range s.clients {
		if !c.crashed {
			cs = append(cs, c)
		}
	}
	return cs
}

// ops returns the KV calls of the trace, without times, e.g. "c1 GET -> ...".
func (s *sim) ops() []string {
	var out []string
	for _, line := range s.trace {
		_, rest, _ := strings.Cut(line, " ")
		for _, op := range []string{" SETNX ", " GET ", " GETSET ", " DEL "} {
			if strings.Contains(rest, op) {
				out = append(out, rest)
				break
			}
		}
	}
	return out
}

// stuckProgram is realProgram over a KV whose GET lies that every lock is
// held far into the future, so expired locks are never taken over: a planted
// bug for the progress check.
func stuckProgram(opts Options) func(s *sim) program {
	return func(s *sim) program {
		s.getLies = true
		return realProgram(opts)(s)
	}
}
