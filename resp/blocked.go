package resp

// This file holds the blocking pops, as Redis's blocked.c: BLPOP, BRPOP,
// BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX and BZMPOP, and CLIENT
// UNBLOCK.
//
// A blocking command that finds data serves itself at once, like its
// non-blocking form. Otherwise (and outside MULTI and scripts, where it
// replies as if it had timed out) its client becomes a waiter: it is
// filed, in the engine section that found its keys empty, under each of
// its keys in the server's registry, in arrival order, and the client
// reads no further request until it is served, times out, is unblocked or
// closes. A command that creates a list or a sorted set (a push, LMOVE's
// destination, ZADD, a STORE, RENAME, MOVE, COPY, SWAPDB) marks its key
// ready; once the command that did so has finished (all of EXEC, all of a
// script), the ready keys are served: each key's waiters in the order they
// blocked, each in an engine section of its own holding the key, until the
// value runs out. A waiter is claimed once, under the registry's lock and
// inside the section holding the key, so each element goes to exactly one
// client, and its reply reaches its client through the client's outbox
// (outbox.go). Timeouts run on the server's clock, so an injected clock
// drives them; a waiter's timer goroutine ends when it is served, times
// out or its client closes, and a closing client leaves nothing behind.

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
)

// blockKey is a key of a database.
type blockKey struct {
	db  int
	key string
}

// Waiter states, guarded by blocking.mu.
const (
	waiting = iota
	finished
)

// waiter is a client blocked by a blocking command.
type waiter struct {
	c     *conn
	db    int
	keys  []string // the keys it waits on, each filed once
	proto int
	cmd   *command
	// serve tries to serve the waiter from key, in a section holding its
	// keys, writing the reply to x.w (an error ends the wait too); it
	// reports false, changing nothing, when key holds nothing for it.
	serve func(x *call, tx *engine.Tx, key string) bool
	// locks are the keys a section serving from key must hold besides it
	// (BLMOVE's destination).
	locks []string
	state int           // guarded by the registry's mu
	done  atomic.Bool   // set once its reply is pushed: its client resumes
	stop  chan struct{} // closed when it no longer waits (its timer ends)
}

// blockRegistry is the server's registry of waiters.
type blockRegistry struct {
	mu    sync.Mutex
	keys  map[blockKey][]*waiter // guarded by mu: each key's waiters, in order
	count atomic.Int64           // waiters filed: commands mark keys ready only while any is
}

// file adds w under its keys. It runs in the section that found them
// empty.
func (b *blockRegistry) file(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.keys == nil {
		b.keys = map[blockKey][]*waiter{}
	}
	for _, k := range w.keys {
		bk := blockKey{w.db, k}
		b.keys[bk] = append(b.keys[bk], w)
	}
	b.count.Add(1)
}

// finishLocked takes w out of the registry; it reports false if w was
// already finished. b.mu must be held.
func (b *blockRegistry) finishLocked(w *waiter) bool {
	if w.state != waiting {
		return false
	}
	w.state = finished
	for _, k := range w.keys {
		bk := blockKey{w.db, k}
		ws := slices.DeleteFunc(b.keys[bk], func(o *waiter) bool { return o == w })
		if len(ws) == 0 {
			delete(b.keys, bk)
		} else {
			b.keys[bk] = ws
		}
	}
	b.count.Add(-1)
	close(w.stop)
	return true
}

// waitersOf returns the waiters of a key, in order.
func (b *blockRegistry) waitersOf(bk blockKey) []*waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.keys[bk])
}

// blockedClients returns the number of blocked clients (INFO).
func (s *Server) blockedClients() int64 { return s.blocking.count.Load() }

// signalReady marks key of database db ready for its waiters, if any
// client waits at all; the client's command serves them once it has
// finished (serveReady).
func (x *call) signalReady(db int, key string) {
	if x.c != nil && x.s.blocking.count.Load() > 0 {
		x.c.ready = append(x.c.ready, blockKey{db, key})
	}
}

// signalWaited marks ready every key of databases a and b that a client
// waits on (SWAPDB).
func (x *call) signalWaited(a, b int) {
	r := &x.s.blocking
	r.mu.Lock()
	var keys []blockKey
	for bk := range r.keys {
		if bk.db == a || bk.db == b {
			keys = append(keys, bk)
		}
	}
	r.mu.Unlock()
	for _, bk := range keys {
		x.signalReady(bk.db, bk.key)
	}
}

// serveReady serves the waiters of the keys c's last command made ready,
// and of those that serving them makes ready in turn (BLMOVE's
// destination). c's owner calls it after each command it runs.
func (s *Server) serveReady(c *conn) {
	for len(c.ready) > 0 {
		bk := c.ready[0]
		c.ready = c.ready[1:]
		s.serveKey(c, bk)
	}
	c.ready = nil
}

// serveKey serves the waiters of one key in order while it has data.
func (s *Server) serveKey(c *conn, bk blockKey) {
	ws := s.blocking.waitersOf(bk)
	if s.lifoWaiters {
		slices.Reverse(ws)
	}
	for _, w := range ws {
		if !s.serveWaiter(c, bk, w) {
			return
		}
	}
}

// serveWaiter serves w from bk if it still waits, and reports false if
// bk had nothing left for it. What is pushed to w's client meanwhile (the
// invalidations its own command causes) follows its reply.
func (s *Server) serveWaiter(c *conn, bk blockKey, w *waiter) bool {
	var frame []byte
	served, empty := false, false
	w.c.holdPushes()
	defer func() {
		if served {
			w.done.Store(true)
		}
		w.c.releasePushes(frame) // nil unless served
	}()
	keys := append([]string{bk.key}, w.locks...)
	s.DB(bk.db).UpdateAdmitted(keys, func(tx *engine.Tx) { // as Redis serves a blocked client whatever the memory
		b := &s.blocking
		b.mu.Lock()
		defer b.mu.Unlock()
		if w.state != waiting {
			return
		}
		wr := &writer{proto: w.proto}
		x := &call{s: s, c: c, w: wr, db: bk.db, st: tx, cmd: w.cmd, tx: true}
		if !w.serve(x, tx, bk.key) {
			empty = true
			return
		}
		b.finishLocked(w)
		frame, served = wr.buf, true
	})
	return !empty
}

// timeout ends w without data, as Redis does when its time runs out or
// CLIENT UNBLOCK ... TIMEOUT: a null array. msg, if not empty, is an
// error reply instead (CLIENT UNBLOCK ... ERROR). It reports whether w was
// still waiting.
func (s *Server) timeout(w *waiter, msg string) bool {
	b := &s.blocking
	b.mu.Lock()
	ok := b.finishLocked(w)
	b.mu.Unlock()
	if !ok {
		return false
	}
	wr := &writer{proto: w.proto}
	if msg != "" {
		wr.errorReply(msg)
	} else {
		wr.nullArray()
	}
	w.done.Store(true)
	w.c.push(wr.buf)
	return true
}

// block makes x's client a waiter on keys for its command, which found
// them empty, inside the section (or transaction) x runs in: within MULTI
// or a script it replies a null array at once, as Redis does for a client
// that may not block. A timeout of 0 waits for ever.
func (x *call) block(keys []string, timeout time.Duration, locks []string, serve func(x *call, tx *engine.Tx, key string) bool) {
	if x.tx || x.c == nil || x.c.multi != nil {
		if x.cmd.name == "blmove" || x.cmd.name == "brpoplpush" {
			x.w.null() // Redis's BLMOVE replies a null string where it may not block
		} else {
			x.w.nullArray()
		}
		return
	}
	c := x.c
	uniq := make([]string, 0, len(keys))
	for _, k := range keys {
		if !slices.Contains(uniq, k) {
			uniq = append(uniq, k)
		}
	}
	w := &waiter{c: c, db: x.db, keys: uniq, proto: x.w.(*writer).proto, cmd: x.cmd,
		serve: serve, locks: locks, stop: make(chan struct{})}
	x.s.blocking.file(w)
	c.waiting = w
	s := x.s
	if !c.blockHook {
		// Once per client: a client that closes while blocked leaves
		// nothing in the registry.
		c.blockHook = true
		c.atClose(func() {
			if w := c.waiting; w != nil {
				b := &s.blocking
				b.mu.Lock()
				b.finishLocked(w)
				b.mu.Unlock()
			}
		})
	}
	if timeout > 0 {
		t := clock.NewTimer(s.clk, timeout)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer t.Stop()
			select {
			case <-t.C:
				s.timeout(w, "")
			case <-w.stop:
			}
		}()
	}
}

// resumed reports whether c's blocking command has been answered, and if
// so lets c read requests again. Only c's owner calls it.
func (c *conn) resumed() bool {
	if c.waiting == nil || !c.waiting.done.Load() {
		return false
	}
	c.waiting = nil
	return true
}

// parked reports whether c waits for a blocking command's answer: it
// reads no request meanwhile.
func (c *conn) parked() bool { return c.waiting != nil && !c.resumed() }

// timeoutArg parses a blocking command's timeout, in seconds with a
// fraction, as Redis's getTimeoutFromObjectOrReply: what does not convert
// to milliseconds within int64 counts as negative, as C's conversion makes
// it; 0 waits for ever.
func (x *call) timeoutArg(i int) (time.Duration, bool) {
	v, ok := parseLongDouble(x.args[i])
	if !ok {
		x.w.errorReply("ERR timeout is not a float or out of range")
		return 0, false
	}
	ms := int64(math.MinInt64)
	if v.inf == 0 {
		f, _ := v.f.Float64()
		if f *= 1000; f > math.MinInt64 && f < math.MaxInt64 {
			ms = int64(f)
		}
	}
	if ms < 0 {
		x.w.errorReply("ERR timeout is negative")
		return 0, false
	}
	if ms > 0 && ms > math.MaxInt64-unixMs(x.s.now()) {
		x.w.errorReply("ERR timeout is out of range")
		return 0, false
	}
	return time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond, true
}

// listPopper returns the function that serves BLPOP, BRPOP and BLMPOP
// from a key: count -1 is BLPOP's one element as [key, element], else
// BLMPOP's [key, [elements]].
func listPopper(where int, count int64) func(x *call, tx *engine.Tx, key string) bool {
	return func(x *call, tx *engine.Tx, key string) bool {
		o, _ := tx.Object(key)
		l, ok := o.(*listObj)
		if !ok || l.d.len() == 0 {
			return false
		}
		x.w.array(2)
		x.w.bulkString(key)
		if count < 0 {
			x.w.bulkString(l.pop(where))
		} else {
			x.replyPopRange(l, where, count)
		}
		popped(tx, key, l, where)
		return true
	}
}

// zsetPopper returns the function that serves BZPOPMIN, BZPOPMAX and
// BZMPOP from a key: count -1 is BZPOPMIN's [key, member, score], else
// BZMPOP's [key, [[member, score], ...]].
func zsetPopper(max bool, count int64) func(x *call, tx *engine.Tx, key string) bool {
	return func(x *call, tx *engine.Tx, key string) bool {
		o, _ := tx.Object(key)
		z, ok := o.(*zsetObj)
		if !ok || z.len() == 0 {
			return false
		}
		if count < 0 {
			x.w.array(3)
			x.w.bulkString(key)
			e := z.popEnd(max)
			tx.Notify(key, zpopKind(max)) // before the member, as zpop
			x.w.bulkString(e.member)
			x.w.double(e.score)
			dropIfEmpty(tx, key, z.len())
			return true
		}
		x.w.array(2)
		x.w.bulkString(key)
		x.zpop(tx, key, z, max, count, true)
		return true
	}
}

// blockingPop runs a blocking pop over keys: served at once from the
// first key that holds data (WRONGTYPE for a key of another type met
// before), otherwise blocked; a negative timeout replies a null array
// instead (LMPOP, ZMPOP). isType tells whether a value is of the
// command's type.
func (x *call) blockingPop(keys []string, timeout time.Duration, isType func(engine.Object) bool,
	serve func(x *call, tx *engine.Tx, key string) bool) {
	x.locked(keys, func(tx *engine.Tx) {
		for _, k := range keys {
			o, found := tx.Object(k)
			if !found {
				continue
			}
			if o == nil || !isType(o) {
				x.w.errorReply(errWrongType)
				return
			}
			if serve(x, tx, k) {
				return
			}
		}
		if timeout < 0 {
			x.w.nullArray()
			return
		}
		x.block(keys, timeout, nil, serve)
	})
}

func isList(o engine.Object) bool { _, ok := o.(*listObj); return ok }
func isZset(o engine.Object) bool { _, ok := o.(*zsetObj); return ok }

// cmdBPop is BLPOP and BRPOP key [key ...] timeout.
func cmdBPop(x *call) {
	timeout, ok := x.timeoutArg(len(x.args) - 1)
	if !ok {
		return
	}
	where := listHead
	if x.cmd.name == "brpop" {
		where = listTail
	}
	keys := x.keysOf(1, 1)
	x.blockingPop(keys[:len(keys)-1], timeout, isList, listPopper(where, -1))
}

// cmdBMPop is BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT n]
// and BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT n].
func cmdBMPop(x *call) {
	list := x.cmd.name == "blmpop"
	end := x.zsetEnd
	if list {
		end = x.listEnd
	}
	keys, where, count, ok := x.parseMPop(2, end)
	if !ok {
		return
	}
	timeout, ok := x.timeoutArg(1) // after the rest, as Redis parses it
	if !ok {
		return
	}
	if list {
		x.blockingPop(keys, timeout, isList, listPopper(where, count))
	} else {
		x.blockingPop(keys, timeout, isZset, zsetPopper(where == 1, count))
	}
}

// cmdBZPop is BZPOPMIN and BZPOPMAX key [key ...] timeout.
func cmdBZPop(x *call) {
	timeout, ok := x.timeoutArg(len(x.args) - 1)
	if !ok {
		return
	}
	keys := x.keysOf(1, 1)
	x.blockingPop(keys[:len(keys)-1], timeout, isZset, zsetPopper(x.cmd.name == "bzpopmax", -1))
}

// cmdBLMove is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout and
// BRPOPLPUSH source destination timeout.
func cmdBLMove(x *call) {
	from, to := listTail, listHead
	ti := 3
	if x.cmd.name == "blmove" {
		var ok bool
		if from, ok = x.listEnd(3); !ok {
			return
		}
		if to, ok = x.listEnd(4); !ok {
			return
		}
		ti = 5
	}
	timeout, ok := x.timeoutArg(ti)
	if !ok {
		return
	}
	src, dst := x.key(1), x.key(2)
	serve := func(x *call, tx *engine.Tx, key string) bool {
		o, _ := tx.Object(src)
		l, ok := o.(*listObj)
		if !ok || l.d.len() == 0 {
			return false
		}
		if d, found := tx.Object(dst); found && (d == nil || !isList(d)) {
			// As Redis: the waiter is answered WRONGTYPE and the element
			// stays where it was.
			x.w.errorReply(errWrongType)
			return true
		}
		x.lmove(tx, src, dst, from, to)
		x.signalReady(x.db, dst)
		return true
	}
	x.locked([]string{src, dst}, func(tx *engine.Tx) {
		o, found := tx.Object(src)
		if found && (o == nil || !isList(o)) {
			x.w.errorReply(errWrongType)
			return
		}
		if found {
			x.lmove(tx, src, dst, from, to)
			x.signalReady(x.db, dst)
			return
		}
		x.block([]string{src}, timeout, []string{dst}, serve)
	})
}

// cmdClientUnblock is CLIENT UNBLOCK client-id [TIMEOUT|ERROR]: 1 if the
// client was blocked by a blocking command and is now unblocked.
func cmdClientUnblock(x *call) {
	id, ok := x.intArg(2)
	if !ok {
		return
	}
	msg := ""
	if len(x.args) == 4 {
		switch {
		case equalFold(x.args[3], "timeout"):
		case equalFold(x.args[3], "error"):
			msg = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
		default:
			x.w.errorReply("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(x.args) > 4 {
		x.w.errorReply(errSyntax)
		return
	}
	b := &x.s.blocking
	b.mu.Lock()
	var target *waiter
	for _, ws := range b.keys {
		for _, w := range ws {
			if w.c.id == id {
				target = w
			}
		}
	}
	b.mu.Unlock()
	if target != nil && x.s.timeout(target, msg) {
		x.w.int(1)
		return
	}
	x.w.int(0)
}
