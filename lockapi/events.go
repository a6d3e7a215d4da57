package lockapi

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// EventType is what an Event reports.
type EventType uint8

const (
	// EventAcquired: an Obtain succeeded.
	EventAcquired EventType = iota + 1
	// EventReleased: a Release succeeded.
	EventReleased
	// EventLost: the Client learnt that a lease was lost (Lock.Err is set).
	EventLost
	// EventRefreshFailed: a Refresh, manual or by the watchdog, failed.
	EventRefreshFailed
)

// String returns the type's name: "acquired", "released", "lost" or
// "refresh-failed".
func (t EventType) String() string {
	switch t {
	case EventAcquired:
		return "acquired"
	case EventReleased:
		return "released"
	case EventLost:
		return "lost"
	case EventRefreshFailed:
		return "refresh-failed"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is one thing that happened to a lease, given to Options.OnEvent.
type Event struct {
	// Type says what happened.
	Type EventType
	// Kind is the lease's kind.
	Kind Kind
	// Key is the lock's key or, for a semaphore or read-write lock, its
	// name (Lock.Key).
	Key string
	// Token is the lease's token.
	Token string
	// Fence is the lease's fencing token, 0 when it has none (for a
	// multi-key lock, the first key's).
	Fence int64
	// Time is when it happened, on the Client's clock.
	Time time.Time
	// Wait is, for EventAcquired, how long the Obtain waited after its
	// first attempt found the lock held (0 when it got it at once).
	Wait time.Duration
	// Held is, for EventReleased and EventLost, the time since the
	// acquisition.
	Held time.Duration
	// TTL is, for EventAcquired and EventRefreshFailed, the TTL asked for.
	TTL time.Duration
	// Err is, for EventLost, why (what Lock.Err returns), and for
	// EventRefreshFailed, the Refresh's error.
	Err error
}

// LogValue makes an Event a group of attributes for log/slog.
func (e Event) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("event", e.Type.String()),
		slog.String("kind", e.Kind.String()),
		slog.String("key", e.Key),
		slog.String("token", e.Token))
	if e.Fence != 0 {
		attrs = append(attrs, slog.Int64("fence", e.Fence))
	}
	switch e.Type {
	case EventAcquired:
		attrs = append(attrs, slog.Duration("wait", e.Wait), slog.Duration("ttl", e.TTL))
	case EventReleased:
		attrs = append(attrs, slog.Duration("held", e.Held))
	case EventLost:
		attrs = append(attrs, slog.Duration("held", e.Held))
	case EventRefreshFailed:
		attrs = append(attrs, slog.Duration("ttl", e.TTL))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}

// LogEvents returns an Options.OnEvent function that logs every event to
// logger: acquisitions and releases at level Debug, losses and refresh
// failures at Warn, each as the event's attributes under the "lock" group.
func LogEvents(logger *slog.Logger) func(Event) {
	return func(e Event) {
		level := slog.LevelDebug
		if e.Type == EventLost || e.Type == EventRefreshFailed {
			level = slog.LevelWarn
		}
		ctx := context.Background()
		if !logger.Enabled(ctx, level) {
			return
		}
		logger.LogAttrs(ctx, level, "lock "+e.Type.String(), slog.Any("lock", e))
	}
}
