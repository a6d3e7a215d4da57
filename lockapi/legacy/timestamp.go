package legacy

import (
	"fmt"
	"strconv"
	"time"
)

// Unit is the resolution of the timestamps stored in lock keys. Every
// application sharing a key must use the same unit.
type Unit uint8

const (
	// Seconds stores whole Unix seconds, as the Redis SETNX page does; it is
	// the zero value and the right choice for interoperating with legacy
	// applications.
	Seconds Unit = iota
	// Milliseconds stores whole Unix milliseconds, for applications that need
	// timeouts shorter than a few seconds.
	Milliseconds
)

// plausibleBound separates seconds from milliseconds timestamps: 10^11
// seconds is the year 5138 and 10^11 milliseconds is March 1973, so no clock
// in use produces a seconds value at or above it or a milliseconds value
// below it. Values on the wrong side are read as malformed rather than as a
// far-future or long-expired time (see the package doc).
const plausibleBound = 100_000_000_000

// String returns the unit's name, for messages.
func (u Unit) String() string {
	switch u {
	case Seconds:
		return "seconds"
	case Milliseconds:
		return "milliseconds"
	}
	return fmt.Sprintf("Unit(%d)", uint8(u))
}

func (u Unit) valid() bool { return u == Seconds || u == Milliseconds }

func (u Unit) duration() time.Duration {
	if u == Milliseconds {
		return time.Millisecond
	}
	return time.Second
}

// floor returns t in whole units since the Unix epoch, rounded down.
func (u Unit) floor(t time.Time) int64 {
	if u == Milliseconds {
		return t.UnixMilli()
	}
	return t.Unix()
}

// ceil returns d in whole units, rounded up, so that a timeout that is not a
// multiple of the unit never shortens the lock.
func (u Unit) ceil(d time.Duration) int64 {
	ud := u.duration()
	return int64((d + ud - 1) / ud)
}

// parse reads a stored timestamp: decimal digits, optionally followed by a
// dot and more digits, whose integer part (the value rounded down) is
// returned. It fails for anything else, including signs, spaces, exponents,
// values that overflow int64 and values implausible for u.
func (u Unit) parse(v string) (int64, error) {
	intPart := v
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '.' {
			intPart = v[:i]
			for j := i + 1; j < len(v); j++ {
				if v[j] < '0' || v[j] > '9' {
					return 0, fmt.Errorf("%w: %q is not a timestamp", ErrMalformed, v)
				}
			}
			break
		}
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %q is not a timestamp", ErrMalformed, v)
		}
	}
	if intPart == "" {
		return 0, fmt.Errorf("%w: %q is not a timestamp", ErrMalformed, v)
	}
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is out of range", ErrMalformed, v)
	}
	if (u == Seconds) != (n < plausibleBound) {
		return 0, fmt.Errorf("%w: %q is implausible as a Unix time in %v", ErrMalformed, v, u)
	}
	return n, nil
}
