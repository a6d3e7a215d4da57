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
	hard, soft int64
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
		return name + " " + strconv.FormatInt(o.hard, 10) + " " + strconv.FormatInt(o.soft, 10) + " " +
			strconv.FormatInt(int64(o.softFor/time.Second), 10)
	}
	return f("normal", l.normal) + " " + f("slave", l.replica) + " " + f("pubsub", l.pubsub)
}

// parseOutputLimits applies CONFIG SET client-output-buffer-limit's value
// (class hard soft seconds, repeated; sizes in bytes or with Redis's
// units) to l, all or nothing. On a malformed value it returns l unchanged
// and Redis's reason.
func parseOutputLimits(l outputLimits, v string) (outputLimits, string) {
	f := strings.Fields(v)
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
		secs, err := strconv.ParseInt(f[i+3], 10, 32)
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return l, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		*o = outputLimit{hard: hard, soft: soft, softFor: time.Duration(secs) * time.Second}
	}
	return next, ""
}

// parseMemory reads a size as Redis's memtoull: a number of bytes with an
// optional unit (k, kb, m, mb, g, gb; k is 1000, kb 1024).
func parseMemory(s string) (int64, bool) {
	l := strings.ToLower(s)
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mul = strings.TrimSuffix(l, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mul {
		return 0, false
	}
	return n * mul, true
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

// overLimitLocked reports whether c's pending output passed the limits of
// its class. ob.mu must be held.
func (c *conn) overLimitLocked() bool {
	ob := &c.out
	var lim outputLimit
	switch c.class() {
	case classPubSub:
		lim = c.s.outputLimits().pubsub
	default:
		lim = c.s.outputLimits().normal
	}
	n := int64(len(ob.buf)) + ob.unflushed.Load()
	if u, ok := c.nc.(unreader); ok {
		n += u.unread() // written, never blocking, and not read
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
