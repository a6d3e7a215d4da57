package lockapi

import (
	"errors"
	"strconv"
	"strings"
)

// The sentinels below are matched with errors.Is; the errors lockapi returns
// are *Error values that match one or more of them (see the package doc's
// error contract).
var (
	// ErrNotObtained means exactly one thing: another holder had the lock,
	// and the retry strategy or ctx ended the wait. Obtain's error then also
	// wraps ctx.Err() when ctx ended it. A backend failure is never
	// ErrNotObtained.
	ErrNotObtained = errors.New("lockapi: lock not obtained")
	// ErrNotHeld is matched by the error of Release, Refresh and TTL when the
	// lock is no longer held by this acquisition: it expired, was released,
	// or was taken over. Nothing is changed at the backend.
	ErrNotHeld = errors.New("lockapi: lock not held")
	// ErrInvalidTTL is matched when a TTL outside [MinTTL, MaxTTL] is passed.
	// Nothing is sent to the backend.
	ErrInvalidTTL = errors.New("lockapi: invalid ttl")
	// ErrInvalidKey is matched by Obtain's error for an empty key or a key in
	// the reserved namespace (ReservedPrefix). Nothing is sent to the
	// backend.
	ErrInvalidKey = errors.New("lockapi: invalid key")
	// ErrInvalidOption is matched by Obtain's error for inconsistent
	// ObtainOptions (a negative watchdog setting, a refresh interval not
	// shorter than the TTL). Nothing is sent to the backend.
	ErrInvalidOption = errors.New("lockapi: invalid option")
	// ErrLost is matched by the error Lock.Err returns once the lock is known
	// lost, and by the errors of later calls on that Lock.
	ErrLost = errors.New("lockapi: lock lost")
	// ErrReleased is the cause (context.Cause) of a Lock.Context canceled by
	// Release.
	ErrReleased = errors.New("lockapi: lock released")
	// ErrExtensionsExhausted is matched by Lock.Err when the watchdog used its
	// maximum number of extensions and the lock's lease ran out.
	ErrExtensionsExhausted = errors.New("lockapi: watchdog extensions exhausted")
)

// Error is the error of a Client or Lock call, and of a lost lock (what
// Lock.Err returns). Its message says each thing once: the operation, the
// key, what went wrong, and the underlying error, for example
//
//	lockapi: obtain "job:nightly": lock not obtained: context deadline exceeded
//	lockapi: release "job:nightly": lock not held: lock lost: expired, deleted or taken over
//	lockapi: obtain "job:nightly": goredis: acquire: dial tcp 10.0.0.7:6379: connect: connection refused
//
// errors.Is matches every sentinel that applies (a lost lock's Release
// matches ErrNotHeld and ErrLost) and the underlying error (a backend's own
// error, ctx.Err()); errors.As finds the underlying error's types.
type Error struct {
	// Op is the call that failed: "obtain", "release", "refresh" or "ttl";
	// "" for the loss Lock.Err reports.
	Op string
	// Key is the lock's key.
	Key string
	// Err is the underlying error: the backend's error, ctx.Err(), the loss
	// that made a call fail, or nil.
	Err error

	kinds  [2]error // the sentinels matched; kinds[0] is printed
	detail string   // printed after kinds[0]; when empty, kinds[1]'s text is
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("lockapi: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteByte(' ')
	}
	b.WriteString(strconv.Quote(e.Key))
	e.writeTail(&b)
	return b.String()
}

// writeTail writes what went wrong and the underlying error. A loss of the
// same key nested as Err is written without repeating the prefix and key.
func (e *Error) writeTail(b *strings.Builder) {
	if e.kinds[0] != nil {
		b.WriteString(": ")
		b.WriteString(sentinelText(e.kinds[0]))
	}
	switch {
	case e.detail != "":
		b.WriteString(": ")
		b.WriteString(e.detail)
	case e.kinds[1] != nil:
		b.WriteString(": ")
		b.WriteString(sentinelText(e.kinds[1]))
	}
	if e.Err == nil {
		return
	}
	if inner, ok := e.Err.(*Error); ok && inner.Key == e.Key && inner.Op == "" {
		inner.writeTail(b)
		return
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
}

// Unwrap returns the sentinels the error matches and the underlying error.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 3)
	for _, k := range e.kinds {
		if k != nil {
			errs = append(errs, k)
		}
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// sentinelText is a sentinel's message without the package prefix.
func sentinelText(err error) string {
	return strings.TrimPrefix(err.Error(), "lockapi: ")
}

// newError returns an *Error matching kind (nil for none) with an optional
// detail and underlying error.
func newError(op, key string, kind error, detail string, err error) *Error {
	return &Error{Op: op, Key: key, Err: err, kinds: [2]error{kind}, detail: detail}
}

// withCtx returns err, joined with ctx's error cerr when that is not nil
// and err does not already wrap it, so that errors.Is finds both.
func withCtx(err, cerr error) error {
	switch {
	case cerr == nil || errors.Is(err, cerr):
		return err
	case err == nil:
		return cerr
	}
	return &joined{err, cerr}
}

// joined is two errors printed as "first: second", matching both.
type joined [2]error

func (j *joined) Error() string   { return j[0].Error() + ": " + j[1].Error() }
func (j *joined) Unwrap() []error { return j[:] }
