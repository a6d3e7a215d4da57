package resp

// This file holds the Server state that commands and connections read:
// the version it reports, its password and limits, and its listeners and
// connections.

import (
	"log"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
)

// RedisVersion is the Redis version the server reports (INFO, HELLO): the
// release whose replies it reproduces byte for byte, checked by the
// differential test. It also accepts the newer commands and options its
// documentation lists (SET IFEQ/IFNE, DELEX, CLIENT SETINFO).
const RedisVersion = "7.0.15"

// password returns the current requirepass ("" for none).
func (s *Server) password() string { return *s.pass.Load() }

func (s *Server) setPassword(p string) { s.pass.Store(&p) }

// maxBulk returns the largest bulk string accepted.
func (s *Server) maxBulk() int {
	if s.opts.MaxBulkLen > 0 {
		return s.opts.MaxBulkLen
	}
	return maxBulk
}

// port returns the TCP port of the first TCP listener, 0 if none.
func (s *Server) port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			return a.Port
		}
	}
	return 0
}

// bindAddrs returns the TCP listen addresses, space-separated.
func (s *Server) bindAddrs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var addrs []string
	for l := range s.listeners {
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			addrs = append(addrs, a.IP.String())
		}
	}
	sort.Strings(addrs)
	return strings.Join(addrs, " ")
}

// unixSocket returns the path of a unix socket listener, "" if none.
func (s *Server) unixSocket() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		if a, ok := l.Addr().(*net.UnixAddr); ok {
			return a.Name
		}
	}
	return ""
}

// connections returns the open connections.
func (s *Server) connections() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].id < cs[j].id })
	return cs
}

// clients returns the number of open connections.
func (s *Server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// The encoding limits of Server.limits, in the order of limitNames.
const (
	limitHashEntries = iota
	limitHashValue
	limitSetIntEntries
	limitZsetEntries
	limitZsetValue
	limitListSize
	limitListDepth
	numLimits
)

// limitNames are the limits' CONFIG names, each with its older alias
// (ziplist for listpack) and Redis's default.
var limitNames = [numLimits]struct {
	name, alias string
	def         int64
}{
	{"hash-max-listpack-entries", "hash-max-ziplist-entries", 128},
	{"hash-max-listpack-value", "hash-max-ziplist-value", 64},
	{"set-max-intset-entries", "", 512},
	{"zset-max-listpack-entries", "zset-max-ziplist-entries", 128},
	{"zset-max-listpack-value", "zset-max-ziplist-value", 64},
	{"list-max-listpack-size", "list-max-ziplist-size", -2},
	{"list-compress-depth", "", 0},
}

// limit returns encoding limit i.
func (s *Server) limit(i int) int64 { return s.encLimits[i].Load() }

// Options configures a Server. The zero value selects every default.
type Options struct {
	// Engine is database 0. Nil: the server creates an engine with Clock
	// and closes it in Close. A caller's engine is never closed by the
	// server, so code calling it directly (a lockapi client over the
	// in-process backend, a test helper) and RESP clients share its keys,
	// locks and waiters. Databases 1 to 15 are created on first use with
	// the same clock and closed by Close.
	Engine *engine.Engine
	// Clock is the time source of the engines the server creates; nil
	// selects the real clock. When Engine is set, its clock is used instead.
	Clock clock.Clock
	// Password, if not empty, makes clients authenticate (AUTH or HELLO
	// AUTH) before any other command, as Redis's requirepass.
	Password string
	// ErrorLog receives the stack of a command that panicked (a defect of
	// nxkv: the panic is contained, the client's connection closed, and
	// every other client served as before); nil logs with package log's
	// standard logger.
	ErrorLog *log.Logger
	// MaxBulkLen bounds a bulk string in a request and a string built by
	// SETRANGE or APPEND (Redis's proto-max-bulk-len); 0 selects Redis's
	// default, 512 MB.
	MaxBulkLen int
	// Budget is the memory bound every database shares, as Redis's
	// maxmemory, maxmemory-policy and maxmemory-samples (which CONFIG SET
	// changes in it); nil selects Engine's budget if it has one, else a new
	// budget with no bound. The server charges it each database's overhead
	// (see "Memory" in the package doc). If Engine is given with a budget,
	// Budget must be nil or the same; an Engine without one is not counted
	// and never evicted (create it with engine.Options.Budget to bound it
	// with the other databases).
	Budget *engine.Budget
}

// Server serves the Redis protocol (RESP2 and RESP3) over an engine. Its
// methods are safe for concurrent use. Create it with New, start it with
// Serve, Listen or Start, and release it with Close, which returns once
// every connection has ended.
type Server struct {
	opts  Options
	clk   clock.Clock // the clock of every database
	start time.Time   // for INFO's uptime

	mu           sync.Mutex
	dbs          [Databases]*engine.Engine // guarded by mu; [0] set by New
	owned        [Databases]bool           // guarded by mu: closed by Close
	listeners    map[net.Listener]struct{} // guarded by mu
	conns        map[*conn]struct{}        // guarded by mu
	closed       bool                      // guarded by mu
	addr         string                    // guarded by mu: the first TCP address
	setErr       func()                    // guarded by mu: removes SetError's fault
	loops        []*loop                   // guarded by mu: the event loops, started on first use
	loopsStarted bool                      // guarded by mu
	nextLoop     int                       // guarded by mu
	wg           sync.WaitGroup            // every goroutine the server started

	dbCache [Databases]atomic.Pointer[engine.Engine] // lock-free reads of dbs

	runID    string
	pass     atomic.Pointer[string] // requirepass; CONFIG SET may change it
	nextID   atomic.Int64           // client ids
	commands atomic.Int64           // commands processed, for INFO
	conns0   atomic.Int64           // connections accepted, for INFO

	// encLimits are the sizes past which a typed value takes its large
	// encoding, as Redis's hash-max-listpack-entries and the like (CONFIG
	// SET changes them).
	encLimits [numLimits]atomic.Int64

	blocking blockRegistry // the clients blocked by blocking pops (blocked.go)

	scripts  scriptCache
	faults   faults
	cmdStats []cmdStats // by command id, for INFO commandstats
	panics   panicLog
	errs     errorStats

	mem memory // maxmemory (evict.go)

	// ps, trk, mon and notify are pub/sub, client-side caching, MONITOR
	// and keyspace notifications (pubsub.go, tracking.go, monitor.go,
	// notify.go); newDB, set by New, runs when a database is created.
	ps     pubsubState
	trk    trackingState
	mon    monitorState
	notify notifyState
	newDB  func(i int, e *engine.Engine)

	limits        atomic.Pointer[outputLimits] // client-output-buffer-limit; CONFIG SET may change it
	clientsKilled atomic.Int64                 // clients closed at their output limits

	// plantedPush, set only by the package's tests (export_test.go),
	// plants a bug in one push feature (pubsub, tracking, keyspace or
	// monitor); the differential test shows it is caught.
	plantedPush string
	// unlockedScripts, set only by the package's tests (export_test.go),
	// plants a bug: scripts run without their atomic section, each
	// redis.call on its own. The linearizability test shows it is caught.
	unlockedScripts bool
	// lifoWaiters, set only by the package's tests, plants a bug: a ready
	// key serves its waiters newest first. The blocking pops' differential
	// and linearizability tests show it is caught.
	lifoWaiters bool
	// busy holds the scripts running past busy-reply-threshold.
	busy busyScripts

	// scriptLimit, set only by the package's tests, replaces a script's
	// time limit (five seconds) when it is not 0, so a test of the limit
	// need not wait that long.
	scriptLimit time.Duration
	// scriptMemory, set only by the package's tests, replaces the heap
	// growth past which a script is stopped (1 GiB) when not 0.
	scriptMemory uint64
}
