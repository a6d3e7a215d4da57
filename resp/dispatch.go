package resp

// This file runs a client's requests through the command table, as
// Redis's processCommand: lookup, authentication, fault injection,
// maxmemory (evict.go), MULTI queueing, then the call (call.go),
// contained if it panics.

import (
	"strings"
)

// dispatch runs one request from the client: the checks Redis makes before
// running a command, then either queueing (inside MULTI) or running it.
func (c *conn) dispatch(args [][]byte) {
	cmd, msg := lookup(args)
	if msg != "" {
		c.reject(cmd, msg)
		return
	}
	if !c.authed && cmd.flags&noAuth == 0 {
		c.reject(cmd, "NOAUTH Authentication required.")
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
	if c.checkMemory(cmd, args) {
		c.reject(cmd, errOOM)
		return
	}
	if c.s.busy.n.Load() > 0 && refusedWhileBusy(cmd) {
		c.reject(cmd, errBusy)
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
func (c *conn) reject(cmd *command, msg string) {
	if cmd != nil {
		c.s.stats(cmd).rejected.Add(1)
	}
	if cmd != nil && cmd.name == "exec" {
		c.multi = nil
		c.unwatchAll()
		c.w.errorReply("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		return
	}
	if c.multi != nil {
		c.multi.dirty = true
	}
	c.w.errorReply(msg)
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
	execute(x)
	if len(c.ready) > 0 {
		c.s.serveReady(c)
	}
}

// refusedWhileBusy reports whether cmd gets BUSY while a script is busy:
// every command but those Redis allows then, and WATCH too, which here
// would wait for the shard locks the script holds (and stall the event
// loop that must answer the others meanwhile).
func refusedWhileBusy(cmd *command) bool {
	return cmd.flags&allowBusy == 0 || cmd.name == "watch"
}
