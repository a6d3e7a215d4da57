package lockapi

import (
	"context"
	"errors"
	"fmt"
)

var (
	// ErrNotObtained is returned by Obtain when the lock is held by someone
	// else and the retry strategy gave up or ctx ended. When ctx ended, the
	// error also wraps ctx.Err().
	ErrNotObtained = errors.New("lockapi: lock not obtained")
	// ErrNotHeld is returned by Release, Refresh and TTL when the lock is no
	// longer held by this acquisition: it expired, was released, or was
	// taken over. Nothing is changed at the backend.
	ErrNotHeld = errors.New("lockapi: lock not held")
	// ErrInvalidTTL is returned when a TTL <= 0 is passed. Nothing is
	// touched.
	ErrInvalidTTL = errors.New("lockapi: invalid ttl")
	// ErrInvalidKey is returned by Obtain for an empty key. Nothing is
	// touched.
	ErrInvalidKey = errors.New("lockapi: invalid key")
	// ErrInvalidOption is returned by Obtain for inconsistent options (an
	// empty token, a negative watchdog setting, a refresh interval not
	// shorter than the TTL). Nothing is touched.
	ErrInvalidOption = errors.New("lockapi: invalid option")
	// ErrLost is wrapped by the error Lock.Err returns once the lock is known
	// lost.
	ErrLost = errors.New("lockapi: lock lost")
	// ErrReleased is the cause (context.Cause) of a Lock.Context canceled
	// by Release.
	ErrReleased = errors.New("lockapi: lock released")
	// ErrExtensionsExhausted is wrapped by Lock.Err when the watchdog used
	// its maximum number of extensions and the lock's validity ran out.
	ErrExtensionsExhausted = errors.New("lockapi: watchdog extensions exhausted")
)

// ctxError wraps sentinel and err, and ctx.Err() too when ctx has ended and
// err does not already wrap it, so errors.Is works for all of them.
func ctxError(ctx context.Context, sentinel error, key string, err error) error {
	cerr := ctx.Err()
	switch {
	case err == nil && cerr == nil:
		return fmt.Errorf("%w: %q", sentinel, key)
	case err == nil:
		return fmt.Errorf("%w: %q: %w", sentinel, key, cerr)
	case cerr == nil || errors.Is(err, cerr):
		if sentinel == nil {
			return fmt.Errorf("lockapi: %q: %w", key, err)
		}
		return fmt.Errorf("%w: %q: %w", sentinel, key, err)
	default:
		if sentinel == nil {
			return fmt.Errorf("lockapi: %q: %w: %w", key, err, cerr)
		}
		return fmt.Errorf("%w: %q: %w: %w", sentinel, key, err, cerr)
	}
}
