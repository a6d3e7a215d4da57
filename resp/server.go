package resp

// This file holds the Server: its options, listeners, connections and
// lifetime.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/resp/internal/lua"
)

// Databases is the number of databases SELECT can choose from (Redis's
// default).
const Databases = 16

// ErrServerClosed is returned by Serve and Listen after Close.
var ErrServerClosed = errors.New("resp: server closed")

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

	scripts  scriptCache
	faults   faults
	cmdStats []cmdStats // by command id, for INFO commandstats
	panics   panicLog
	errs     errorStats

	// unlockedScripts, set only by the package's tests (export_test.go),
	// plants a bug: scripts run without their atomic section, each
	// redis.call on its own. The linearizability test shows it is caught.
	unlockedScripts bool
	// scriptLimit, set only by the package's tests, replaces a script's
	// time limit (five seconds) when it is not 0, so a test of the limit
	// need not wait that long.
	scriptLimit time.Duration
	// scriptMemory, set only by the package's tests, replaces the heap
	// growth past which a script is stopped (1 GiB) when not 0.
	scriptMemory uint64
}

// New returns a server over opts.Engine (or a new engine). It does not
// listen yet: call Serve, Listen or Start, or use Dial.
func New(opts Options) *Server {
	s := &Server{
		opts:      opts,
		start:     time.Now(),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
	}
	if opts.Engine != nil {
		s.clk = engineClock(opts.Engine)
		s.dbs[0] = opts.Engine
	} else {
		s.clk = opts.Clock
		s.dbs[0] = newEngine(s.clk)
		s.owned[0] = true
	}
	s.dbCache[0].Store(s.dbs[0])
	s.pass.Store(&opts.Password)
	var id [20]byte
	_, _ = rand.Read(id[:])
	s.runID = hex.EncodeToString(id[:])
	s.scripts.init(lua.Options{MaxBulk: s.maxBulk(), Version: RedisVersion})
	s.cmdStats = make([]cmdStats, len(allCommands))
	return s
}

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
		e := newEngine(s.clk)
		if s.closed {
			// Close has run: stop the reaper at once (the engine still
			// serves calls) rather than leak it.
			e.Close()
		}
		s.dbs[i] = e
		s.owned[i] = true
		s.dbCache[i].Store(e)
	}
	return s.dbs[i]
}

// existingDB returns database i if it was created, or nil.
func (s *Server) existingDB(i int) *engine.Engine { return s.dbCache[i].Load() }

// Engine returns database 0.
func (s *Server) Engine() *engine.Engine { return s.dbs[0] }

// Serve accepts connections on l and serves them (on the event loops for
// TCP and unix sockets on Linux, on a goroutine each otherwise) until Close
// or an accept error; it closes l before returning. It returns
// ErrServerClosed after Close. It is safe for concurrent use.
func (s *Server) Serve(l net.Listener) error {
	if !s.track(l) {
		return ErrServerClosed
	}
	return s.accept(l)
}

// track registers l so that Close closes it; it reports false (closing l)
// after Close.
func (s *Server) track(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		l.Close()
		return false
	}
	s.listeners[l] = struct{}{}
	if _, ok := l.Addr().(*net.TCPAddr); ok && s.addr == "" {
		s.addr = l.Addr().String()
	}
	s.wg.Add(1)
	return true
}

// accept serves the tracked listener l until it fails or Close.
func (s *Server) accept(l net.Listener) error {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: back off and go on,
				// as net/http does, rather than stop serving everyone.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		if !s.serve(nc) {
			return ErrServerClosed
		}
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// Listen listens on network ("tcp", "tcp4", "tcp6" or "unix") and address
// and serves in the background until Close. It returns the address
// listened on (with the port chosen for ":0"). A unix socket file is
// removed when the server closes.
func (s *Server) Listen(network, address string) (net.Addr, error) {
	if s.isClosed() {
		return nil, ErrServerClosed
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	if ul, ok := l.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(true)
	}
	if !s.track(l) {
		return nil, ErrServerClosed
	}
	go func() { _ = s.accept(l) }()
	return l.Addr(), nil
}

// Start listens on a free loopback TCP port (127.0.0.1:0) and serves in
// the background until Close; Addr returns the address.
func (s *Server) Start() error {
	_, err := s.Listen("tcp", "127.0.0.1:0")
	return err
}

// Addr returns the address of the first TCP listener ("127.0.0.1:port"),
// or "" if the server has none.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// serve starts serving nc: on an event loop for a socket on Linux, on a
// goroutine of its own otherwise. It reports false (closing nc) if the
// server is closed.
func (s *Server) serve(nc net.Conn) bool {
	c := newConn(s, nc)
	var lp *loop
	if isSocket(nc) {
		s.mu.Lock()
		lp = s.loopLocked()
		s.mu.Unlock()
		if lp != nil && !c.detach(nc) {
			lp = nil // no duplicate of the socket: serve it on a goroutine
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.closeDetached()
		nc.Close()
		return false
	}
	s.conns[c] = struct{}{}
	if lp == nil {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	s.conns0.Add(1)
	if lp != nil {
		lp.add(c)
		return true
	}
	go func() {
		defer s.wg.Done()
		c.serve()
		s.forget(c)
	}()
	return true
}

// isSocket reports whether nc is a TCP or unix socket, which event loops
// can serve.
func isSocket(nc net.Conn) bool {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

// loopLocked returns the event loop for the next socket connection,
// starting the loops on first use, or nil without event loops.
func (s *Server) loopLocked() *loop {
	if !s.loopsStarted {
		s.loopsStarted = true
		if !s.closed {
			s.loops = s.startLoops()
		}
	}
	if len(s.loops) == 0 {
		return nil
	}
	s.nextLoop++
	return s.loops[s.nextLoop%len(s.loops)]
}

// forget removes a closed connection.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the listeners, closes every connection, waits until every
// goroutine the server started has exited, and then closes the engines the
// server created (never Options.Engine). It is safe to call more than once
// and returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.nc.Close() // goroutine connections; the loops close their own
	}
	for _, lp := range s.loops {
		lp.stop()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.scripts.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.dbs {
		if e != nil && s.owned[i] {
			e.Close()
		}
	}
	return nil
}

// clients returns the number of open connections.
func (s *Server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
