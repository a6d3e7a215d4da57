package resp

// This file runs requests through the command table, as Redis's
// processCommand and call: lookup with Redis's existence, arity and
// authentication checks, MULTI queueing, execution, and the statistics of
// INFO commandstats.

import (
	"strconv"
	"strings"
	"time"
)

// lookup finds the command named by args and checks its arity as Redis
// does. msg is the error reply when it fails: cmd is then nil for an
// unknown command or subcommand, and the command for a wrong number of
// arguments.
func lookup(args [][]byte) (cmd *command, msg string) {
	cmd = find(commandTable, args[0])
	if cmd == nil {
		return nil, unknownCommand(args)
	}
	if cmd.subs != nil && len(args) > 1 {
		sub := find(cmd.subs, args[1])
		if sub == nil {
			return nil, "ERR unknown subcommand '" + sanitize(truncate(string(args[1]), 128)) +
				"'. Try " + strings.ToUpper(cmd.name) + " HELP."
		}
		cmd = sub
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || len(args) < -cmd.arity {
		return cmd, "ERR wrong number of arguments for '" + cmd.name + "' command"
	}
	return cmd, ""
}

// find looks name up in t case-insensitively without allocating.
func find(t map[string]*command, name []byte) *command {
	var buf [24]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return t[string(buf[:len(name)])]
}

// unknownCommand is Redis's reply to a command it does not know.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		n := 128 - b.Len()
		b.WriteByte('\'')
		b.WriteString(truncate(string(a), n))
		b.WriteString("' ")
	}
	return "ERR unknown command '" + sanitize(truncate(string(args[0]), 128)) +
		"', with args beginning with: " + sanitize(b.String())
}

// truncate returns at most n bytes of s.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// sanitize replaces CR and LF, which would break the protocol, by spaces,
// as Redis does in error replies.
func sanitize(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

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
	if c.multi != nil && cmd.flags&noQueue == 0 {
		c.multi.queue(cmd, args)
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
}

// execute runs x's command and records it in the command's statistics, as
// Redis's call does: one call, the time it took, and a failed call when it
// replied an error of its own. An error that a command it ran replied
// (EXEC's queued commands, or those a script calls on its own replier)
// counts for that command, and so does one replied before it started.
func execute(x *call) {
	x.w.takeErrors()
	start := time.Now()
	x.cmd.fn(x)
	st := x.s.stats(x.cmd)
	st.usec.Add(int64(time.Since(start) / time.Microsecond))
	st.calls.Add(1)
	if x.w.takeErrors() > 0 {
		st.failed.Add(1)
	}
}

// stats returns the server's statistics of cmd.
func (s *Server) stats(cmd *command) *cmdStats { return &s.cmdStats[cmd.id] }

// writeCommandStats writes INFO's commandstats lines: one per command or
// subcommand called or refused since the last CONFIG RESETSTAT, in
// Redis's format (usec_per_call is the C float Redis divides in).
func (s *Server) writeCommandStats(b *strings.Builder) {
	for _, n := range commandNames() {
		c := commandTable[n]
		for _, c := range append([]*command{c}, c.subcommands()...) {
			st := s.stats(c)
			calls, usec := st.calls.Load(), st.usec.Load()
			rejected, failed := st.rejected.Load(), st.failed.Load()
			if calls == 0 && rejected == 0 && failed == 0 {
				continue
			}
			perCall := float32(0)
			if calls != 0 {
				perCall = float32(usec) / float32(calls)
			}
			b.WriteString("cmdstat_" + c.name + ":calls=" + itoa(calls) + ",usec=" + itoa(usec) +
				",usec_per_call=" + strconv.FormatFloat(float64(perCall), 'f', 2, 64) +
				",rejected_calls=" + itoa(rejected) + ",failed_calls=" + itoa(failed) + "\r\n")
		}
	}
}

// resetCommandStats clears the statistics of every command (CONFIG
// RESETSTAT).
func (s *Server) resetCommandStats() {
	for i := range s.cmdStats {
		st := &s.cmdStats[i]
		st.calls.Store(0)
		st.usec.Store(0)
		st.rejected.Store(0)
		st.failed.Store(0)
	}
}
