package lockapi

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxKeys is the most keys ObtainAll takes.
const MaxKeys = 1024

// ObtainAll acquires every key of keys as one lock, all or nothing, for
// ttl, and returns the Lock (Kind KindMulti); opts may be nil. Each attempt
// is one atomic step at the backend: either every key is free and all are
// taken, or none is touched, so no partial hold is ever left behind, and
// two ObtainAll calls over overlapping keys in different orders cannot
// deadlock (neither ever holds some keys while waiting for others). The
// keys are single lock keys: a multi-key lock and a Client.Obtain lock on
// one of its keys exclude each other. The Lock's Release, Refresh and TTL
// act on all keys together (Refresh only if all are still held; TTL is
// the least of the keys'), it is lost when any key is, and Fences gives
// each key's fencing token.
//
// Waiting is as for Obtain (see the package doc); on a Watcher backend a
// waiter watches one key it found held at a time. keys must hold 1 to
// MaxKeys distinct keys, each valid for Obtain (ErrInvalidKey otherwise);
// over a Redis Cluster they must also share one hash slot (use a common
// hash tag, "{order:7}:items"), which the Redis backend checks before
// sending anything. Options are as for Obtain, except Reentrant
// (ErrInvalidOption). A backend that cannot hold several keys at once
// (Redlock) is refused with an error matching errors.ErrUnsupported.
// ObtainAll is safe for concurrent use.
func (c *Client) ObtainAll(ctx context.Context, keys []string, ttl time.Duration, opts *ObtainOptions) (*Lock, error) {
	name := strings.Join(keys, ",")
	if len(keys) == 0 || len(keys) > MaxKeys {
		return nil, newError("obtain", name, ErrInvalidKey, fmt.Sprintf("%d keys, want 1 to %d", len(keys), MaxKeys), nil)
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, err
		}
	}
	if k, dup := duplicate(keys); dup {
		return nil, newError("obtain", name, ErrInvalidKey, fmt.Sprintf("key %q given twice", k), nil)
	}
	cfg, err := primitiveConfig(ctx, name, ttl, opts)
	if err != nil {
		return nil, err
	}
	mb, ok := c.b.(MultiBackend)
	if !ok {
		return nil, unsupported(name, c.b, "multi-key locks")
	}
	l := c.newLock(name, &cfg)
	l.kind = KindMulti
	m := &multiLease{mb: mb, keys: append([]string(nil), keys...)}
	m.queue = multiQueue(keys)
	l.p = m
	return c.obtain(ctx, l, ttl, &cfg)
}

// multiQueue is the FIFO queue key of a multi-key lock over keys: each
// key after its length, so that different lists never share a queue
// (joining with commas would give ["a", "b"] and ["a,b"] one).
func multiQueue(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
	}
	return primQueue(KindMulti, b.String())
}

// duplicate returns a key that keys holds twice, if any: by comparing
// pairs for a few keys, with a set beyond.
func duplicate(keys []string) (string, bool) {
	if len(keys) <= 8 {
		for i, k := range keys {
			if slices.Contains(keys[:i], k) {
				return k, true
			}
		}
		return "", false
	}
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; dup {
			return k, true
		}
		seen[k] = struct{}{}
	}
	return "", false
}

// multiLease is the prim of a multi-key lock.
type multiLease struct {
	mb     MultiBackend
	keys   []string // immutable
	fences []int64  // set by the successful try
	watch  []string // see prim.watchKeys
	queue  string
}

var _ prim = (*multiLease)(nil)

func (m *multiLease) try(ctx context.Context, l *Lock, ttl time.Duration, _ bool) (bool, error) {
	fences, blocked, ok, err := m.mb.AcquireAll(ctx, m.keys, l.value, ttl)
	switch {
	case err != nil:
		return false, err
	case !ok:
		if blocked < 0 || blocked >= len(m.keys) {
			blocked = 0
		}
		if len(m.watch) != 1 || m.watch[0] != m.keys[blocked] {
			m.watch = m.keys[blocked : blocked+1 : blocked+1]
		}
		return false, nil
	}
	m.fences, m.watch = fences, m.keys
	if len(fences) > 0 {
		l.fence = fences[0]
	}
	return true, nil
}

func (m *multiLease) watchKeys() []string { return m.watch }

func (m *multiLease) cleanup(ctx context.Context, l *Lock, failed bool) {
	if failed {
		m.mb.ReleaseAll(ctx, m.keys, l.value)
	}
}

func (m *multiLease) queueKey() string { return m.queue }

func (m *multiLease) release(ctx context.Context, l *Lock) (bool, error) {
	return m.mb.ReleaseAll(ctx, m.keys, l.value)
}

func (m *multiLease) refresh(ctx context.Context, l *Lock, ttl time.Duration) (bool, error) {
	return m.mb.RefreshAll(ctx, m.keys, l.value, ttl)
}

func (m *multiLease) pttl(ctx context.Context, l *Lock) (time.Duration, bool, error) {
	return m.mb.PTTLAll(ctx, m.keys, l.value)
}
