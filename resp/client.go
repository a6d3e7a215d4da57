package resp

// This file holds the client, as Redis's struct client: the state of one
// connection, which the networking code, the dispatcher and the commands
// read and change.

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one client connection, served by one goroutine; its fields are
// owned by that goroutine, except nc, which Close may close concurrently.
type conn struct {
	s       *Server
	nc      net.Conn
	id      int64
	created time.Time
	rd      *reader
	w       writer

	// mu guards the writes of db and name by the connection's goroutine
	// and their reads by others (CLIENT LIST); the goroutine reads them
	// without it.
	mu      sync.Mutex
	db      int
	name    string
	authed  bool
	libName string
	libVer  string
	quit    bool // close after the reply (QUIT, a dropped connection)
	// oom is set while the server was over maxmemory as the client's
	// running command began (checkMemory): the scripts it runs may not
	// start writing.
	oom bool

	multi   *multiState // non-nil between MULTI and EXEC/DISCARD
	watches []watched   // WATCHed keys

	// out is the output other goroutines push to the client (outbox.go);
	// subscribed, set while the client has pub/sub subscriptions, puts it
	// in the pub/sub class of the output limits.
	out        outbox
	subscribed atomic.Bool
	kicked     atomic.Bool // queued on its event loop to take its outbox
	kick       func()      // set before serving by an event loop: queues the client to take its outbox
	// handOff, set before serving by an event loop, hands the loop's
	// other connections to a new goroutine while this client's command
	// runs long (a busy script); nil for a goroutine's connection.
	handOff func()
	// closeHooks, guarded by out.mu, run once when the connection ends,
	// on its owner's goroutine, after its outbox is closed (so no push is
	// taken any more): subsystems that keep the client in a registry
	// (pub/sub, tracking, blocked clients) remove it there.
	closeHooks []func()

	// Pub/sub, client-side caching and MONITOR (pubsub.go, tracking.go,
	// monitor.go). resp mirrors w.proto for the goroutines that encode
	// output for the client; subs is guarded by the server's pub/sub lock
	// and trk by its tracking lock (the client's own goroutine reads trk
	// without it); redirTargets counts the tracking clients redirecting
	// to this one. The rest is the client's own: caching (CLIENT CACHING,
	// for the next command), its own invalidations held until its reply
	// (pendingInv), the keys created by its command so far whose
	// invalidation comes with the write that follows (pendingNew), whether
	// one of its scripts runs, what its own command pushes to it while a
	// repliesFirst command runs (held, until its reply is written), and
	// whether it is a unix socket's (for MONITOR's address).
	resp         atomic.Int32
	subs         *clientSubs
	trk          *clientTracking
	trkHooked    bool
	redirTargets atomic.Int32
	monitoring   atomic.Bool
	caching      bool
	inScript     bool // a script of the client is running
	pendingInv   []pendingInv
	pendingNew   []string
	holding      bool
	held         []byte
	// CLIENT REPLY: replyMode silences replies (OFF, or SKIP for one
	// command), skipNext asks SKIP for the next command, and muted is set
	// while a silenced command runs (its pushes are held, its replies
	// dropped).
	replyMode replyMode
	skipNext  bool
	muted     bool
	unix      bool

	// Event-loop connections (Linux sockets) are driven by a loop instead
	// of a goroutine: fd is the socket (-1 otherwise), blocked is set while
	// replies wait for the client to read, and closing once the
	// connection is to close when they have all been written. writeWatch
	// is set while the loop waits for the socket to be writable rather
	// than readable.
	fd         int
	lp         *loop
	blocked    bool
	closing    bool
	writeWatch bool
	events     uint32 // the readiness the loop saw

	x call // reused for every command

	// waiting is the blocking command the client waits on (blocked.go):
	// it reads no request until it is answered. ready are the keys its
	// last command made ready for waiters, served once it has finished.
	// blockHook is set once its close hook for waiters is registered.
	// Owned by the client's goroutine.
	waiting   *waiter
	ready     []blockKey
	blockHook bool
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		s:       s,
		nc:      nc,
		id:      s.nextID.Add(1),
		created: time.Now(),
		rd:      newReader(nc),
		authed:  s.password() == "",
	}
	c.fd = -1
	c.w.proto = 2
	c.resp.Store(2)
	_, c.unix = nc.(*net.UnixConn)
	c.w.errs = &s.errs
	c.w.buf = make([]byte, 0, 4096)
	c.rd.unauth = !c.authed
	c.rd.maxBulk = s.maxBulk()
	return c
}

// atClose registers f to run when the connection ends (see closeHooks);
// on a connection already released, f runs at once. It is safe for
// concurrent use.
func (c *conn) atClose(f func()) {
	c.out.mu.Lock()
	if c.out.released {
		c.out.mu.Unlock()
		f()
		return
	}
	c.closeHooks = append(c.closeHooks, f)
	c.out.mu.Unlock()
}

// setAuthed marks the client authenticated and lifts the pre-AUTH request
// limits.
func (c *conn) setAuthed() {
	c.authed = true
	c.rd.unauth = false
}

// setDB selects database i for the connection.
func (c *conn) setDB(i int) {
	c.mu.Lock()
	c.db = i
	c.mu.Unlock()
}

// setName sets the connection's name ("" for none).
func (c *conn) setName(n string) {
	c.mu.Lock()
	c.name = n
	c.mu.Unlock()
}

// replyMode is CLIENT REPLY's setting of a client.
type replyMode uint8

const (
	replyOn replyMode = iota
	replyOff
	replySkip // the next command only
)
