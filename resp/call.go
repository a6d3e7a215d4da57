package resp

// This file holds a command's execution, as Redis's call: its context,
// the argument parsing and error replies the commands share, and execute,
// which runs a command and records its statistics.

import (
	"math"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// Error replies handlers share, as Redis words them.
const (
	errSyntax      = "ERR syntax error"
	errWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInteger  = "ERR value is not an integer or out of range"
	errNotFloat    = "ERR value is not a valid float"
	errOverflow    = "ERR increment or decrement would overflow"
	errNoSuchKey   = "ERR no such key"
	errDBRange     = "ERR DB index is out of range"
	errSameObject  = "ERR source and destination objects are the same"
	errStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errOOM         = "OOM command not allowed when used memory > 'maxmemory'."
	errBusy        = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	// errBeyondRange is nxkv's own reply to a deadline Redis would accept
	// but the engine cannot hold (after year 2262, the end of int64
	// nanoseconds): an error, never a silently different deadline.
	errBeyondRange = "ERR expire time beyond the year 2262 is not supported"
)

// call is one command's execution context.
type call struct {
	s    *Server
	c    *conn // the client (for a script: the client running it)
	w    replier
	args [][]byte
	db   int   // the selected database
	st   store // that database: its engine, or a transaction inside one
	cmd  *command
	// tx reports that the command runs inside an atomic section (MULTI/EXEC
	// or a script): st is a transaction and the time is frozen.
	tx  bool
	txs *txSet // the databases a transaction holds; nil outside one
	lua *scriptRun
	// redact lists the arguments MONITOR must not show (AUTH's), set by
	// the command as it reads them.
	redact []int
}

// key returns argument i as a string the engine may keep.
func (x *call) key(i int) string { return string(x.args[i]) }

// now returns the command's time: the transaction's frozen time inside one.
func (x *call) now() time.Time { return x.st.Now() }

// atomic runs fn on the selected database with keys' shards locked and one
// frozen time; inside a transaction it runs at once on it.
func (x *call) atomic(keys []string, fn func(st store)) {
	if x.tx {
		fn(x.st)
		return
	}
	updateBy(x.c, x.s.DB(x.db), keys, fn)
}

// locked runs fn with the selected database's shards of keys locked and
// one frozen time: in its own engine section, or at once inside the
// transaction or script the command runs in. Typed values are read and
// changed only so (an Object is reachable only through a section). Its
// own section is tagged with the client, as updateBy's.
func (x *call) locked(keys []string, fn func(tx *engine.Tx)) {
	if tx, ok := x.st.(*engine.Tx); ok && x.tx {
		fn(tx)
		return
	}
	x.s.DB(x.db).UpdateAdmitted(keys, func(tx *engine.Tx) { // the server admitted the command (evict.go)
		if x.c != nil {
			tx.SetTag(x.c)
		}
		fn(tx)
	})
}

// intArg parses argument i as Redis's string2ll, replying the error if it
// is not an integer.
func (x *call) intArg(i int) (int64, bool) {
	n, ok := parseInt(x.args[i])
	if !ok {
		x.w.errorReply(errNotInteger)
	}
	return n, ok
}

// invalidExpire is Redis's reply to a bad or overflowing expire time.
func (x *call) invalidExpire() {
	x.w.errorReply("ERR invalid expire time in '" + x.cmd.name + "' command")
}

// engineErr replies the Redis error for an engine error.
func (x *call) engineErr(err error) {
	switch err {
	case engine.ErrInvalidTTL:
		x.invalidExpire()
	case engine.ErrSyntax:
		x.w.errorReply(errSyntax)
	case engine.ErrNotInteger:
		x.w.errorReply(errNotInteger)
	case engine.ErrOverflow:
		x.w.errorReply(errOverflow)
	case engine.ErrOOM:
		x.w.errorReply(errOOM)
	case engine.ErrWrongType:
		x.w.errorReply(errWrongType)
	default:
		x.w.errorReply("ERR " + err.Error())
	}
}

// maxEngineMs is the latest deadline the engine holds, in Unix ms: the
// last nanosecond of that millisecond is within int64 nanoseconds.
const maxEngineMs = (math.MaxInt64 - int64(time.Millisecond-1)) / int64(time.Millisecond)

// msTime converts a deadline in Unix milliseconds to the engine's: the last
// nanosecond of that millisecond. Redis's clock counts milliseconds, so a
// key whose deadline is millisecond D lives while the time, in
// milliseconds, is at most D (with PTTL 0 during D itself); the engine's
// clock counts nanoseconds, and a key lives while the time is at most its
// deadline. So a script that sets PXAT to its own TIME in milliseconds
// keeps the key, as Redis does, instead of making one already gone.
func msTime(ms int64) time.Time {
	return time.UnixMilli(ms).Add(time.Millisecond - time.Nanosecond)
}

// msLeft returns the milliseconds from now to a deadline as Redis counts
// them: the deadline's millisecond less the current one.
func msLeft(at, now time.Time) int64 { return at.UnixMilli() - now.UnixMilli() }

// unixMs returns t in Unix milliseconds.
func unixMs(t time.Time) int64 { return t.UnixMilli() }

// execute runs x's command and records it in the command's statistics, as
// Redis's call does: one call, the time it took, and a failed call when it
// replied an error of its own. An error that a command it ran replied
// (EXEC's queued commands, or those a script calls on its own replier)
// counts for that command, and one replied before it started for none.
func execute(x *call) {
	x.w.takeErrors()
	start := monoNow()
	if x.cmd.flags&repliesFirst != 0 && x.lua == nil && x.c != nil && !x.c.holding {
		x.c.replyFirst(x)
	} else {
		x.cmd.fn(x)
	}
	st := x.s.stats(x.cmd)
	st.usec.Add(elapsedUsec(start, monoNow()))
	st.calls.Add(1)
	if x.w.takeErrors() > 0 {
		st.failed.Add(1)
	}
}

// replyFirst runs a repliesFirst command of c: what its changes push to c
// itself is held until the command has written its reply, then follows
// it, as in Redis; a key's creation and expiry, which Redis reports as it
// adds or finds the key, are not held (dbNotifier.event).
func (c *conn) replyFirst(x *call) {
	c.holding = true
	defer func() {
		c.holding = false
		if len(c.held) > 0 {
			c.w.buf = append(c.w.buf, c.held...)
			c.held = c.held[:0]
		}
	}()
	x.cmd.fn(x)
}

// elapsedUsec is the time from start to end as Redis counts a call's: the
// microsecond of the end less that of the start, so that calls shorter
// than a microsecond add up to their true total.
func elapsedUsec(start, end time.Duration) int64 {
	return int64(end/time.Microsecond - start/time.Microsecond)
}

// monoStart anchors monoNow.
var monoStart = time.Now()

// monoNow returns the time since the process started, from one reading of
// the monotonic clock: cheaper than time.Now, which reads the wall clock
// too (on some virtual machines each reading costs tens of nanoseconds,
// and execute takes two per command).
func monoNow() time.Duration { return time.Since(monoStart) }
