package resp

// This file is the keyspace, as Redis's db.c is: the store interface the
// commands run on, which both an engine and an engine transaction provide
// (so one command runs on its own, one engine call atomic by itself, or
// inside MULTI/EXEC and Lua scripts, a transaction holding the engine); the
// databases of a Server; and the atomic sections, with one frozen time per
// database, that transactions and scripts run in.

import (
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
)

// store is a database as the handlers see it: *engine.Engine outside
// transactions, the transaction of an engine Update inside them.
type store interface {
	Now() time.Time
	Get(key string) (string, bool)
	Set(key, value string) error
	SetWith(key, value string, args engine.SetArgs) (engine.SetResult, error)
	GetSet(key, value string) (string, bool, error)
	GetDel(key string) (string, bool)
	Del(keys ...string) int
	Exists(key string) bool
	Type(key string) string
	PExpireAtCond(key string, at time.Time, cond engine.ExpireCond) (bool, error)
	PTTL(key string) (time.Duration, bool)
	GetPTTL(key string) (string, time.Duration, bool)
	ExpireTime(key string) (at time.Time, ok bool)
	Persist(key string) bool
	IncrBy(key string, n int64) (int64, error)
	CompareAndDelete(key, value string) bool
	RangeAll(fn func(key string) bool)
	FlushAll()
}

// objects is a store inside an engine section (an engine.Tx), which also
// holds typed values and lets a command name its changes.
type objects interface {
	Object(key string) (engine.Object, bool)
	SetObject(key string, obj engine.Object, kind engine.Kind)
	Notify(key string, kind engine.Kind)
	Quiet(quiet bool) bool
	Held(key string) bool
	Hold(key string) bool
}

// quietly makes st's section name its changes itself (engine.Tx.Quiet)
// and returns the function that restores it; a store outside a section
// has nothing to quiet.
func quietly(st store) (restore func()) {
	if o, ok := st.(objects); ok {
		was := o.Quiet(true)
		return func() { o.Quiet(was) }
	}
	return func() {}
}

// notify reports a change of key named kind in st's section, if st is
// one.
func notify(st store, key string, kind engine.Kind) {
	if o, ok := st.(objects); ok {
		o.Notify(key, kind)
	}
}

// update runs fn inside an engine section over keys (every shard when keys
// is empty): atomic, with one frozen time. The section is admitted as its
// command was, before it ran (checkMemory): it never fails half-way for
// memory.
func update(e *engine.Engine, keys []string, fn func(st store)) {
	e.UpdateAdmitted(keys, func(tx *engine.Tx) { fn(tx) })
}

// updateBy is update for a section running a command of client c: its
// changes are tagged with c (engine.Tx.SetTag), so that pub/sub and
// client-side caching tell c's own changes from others'.
func updateBy(c *conn, e *engine.Engine, keys []string, fn func(st store)) {
	e.UpdateAdmitted(keys, func(tx *engine.Tx) {
		if c != nil {
			tx.SetTag(c)
		}
		fn(tx)
	})
}

func engineClock(e *engine.Engine) clock.Clock { return e.Clock() }

func flush(e *engine.Engine) { e.FlushAll() }

// newBudgetedDB returns a new database engine on the server's clock,
// counted against the server's memory budget (evict.go) and charged its
// overhead.
func (s *Server) newBudgetedDB() *engine.Engine {
	e := engine.New(engine.Options{Clock: s.clk, Budget: s.mem.budget})
	s.mem.budget.Charge(e.MemoryStats().Overhead)
	return e
}

// store returns database i as a store.
func (s *Server) store(i int) store { return s.DB(i) }

func scan(e *engine.Engine, cursor uint64, fn func(string)) uint64 { return e.ScanAll(cursor, fn) }

// txSet holds the transactions of the databases an atomic section locked.
type txSet struct {
	st [Databases]store
}

// get returns database i's transaction, nil if the section does not hold
// it.
func (t *txSet) get(i int) store {
	if t == nil || i < 0 || i >= Databases {
		return nil
	}
	return t.st[i]
}

// allDatabases lists every database index.
var allDatabases = func() []int {
	dbs := make([]int, Databases)
	for i := range dbs {
		dbs[i] = i
	}
	return dbs
}()

// section runs fn with the databases dbs (ascending, distinct) each locked
// whole, with one frozen time per database: fn is atomic against every
// other client and every direct engine call. Nesting in ascending order
// keeps two sections from deadlocking. The changes are tagged with c, the
// client whose command runs (nil: none).
func (s *Server) section(c *conn, dbs []int, fn func(t *txSet)) {
	var t txSet
	var lock func(i int)
	lock = func(i int) {
		if i == len(dbs) {
			fn(&t)
			return
		}
		updateBy(c, s.DB(dbs[i]), nil, func(st store) {
			t.st[dbs[i]] = st
			lock(i + 1)
		})
	}
	lock(0)
}

// Databases is the number of databases SELECT can choose from (Redis's
// default).
const Databases = 16

// DB returns database i (0 to 15), creating it on first use. It panics
// for an index out of range. It is safe for concurrent use; the engine
// stays valid until Close.
func (s *Server) DB(i int) *engine.Engine {
	if e := s.dbCache[i].Load(); e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dbs[i] == nil {
		e := s.newBudgetedDB()
		if s.closed {
			// Close has run: stop the reaper at once (the engine still
			// serves calls) rather than leak it.
			e.Close()
		}
		s.dbs[i] = e
		s.owned[i] = true
		if s.newDB != nil {
			s.newDB(i, e) // before any client can reach it
		}
		s.dbCache[i].Store(e)
	}
	return s.dbs[i]
}

// existingDB returns database i if it was created, or nil.
func (s *Server) existingDB(i int) *engine.Engine { return s.dbCache[i].Load() }

// Engine returns database 0.
func (s *Server) Engine() *engine.Engine { return s.dbs[0] }

var (
	_ store = (*engine.Engine)(nil)
	_ store = (*engine.Tx)(nil)
)
