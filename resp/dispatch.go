package resp

// This file runs a client's requests through the command table, as
// Redis's processCommand: lookup, authentication, fault injection,
// maxmemory (evict.go), MULTI queueing, then the call (call.go),
// contained if it panics.

import (
	"strings"
)

// dispatch runs one request from the client, silenced if CLIENT REPLY
// says so.
func (c *conn) dispatch(args [][]byte) {
	if c.replyMode == replyOn {
		c.dispatchOne(args)
	} else {
		c.silenced(args)
	}
	if c.skipNext {
		c.skipNext, c.replyMode = false, replySkip
	}
}

// silenced runs a request whose reply the client asked not to get: its
// replies (errors included) are dropped, and what it pushes to the client
// (subscription confirmations, messages, invalidations) is kept, as
// Redis's CLIENT REPLY OFF and SKIP.
func (c *conn) silenced(args [][]byte) {
	if c.replyMode == replySkip {
		c.replyMode = replyOn
	}
	mark := len(c.w.buf)
	c.muted, c.holding = true, true
	defer func() {
		c.muted, c.holding = false, false
		c.w.buf = append(c.w.buf[:mark], c.held...)
		c.held = c.held[:0]
	}()
	c.dispatchOne(args)
}

// dispatchOne runs one request: the checks Redis makes before running a
// command, then either queueing (inside MULTI) or running it.
func (c *conn) dispatchOne(args [][]byte) {
	cmd, msg := lookup(args)
	if msg != "" {
		c.reject(cmd, args, msg)
		return
	}
	if !c.authed && cmd.flags&noAuth == 0 {
		c.reject(cmd, args, "NOAUTH Authentication required.")
		return
	}
	if c.checkMemory(cmd, args) { // before the pub/sub context, as Redis's processCommand
		c.reject(cmd, args, errOOM)
		return
	}
	if c.subscribed.Load() && c.w.proto == 2 && !pubsubAllowed(cmd) {
		c.reject(cmd, args, "ERR Can't execute '"+cmd.name+"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		return
	}
	if c.monitoring.Load() && cmd.flags&(readonly|write|mayReplicate) != 0 {
		c.reject(cmd, args, "ERR Replica can't interact with the keyspace")
		return
	}
	if f, ok := c.s.faults.take(cmd.name); ok {
		if f.Drop || f.DropReply {
			if f.DropReply {
				c.run(cmd, args)
			}
			c.w.buf = c.w.buf[:0]
			c.quit = true
			return
		}
		c.w.errorReply(f.Err)
		return
	}
	if c.s.busy.n.Load() > 0 && refusedWhileBusy(cmd) {
		c.reject(cmd, args, errBusy)
		return
	}
	if c.multi != nil && cmd.flags&noQueue == 0 {
		c.multi.queue(cmd, args)
		c.multi.denyOOM = c.multi.denyOOM || c.s.denyOOM(cmd, args, nil)
		c.w.simple("QUEUED")
		return
	}
	c.run(cmd, args)
}

// reject replies with an error for a command (nil if unknown) refused
// before it ran, which counts as a rejected call of it. Inside MULTI it dooms the transaction (EXEC replies
// EXECABORT); a refused EXEC itself discards the transaction, as Redis does.
func (c *conn) reject(cmd *command, args [][]byte, msg string) {
	if cmd != nil {
		c.s.stats(cmd).rejected.Add(1)
	}
	if cmd != nil && cmd.name == "exec" {
		c.multi = nil
		c.unwatchAll()
		c.w.errorReply("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		if c.s.mon.n.Load() != 0 {
			// Redis shows the EXEC of an aborted transaction to monitors.
			c.s.feedMonitors(&call{s: c.s, c: c, args: args, db: c.db, cmd: cmd}, false)
		}
		return
	}
	if c.multi != nil {
		c.multi.dirty = true
	}
	c.w.errorReply(msg)
	c.caching = false // a refused command ends CLIENT CACHING's effect too
}

// run executes cmd on the connection's selected database. A panic of the
// command (or of one it runs: EXEC's queued commands) is contained: see
// recover.go.
func (c *conn) run(cmd *command, args [][]byte) {
	c.s.commands.Add(1)
	x := &c.x
	*x = call{s: c.s, c: c, w: &c.w, args: args, db: c.db, st: c.s.store(c.db), cmd: cmd}
	mark := len(c.w.buf)
	defer func() {
		if v := recover(); v != nil {
			c.recovered(cmd, mark, v)
		}
	}()
	s := c.s
	if s.trk.overLimit() {
		s.trackingLimit(c)
	}
	if c.sectioned(cmd) {
		x.runSectioned()
	} else {
		execute(x)
		s.called(x, false)
	}
	if len(c.pendingInv) > 0 || len(c.pendingNew) > 0 || c.caching || c.quit {
		s.trackingAfterCommand(c, cmd)
	}
	if len(c.ready) > 0 {
		s.serveReady(c) // after the command's invalidations, as Redis's handleClientsBlockedOnKeys
	}
	s.updateFeed()
}

// sectioned reports whether c's command must run in an engine section
// tagged with c, rather than as the engine calls it makes: when the
// command reads or writes keys and c's own changes must be told from
// others' (c tracks keys, or receives invalidations for a tracking client,
// or pub/sub messages in RESP3, where its own come before its reply), or
// when BCAST clients gather each command's changed keys into one
// message. Scripts and transactions tag the sections they make already;
// pub/sub commands name channels, not keys; a blocking command must not
// run as a transaction's (it would not block), and makes its own tagged
// sections (call.locked).
func (c *conn) sectioned(cmd *command) bool {
	if cmd.keys == (keySpec{}) || cmd.flags&(readonly|write) == 0 || cmd.flags&(pubSub|blocking) != 0 ||
		cmd.acl&aclScripting != 0 {
		return false
	}
	return c.trk != nil || c.redirTargets.Load() > 0 || c.subscribed.Load() || c.s.trk.bcastCount.Load() > 0
}

// runSectioned runs x's command as a transaction's command, in a section
// over its keys tagged with its client (every database for those that may
// reach others), and remembers what it read inside it.
func (x *call) runSectioned() {
	run := func(st store, t *txSet) {
		x.st, x.tx, x.txs = st, true, t
		execute(x)
		x.s.called(x, false)
	}
	if x.cmd.flags&allDBs != 0 {
		x.s.section(x.c, allDatabases, func(t *txSet) { run(t.get(x.db), t) })
		return
	}
	pos, ok := x.cmd.keys.positions(x.args)
	if !ok {
		execute(x) // arguments that name no keys: the command replies its error
		x.s.called(x, false)
		return
	}
	var keys []string // nil: every key of the database
	if x.cmd.flags&movableKeys == 0 || x.cmd.keys.numkeys != 0 {
		keys = make([]string, len(pos))
		for i, p := range pos {
			keys[i] = string(x.args[p])
		}
	} // else keys its spec cannot name (SORT's BY, GET and STORE)
	updateBy(x.c, x.s.DB(x.db), keys, func(st store) {
		var t txSet
		t.st[x.db] = st
		run(st, &t)
	})
}

// refusedWhileBusy reports whether cmd gets BUSY while a script is busy:
// every command but those Redis allows then, and WATCH too, which here
// would wait for the shard locks the script holds (and stall the event
// loop that must answer the others meanwhile).
func refusedWhileBusy(cmd *command) bool {
	return cmd.flags&allowBusy == 0 || cmd.name == "watch"
}
