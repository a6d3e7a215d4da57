package inproc

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
)

// A read-write lock is the keys of lockkeys.RW: the writer, the waiting
// writer's mark, and readers, each a key with its own TTL; a counter giving
// reader ids and fencing tokens; and the list of reader ids, which has no
// TTL and is pruned of readers gone (expired or released) whenever a
// reader or writer acquires.

// parseIDs reads a reader list ("3,7,12"), skipping malformed entries.
func parseIDs(s string) []int64 {
	if s == "" {
		return nil
	}
	ids := make([]int64, 0, strings.Count(s, ",")+1)
	for part := range strings.SplitSeq(s, ",") {
		if id, err := strconv.ParseInt(part, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func formatIDs(ids []int64) string {
	var b []byte
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// optimisticTries is how many times rwSection locks only the keys it read
// before it locks every shard (a variable for the test of the fallback).
var optimisticTries = 3

// rwSection runs fn in one engine section over the keys of lk, with the
// reader ids listed inside the section. The reader keys to lock are known
// only from the list, so it reads the list and the counter first, locks
// the keys they name (and the next reader's), and runs again if either
// changed in between; after optimisticTries such races it locks every
// shard, which needs no names. An absent counter does not say where it
// resumes (a reserved counter never repeats a value), so it is first
// created at that value (an IncrBy of 0), and the section runs again if it
// finds the counter absent.
func (b *Backend) rwSection(lk lockkeys.RW, fn func(tx *engine.Tx, ids []int64)) {
	for try := 0; ; try++ {
		list, _ := b.e.Get(lk.Readers())
		count, counted := b.e.Get(lk.Counter())
		if !counted && try < optimisticTries {
			n, err := b.e.IncrBy(lk.Counter(), 0)
			count, counted = strconv.FormatInt(n, 10), err == nil
		}
		var keys []string
		if try < optimisticTries {
			ids := parseIDs(list)
			n, _ := strconv.ParseInt(count, 10, 64)
			keys = make([]string, 0, 5+len(ids))
			keys = append(keys, lk.Writer(), lk.Queue(), lk.Readers(), lk.Counter(), lk.Reader(n+1))
			for _, id := range ids {
				keys = append(keys, lk.Reader(id))
			}
		}
		stale := false
		b.e.Update(keys, func(tx *engine.Tx) {
			l, _ := tx.Get(lk.Readers())
			c, ok := tx.Get(lk.Counter())
			if keys != nil && (l != list || c != count || !ok || !counted) {
				stale = true
				return
			}
			fn(tx, parseIDs(l))
		})
		if !stale {
			return
		}
	}
}

// liveReaders returns the ids of readers whose keys still exist and
// rewrites the list (deleting it when empty) if some were gone.
func liveReaders(tx *engine.Tx, lk lockkeys.RW, ids []int64) []int64 {
	live := ids[:0:0]
	for _, id := range ids {
		if tx.Exists(lk.Reader(id)) {
			live = append(live, id)
		}
	}
	if len(live) != len(ids) {
		if len(live) == 0 {
			tx.Del(lk.Readers())
		} else {
			tx.Set(lk.Readers(), formatIDs(live))
		}
	}
	return live
}

// AcquireRead takes a read lease on name for value with ttl unless a writer
// holds the lock or waits for it. On success key is the reader's key and
// fence its id, which is also the lock's next fencing token (0 with
// NoFencing); on failure key is the writer's key or the waiting mark's. One
// engine section (see rwSection). It returns engine.ErrInvalidTTL for a ttl
// <= 0 or a deadline out of range, and engine.ErrNotInteger if the counter
// key was overwritten.
func (b *Backend) AcquireRead(_ context.Context, name, value string, ttl time.Duration) (key string, fence int64, ok bool, err error) {
	if ttl <= 0 {
		return "", 0, false, engine.ErrInvalidTTL
	}
	lk := lockkeys.NewRW(name)
	b.rwSection(lk, func(tx *engine.Tx, ids []int64) {
		switch {
		case tx.Exists(lk.Writer()):
			key = lk.Writer()
			return
		case tx.Exists(lk.Queue()):
			key = lk.Queue()
			return
		}
		var id int64
		if id, err = tx.IncrBy(lk.Counter(), 1); err != nil {
			return
		}
		key = lk.Reader(id)
		if _, err = tx.SetWith(key, value, engine.SetArgs{TTL: ttl}); err != nil {
			return
		}
		live := liveReaders(tx, lk, ids)
		tx.Set(lk.Readers(), formatIDs(append(live, id)))
		fence, ok = id, true
	})
	if b.noFence {
		fence = 0
	}
	return key, fence, ok, err
}

// AcquireWrite takes the write lease on name for value with ttl if no
// writer holds it and no reader's key is live. On success key is the
// writer's key and fence the lock's next fencing token (0 with NoFencing);
// the waiting mark is removed if it is value's. On failure key is the
// writer's key or a live reader's, and, if queue, value marks itself
// waiting for ttl unless another writer's mark is there. One engine section
// (see rwSection). Errors are AcquireRead's.
func (b *Backend) AcquireWrite(_ context.Context, name, value string, ttl time.Duration, queue bool) (key string, fence int64, ok bool, err error) {
	if ttl <= 0 {
		return "", 0, false, engine.ErrInvalidTTL
	}
	lk := lockkeys.NewRW(name)
	b.rwSection(lk, func(tx *engine.Tx, ids []int64) {
		if tx.Exists(lk.Writer()) {
			key = lk.Writer()
		} else if live := liveReaders(tx, lk, ids); len(live) > 0 {
			key = lk.Reader(live[0])
		}
		if key != "" {
			if queue {
				err = markWaiting(tx, lk.Queue(), value, ttl)
			}
			return
		}
		var id int64
		if id, err = tx.IncrBy(lk.Counter(), 1); err != nil {
			return
		}
		key = lk.Writer()
		if _, err = tx.SetWith(key, value, engine.SetArgs{TTL: ttl}); err != nil {
			return
		}
		tx.CompareAndDelete(lk.Queue(), value)
		fence, ok = id, true
	})
	if b.noFence {
		fence = 0
	}
	return key, fence, ok, err
}

// markWaiting sets the waiting mark q to value for ttl if it is absent, or
// renews it if it is value's.
func markWaiting(tx *engine.Tx, q, value string, ttl time.Duration) error {
	v, marked := tx.Get(q)
	var err error
	switch {
	case !marked:
		_, err = tx.SetWith(q, value, engine.SetArgs{TTL: ttl})
	case v == value:
		_, err = tx.CompareAndPExpire(q, value, ttl)
	}
	return err
}

// Abandon removes value's waiting mark on name and any lease value holds
// there, in one engine section.
func (b *Backend) Abandon(_ context.Context, name, value string) error {
	lk := lockkeys.NewRW(name)
	b.rwSection(lk, func(tx *engine.Tx, ids []int64) {
		tx.CompareAndDelete(lk.Queue(), value)
		tx.CompareAndDelete(lk.Writer(), value)
		for _, id := range ids {
			tx.CompareAndDelete(lk.Reader(id), value)
		}
		liveReaders(tx, lk, ids)
	})
	return nil
}
