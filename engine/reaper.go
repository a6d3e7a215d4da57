package engine

import (
	"math"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/shard"
)

// reapBatch bounds the deletions per lock hold in the reaper (about 100 µs).
const reapBatch = 1024

// Reap synchronously reclaims every key expired at the clock's current time
// on all shards and returns how many it deleted. The reaper does this on its
// own; Reap is for deterministic tests with a mock clock and for engines
// after Close. It reads the clock once, is safe for concurrent use, and
// visits the shards one at a time.
func (e *Engine) Reap() int {
	now := e.now()
	total := 0
	var buf []string
	for i := range e.m.Shards() {
		var n int
		n, _, buf = e.reapShard(e.m.ShardAt(i), now, buf)
		total += n
	}
	return total
}

// reapShard advances s's wheel to now and deletes the keys that fired and
// are still expired, at most reapBatch per lock hold. It returns the number
// deleted, the wheel's next deadline (math.MaxInt64 if none) and buf for
// reuse.
func (e *Engine) reapShard(s *shardT, now int64, buf []string) (int, int64, []string) {
	e.reapMu.Lock()
	defer e.reapMu.Unlock()
	deleted := 0
	next := int64(math.MaxInt64)
	s.Lock()
	for {
		w := s.Aux.wheel
		if w == nil {
			break
		}
		// Collect keys, not handles: between batches the lock is dropped,
		// and a delete may renumber the shard's entries.
		buf = buf[:0]
		w.Advance(now, func(hd shard.Handle) { buf = append(buf, s.EntryLocked(hd).Key) })
		if nx, ok := w.NextDeadline(); ok {
			next = nx
		}
		for i, key := range buf {
			if i > 0 && i%reapBatch == 0 {
				s.Unlock()
				s.Lock()
			}
			// A fired key is expired and still stored unless a writer
			// deleted or rewrote it after an unlock above: delete it only
			// if it is still stored and expired.
			hd, pos, ok := s.FindLocked(e.m.Hash(key), key)
			if !ok {
				continue
			}
			if ent := s.EntryLocked(hd); ent.Exp != noDeadline && ent.Exp < now {
				e.removeLocked(s, hd, int32(pos), KindExpired, nil)
				deleted++
			}
		}
		clear(buf)
		// A delete that renumbered the shard filed the remaining deadlines
		// in a new wheel, some perhaps already due: advance it too.
		if s.Aux.wheel == w || s.Aux.wheel == nil {
			break
		}
		next = math.MaxInt64
	}
	s.Unlock()
	if cap(buf) > 4*reapBatch { // keep at most 64 KiB between wakes
		buf = nil
	}
	return deleted, next, buf
}

// reaper is the engine's goroutine: it sleeps until the earliest deadline of
// any shard, reclaims what expired, and repeats until Close.
//
// It reads an injected clock only while holding no lock, and waits on it
// only through fresh one-shot clock.Timers (see package clock for why): a
// fake clock that fires timers under its own mutex can then never block on
// the engine, nor the engine on it. The real clock's timer is reused.
func (e *Engine) reaper() {
	defer close(e.done)
	var rt *time.Timer
	if !e.user {
		rt = time.NewTimer(time.Hour)
		rt.Stop()
		defer rt.Stop()
	}
	var buf []string
	for {
		e.wakes.Add(1)
		// While scanning, every schedule kicks (nextWake is MaxInt64), so a
		// deadline filed into an already scanned shard is not missed.
		e.nextWake.Store(math.MaxInt64)
		raw := e.tm.Nano()
		now := e.tm.Monotonic(raw)
		next := int64(math.MaxInt64)
		for i := range e.m.Shards() {
			var nx int64
			_, nx, buf = e.reapShard(e.m.ShardAt(i), now, buf)
			next = min(next, nx)
		}
		var wake <-chan time.Time
		var fake *clock.Timer
		if next != math.MaxInt64 {
			e.nextWake.Store(next)
			// Sleep until the clock itself reads next. After the clock
			// stepped back, now (held at the latest reading) is ahead of
			// raw, and the engine's time reaches next exactly when the
			// clock does.
			if rt != nil {
				rt.Reset(time.Duration(next - raw)) // Go 1.23+: no stale value after Reset
				wake = rt.C
			} else {
				var due bool
				fake, due = e.fakeTimer(raw, next)
				if due {
					continue
				}
				wake = fake.C
			}
		}
		select {
		case <-wake:
		case <-e.kick:
		case <-e.stop:
			if fake != nil {
				fake.Stop()
			}
			return
		}
		if fake != nil {
			fake.Stop() // a kick: no longer needed in the fake clock's list
		}
	}
}

// fakeTimer files a wake-up at next on an injected clock, given a reading
// raw taken before. A fake clock files the wait relative to its time when
// the timer is made, so if the clock moved since raw the wait would fire
// late by as much: the timer is made again from a fresh reading until the
// clock stood still across one (a few tries, for clocks that move on their
// own; then the lateness is that of one try). due reports that the clock
// already reached next: scan instead of waiting.
func (e *Engine) fakeTimer(raw, next int64) (t *clock.Timer, due bool) {
	for try := 0; ; try++ {
		t = clock.NewTimer(e.tm.Clock(), time.Duration(next-raw))
		after := e.tm.Nano()
		if after >= next {
			t.Stop()
			return nil, true
		}
		if after == raw || try == 3 {
			return t, false
		}
		t.Stop()
		raw = after
	}
}
