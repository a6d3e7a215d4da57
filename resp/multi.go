package resp

// This file holds the transactions, as Redis's multi.c: MULTI, EXEC,
// DISCARD, WATCH and UNWATCH. EXEC runs in an atomic section (db.go).

import (
	"slices"
)

// multiState is a transaction being queued.
type multiState struct {
	cmds  []queued
	dirty bool // a command was rejected: EXEC replies EXECABORT
	// denyOOM is set when a queued command may add memory: over
	// maxmemory, EXEC is then refused (checkMemory).
	denyOOM bool
}

// queued is a command waiting for EXEC, with its own copy of the arguments.
type queued struct {
	cmd  *command
	args [][]byte
}

func (m *multiState) queue(cmd *command, args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	own := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		own[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	m.cmds = append(m.cmds, queued{cmd: cmd, args: own})
}

// watched is one WATCHed key: its database, and the engine's channel
// closed at the key's next change.
type watched struct {
	db      int
	key     string
	changed <-chan struct{}
	stop    func()
}

func cmdMulti(x *call) {
	if x.c.multi != nil {
		x.w.errorReply("ERR MULTI calls can not be nested")
		return
	}
	x.c.multi = &multiState{}
	x.w.simple("OK")
}

func cmdDiscard(x *call) {
	if x.c.multi == nil {
		x.w.errorReply("ERR DISCARD without MULTI")
		return
	}
	x.c.multi = nil
	x.c.unwatchAll()
	x.w.simple("OK")
}

// cmdExec runs the queued commands in one atomic section over the
// databases they may touch, unless a WATCHed key changed.
func cmdExec(x *call) {
	c := x.c
	m := c.multi
	if m == nil {
		x.w.errorReply("ERR EXEC without MULTI")
		return
	}
	c.multi = nil
	defer c.unwatchAll()
	if m.dirty {
		x.w.errorReply("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	dbs := []int{c.db}
	for _, w := range c.watches {
		dbs = append(dbs, w.db)
	}
	for _, q := range m.cmds {
		if x.s.needsAllDBs(q.cmd, q.args) {
			dbs = allDatabases
			break
		}
	}
	if len(dbs) > 1 && !slices.Equal(dbs, allDatabases) {
		slices.Sort(dbs)
		dbs = slices.Compact(dbs)
	}
	x.s.prepareFeed(m.cmds)
	x.s.section(c, dbs, func(t *txSet) {
		if c.watchesChanged(t) {
			x.w.nullArray()
			return
		}
		x.w.array(len(m.cmds))
		db := c.db
		for _, q := range m.cmds {
			sub := call{s: x.s, c: c, w: x.w, args: q.args, db: db, st: t.get(db), cmd: q.cmd, tx: true, txs: t}
			x.s.commands.Add(1)
			runQueued(&sub)
			x.s.called(&sub, false)
			db = c.db // SELECT inside the transaction
		}
	})
}

// watchesChanged reports whether a WATCHed key changed since WATCH,
// including one that has expired since (Redis 7 aborts then too). It runs
// inside the section holding the watched databases.
func (c *conn) watchesChanged(t *txSet) bool {
	for _, w := range c.watches {
		if st := t.get(w.db); st != nil {
			st.Exists(w.key) // an expired key is deleted now, closing changed
		}
		select {
		case <-w.changed:
			return true
		default:
		}
	}
	return false
}

func cmdWatch(x *call) {
	c := x.c
	if c.multi != nil {
		x.w.errorReply("ERR WATCH inside MULTI is not allowed")
		return
	}
	e := x.s.DB(c.db)
loop:
	for _, a := range x.args[1:] {
		for _, w := range c.watches {
			if w.db == c.db && w.key == string(a) {
				continue loop
			}
		}
		key := string(a)
		ch, stop := e.Watch(key)
		c.watches = append(c.watches, watched{db: c.db, key: key, changed: ch, stop: stop})
	}
	x.w.simple("OK")
}

func cmdUnwatch(x *call) {
	x.c.unwatchAll()
	x.w.simple("OK")
}

// unwatchAll releases every WATCH of the connection.
func (c *conn) unwatchAll() {
	for _, w := range c.watches {
		w.stop()
	}
	clear(c.watches)
	c.watches = c.watches[:0]
}
