package resp

// This file holds the command table and the dispatcher: lookup, Redis's
// existence, arity and authentication checks, MULTI queueing, execution.

import (
	"strings"
)

// cmdFlags describe where a command may run.
type cmdFlags uint8

const (
	// noAuth commands run before authentication (AUTH, HELLO, QUIT, RESET).
	noAuth cmdFlags = 1 << iota
	// noScript commands are refused inside Lua scripts.
	noScript
	// write commands are refused in read-only scripts (EVAL_RO).
	write
	// noQueue commands run at once inside MULTI instead of being queued.
	noQueue
	// allDBs commands may touch other databases than the selected one
	// (SELECT, MOVE, COPY ... DB, FLUSHALL, and INFO, which counts their
	// keys); a transaction holding them locks every database.
	allDBs
)

// command is one entry of the command table.
type command struct {
	name  string // lower case; "container|sub" for subcommands
	arity int    // > 0: exact argument count; < 0: at least -arity
	flags cmdFlags
	fn    func(x *call)
	subs  map[string]*command // subcommands of a container (CLIENT, ...)
}

// commandTable maps lower-case names to commands. It is filled by init
// functions of the command files and read-only afterwards.
var commandTable = map[string]*command{}

// register adds commands to the table (at init).
func register(cmds ...*command) {
	for _, c := range cmds {
		if i := strings.IndexByte(c.name, '|'); i >= 0 {
			parent := commandTable[c.name[:i]]
			if parent.subs == nil {
				parent.subs = map[string]*command{}
			}
			parent.subs[c.name[i+1:]] = c
			continue
		}
		commandTable[c.name] = c
	}
}

// lookup finds the command named by args, checking existence and arity as
// Redis does; on failure it returns the error reply.
func lookup(args [][]byte) (*command, string) {
	cmd := find(commandTable, args[0])
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
		return nil, "ERR wrong number of arguments for '" + cmd.name + "' command"
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
	if cmd == nil {
		c.reject(find(commandTable, args[0]), msg)
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
// before it ran. Inside MULTI it dooms the transaction (EXEC replies
// EXECABORT); a refused EXEC itself discards the transaction, as Redis does.
func (c *conn) reject(cmd *command, msg string) {
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
	cmd.fn(x)
}
