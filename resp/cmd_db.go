package resp

// This file holds the database commands: SELECT, DBSIZE, FLUSHDB and
// FLUSHALL.

func init() {
	register(
		&command{name: "select", arity: 2, flags: allDBs, fn: cmdSelect},
		&command{name: "dbsize", arity: 1, fn: cmdDBSize},
		&command{name: "flushdb", arity: -1, flags: write, fn: cmdFlushDB},
		&command{name: "flushall", arity: -1, flags: write | allDBs, fn: cmdFlushDB},
	)
}

// cmdSelect changes the database of the client, or only of the running
// script inside Lua (as Redis 7 does).
func cmdSelect(x *call) {
	n, ok := x.dbIndexArg(1)
	if !ok {
		return
	}
	if x.tx {
		st := x.txs.get(n)
		if st == nil {
			x.w.errorReply("ERR nxkv: this transaction does not hold that database")
			return
		}
		x.st = st
	} else {
		x.st = x.s.store(n)
	}
	x.db = n
	if x.lua != nil {
		x.lua.db, x.lua.st = n, x.st
	} else {
		x.c.setDB(n)
	}
	x.w.simple("OK")
}

func cmdDBSize(x *call) {
	if !x.tx {
		x.w.int(int64(x.s.DB(x.db).Len()))
		return
	}
	n := 0
	x.st.Range(func(string) bool { n++; return true })
	x.w.int(int64(n))
}

// cmdFlushDB is FLUSHDB and FLUSHALL [ASYNC|SYNC]; both flush at once.
func cmdFlushDB(x *call) {
	if len(x.args) > 2 || (len(x.args) == 2 && !equalFold(x.args[1], "async") && !equalFold(x.args[1], "sync")) {
		x.w.errorReply(errSyntax)
		return
	}
	if x.cmd.name == "flushdb" {
		x.flushDB(x.db)
	} else {
		for i := range Databases {
			x.flushDB(i)
		}
	}
	x.w.simple("OK")
}

// flushDB deletes every key of database i.
func (x *call) flushDB(i int) {
	if x.tx {
		st := x.txs.get(i)
		if st == nil {
			return
		}
		var keys []string
		st.Range(func(k string) bool { keys = append(keys, k); return true })
		st.Del(keys...)
		return
	}
	if e := x.s.existingDB(i); e != nil {
		flush(e)
	}
}
