package resp

// This file holds a client's outbox, the output that other goroutines
// give it: pub/sub messages, client-side caching invalidations, keyspace
// events, MONITOR lines, and the reply of a blocked command served by
// another client's push. As in Redis, such output is appended to the
// client's output buffer; here the client's own goroutine (its event loop,
// or the goroutine serving it) owns that buffer, so others append to the
// outbox, under its own mutex, and wake the owner, which moves the
// outbox's bytes behind its replies at the next command boundary and
// writes them. A push never blocks and never waits for the client: a
// client that does not read is closed once its pending output passes the
// limits of its class, as Redis's client-output-buffer-limit closes it.

import (
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// outbox is the output others push to a client, waiting for the client's
// owner to take it.
type outbox struct {
	mu        sync.Mutex
	buf       []byte    // guarded by mu: pushed frames, not yet taken
	closed    bool      // guarded by mu: the client is closed or closing; pushes fail
	released  bool      // guarded by mu: the owner released the client (close hooks ran)
	kill      bool      // guarded by mu: the client passed its output limits and must close
	softSince time.Time // guarded by mu: since when the output has been past the soft limit
	// holding, guarded by mu, is set while a blocked client is being
	// served: pushes collect in held and follow its reply (holdPushes).
	holding bool
	held    []byte // guarded by mu
	// has is set while buf holds frames or kill is set, so that the owner
	// takes nothing without locking when nothing was pushed.
	has atomic.Bool
	// unflushed is what the owner holds and has not written yet (the
	// replies a client that does not read leaves behind), stored by the
	// owner, read by pushers for the limits.
	unflushed atomic.Int64
}

// errKilled is what takeOutbox reports for a client past its limits.
var errKilled = errors.New("resp: client output buffer limit reached")

// outputClass is a client's class for the output limits.
type outputClass int

const (
	classNormal outputClass = iota
	classPubSub
)

// outputLimit is one class's client-output-buffer-limit: hard closes the
// client as soon as its pending output passes it; soft closes it once the
// output has stayed past it for softFor. Zero disables a limit.
type outputLimit struct {
	hard, soft uint64
	softFor    time.Duration
}

// outputLimits are the limits of every class, as Redis's defaults
// ("normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608
// 60"); the replica class is kept for CONFIG's sake.
type outputLimits struct {
	normal, replica, pubsub outputLimit
}

var defaultOutputLimits = outputLimits{
	replica: outputLimit{hard: 256 << 20, soft: 64 << 20, softFor: 60 * time.Second},
	pubsub:  outputLimit{hard: 32 << 20, soft: 8 << 20, softFor: 60 * time.Second},
}

// String formats the limits as CONFIG GET client-output-buffer-limit.
func (l outputLimits) String() string {
	f := func(name string, o outputLimit) string {
		return name + " " + strconv.FormatUint(o.hard, 10) + " " + strconv.FormatUint(o.soft, 10) + " " +
			strconv.FormatInt(int64(o.softFor/time.Second), 10)
	}
	return f("normal", l.normal) + " " + f("slave", l.replica) + " " + f("pubsub", l.pubsub)
}

// parseOutputLimits applies CONFIG SET client-output-buffer-limit's value
// to l, all or nothing, as Redis's updateClientOutputBufferLimit reads it:
// fields split on single spaces, class hard soft seconds repeated, sizes
// as memtoull reads them, seconds as strtoll reads them, stored in a C int.
// On a malformed value it returns l unchanged and Redis's reason.
func parseOutputLimits(l outputLimits, v string) (outputLimits, string) {
	var f []string
	if v != "" {
		f = strings.Split(v, " ")
	}
	if len(f)%4 != 0 {
		return l, "Wrong number of arguments in buffer limit configuration."
	}
	next := l
	for i := 0; i < len(f); i += 4 {
		var o *outputLimit
		switch strings.ToLower(f[i]) {
		case "normal":
			o = &next.normal
		case "slave", "replica":
			o = &next.replica
		case "pubsub":
			o = &next.pubsub
		default:
			return l, "Invalid client class specified in buffer limit configuration."
		}
		hard, ok1 := parseMemory(f[i+1])
		soft, ok2 := parseMemory(f[i+2])
		secs, ok3 := parseCLong(f[i+3])
		if !ok1 || !ok2 || !ok3 || int32(secs) < 0 {
			return l, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		*o = outputLimit{hard: hard, soft: soft, softFor: time.Duration(int32(secs)) * time.Second}
	}
	return next, ""
}

// parseCLong reads an integer as C's strtoll with the whole string
// consumed: leading spaces and a sign allowed, saturating at the int64
// bounds; an empty string is 0.
func parseCLong(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, s == "" // no digits: strtoll stops at the start
	}
	var n uint64
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, false
		}
		if n > (math.MaxUint64-9)/10 {
			n = math.MaxUint64 // saturated; the sign decides below
		} else {
			n = n*10 + uint64(t[i]-'0')
		}
	}
	switch {
	case neg && n > math.MaxInt64:
		return math.MinInt64, true
	case neg:
		return -int64(n), true
	case n > math.MaxInt64:
		return math.MaxInt64, true
	}
	return int64(n), true
}

// push appends frame, encoded for c's protocol, to c's output and wakes
// the goroutine serving c to write it; any goroutine may call it, and it
// never blocks. It reports false, dropping frame, when c is closed or
// closing, or when this push took c past its output limits (c then
// closes). A goroutine running one of c's own commands must append to c's
// reply buffer instead, which keeps Redis's order of pushes and replies.
func (c *conn) push(frame []byte) bool {
	ob := &c.out
	ob.mu.Lock()
	if ob.holding && !ob.closed {
		ob.held = append(ob.held, frame...)
		ob.mu.Unlock()
		return true
	}
	return c.pushUnlocking(frame)
}

// holdPushes makes what is pushed to c wait until releasePushes: a blocked
// client's invalidations of the keys its own served command changes follow
// its reply, as in Redis (which serves it as its current client).
func (c *conn) holdPushes() {
	c.out.mu.Lock()
	c.out.holding = true
	c.out.mu.Unlock()
}

// releasePushes pushes first (a blocked client's reply, or nothing), then
// what holdPushes held, and reports as push does.
func (c *conn) releasePushes(first []byte) bool {
	ob := &c.out
	ob.mu.Lock()
	frames := append(first, ob.held...)
	ob.holding, ob.held = false, nil
	if len(frames) == 0 {
		ob.mu.Unlock()
		return true
	}
	return c.pushUnlocking(frames)
}

// pushUnlocking is push with c.out.mu held, which it unlocks.
func (c *conn) pushUnlocking(frame []byte) bool {
	ob := &c.out
	if ob.closed {
		ob.mu.Unlock()
		return false
	}
	wasEmpty := len(ob.buf) == 0
	ob.buf = append(ob.buf, frame...)
	ob.has.Store(true)
	if c.overLimitLocked() {
		ob.kill, ob.closed = true, true
		ob.buf = nil
		ob.mu.Unlock()
		c.s.clientsKilled.Add(1)
		c.wake(true)
		return false
	}
	ob.mu.Unlock()
	if wasEmpty {
		c.wake(false)
	}
	return true
}

// overOutputLimit reports, for c's owner after one of c's commands, whether
// c's pending output (its replies, pushes and unread bytes) passed the
// limits of its class; if so c is marked killed, and its owner closes it.
// With no limit for the class it costs one load.
func (c *conn) overOutputLimit() bool {
	if lim := c.limit(); lim.hard == 0 && lim.soft == 0 {
		return false
	}
	c.noteUnflushed()
	ob := &c.out
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.kill {
		return true
	}
	if !c.overLimitLocked() {
		return false
	}
	ob.kill, ob.closed, ob.buf = true, true, nil
	ob.has.Store(true)
	c.s.clientsKilled.Add(1)
	return true
}

// limit returns the output limits of c's class.
func (c *conn) limit() outputLimit {
	if c.class() == classPubSub {
		return c.s.outputLimits().pubsub
	}
	return c.s.outputLimits().normal
}

// overLimitLocked reports whether c's pending output passed the limits of
// its class. ob.mu must be held.
func (c *conn) overLimitLocked() bool {
	ob := &c.out
	lim := c.limit()
	n := uint64(len(ob.buf)) + uint64(ob.unflushed.Load())
	if u, ok := c.nc.(unreader); ok {
		n += uint64(u.unread()) // written, never blocking, and not read
	}
	if lim.hard > 0 && n > lim.hard {
		return true
	}
	if lim.soft == 0 || n <= lim.soft {
		ob.softSince = time.Time{}
		return false
	}
	now := c.s.now()
	if ob.softSince.IsZero() {
		ob.softSince = now
		return false
	}
	return now.Sub(ob.softSince) > lim.softFor
}

// unreader is a connection whose writes never block (the in-memory
// dialer's): it tells how much the peer has not read yet.
type unreader interface{ unread() int64 }

// class returns c's output class: pub/sub while it has subscriptions or
// monitors (Redis counts monitors as normal clients, which are unbounded).
func (c *conn) class() outputClass {
	if c.subscribed.Load() || c.monitoring.Load() {
		return classPubSub
	}
	return classNormal
}

// takeOutbox moves the pushed output behind c's replies; only c's owner
// calls it, at command boundaries. It returns errKilled when c passed its
// limits: the caller closes c.
func (c *conn) takeOutbox() error {
	ob := &c.out
	if !ob.has.Load() {
		return nil
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.kill {
		return errKilled
	}
	ob.has.Store(false)
	if len(ob.buf) > 0 {
		c.w.buf = append(c.w.buf, ob.buf...)
		if cap(ob.buf) > shrinkAbove {
			ob.buf = nil
		} else {
			ob.buf = ob.buf[:0]
		}
		c.noteUnflushed() // under mu, so pushers never see the bytes in neither place
	}
	return nil
}

// noteUnflushed records, for the output limits, the bytes c's owner holds
// unwritten.
func (c *conn) noteUnflushed() { c.out.unflushed.Store(int64(len(c.w.buf))) }

// wake makes c's owner take its outbox (and close c, for kill): an event
// loop is woken through its eventfd (c.kick, which the loop sets); a goroutine blocked reading the
// client is woken by a read deadline in the past, and, for kill, by
// closing the connection, which also ends a write the client does not
// read.
func (c *conn) wake(kill bool) {
	if c.kick != nil {
		c.kick()
		return
	}
	if kill {
		c.nc.Close()
		return
	}
	_ = c.nc.SetReadDeadline(aLongTimeAgo)
}

// aLongTimeAgo is a read deadline that has passed: it makes a blocked
// read return at once (as net/http wakes a connection).
var aLongTimeAgo = time.Unix(1, 0)

// isWakeUp reports whether a read ended because wake set its deadline;
// the owner then clears the deadline, takes the outbox, and reads on.
func isWakeUp(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// now returns the server's time, on the clock of its databases.
func (s *Server) now() time.Time { return s.DB(0).Now() }

// outputLimits returns the client-output-buffer-limit in force.
func (s *Server) outputLimits() outputLimits { return *s.limits.Load() }
