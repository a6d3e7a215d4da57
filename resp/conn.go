package resp

// This file runs one client connection: read a request, run it, buffer the
// reply, and flush when no complete request is waiting (pipelining).

import (
	"net"
	"sync"
	"time"
)

// flushAt is the reply size past which the connection flushes even while
// more pipelined requests are waiting, so a long pipeline streams.
const flushAt = 64 << 10

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
	mu       sync.Mutex
	db       int
	name     string
	authed   bool
	libName  string
	libVer   string
	tracking bool
	quit     bool // close after the reply (QUIT, a dropped connection)

	multi   *multiState // non-nil between MULTI and EXEC/DISCARD
	watches []watched   // WATCHed keys

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
	c.w.errs = &s.errs
	c.w.buf = make([]byte, 0, 4096)
	c.rd.unauth = !c.authed
	c.rd.maxBulk = s.maxBulk()
	return c
}

// serve runs the connection on its own goroutine until the client leaves,
// sends malformed input or the server closes.
func (c *conn) serve() {
	defer c.nc.Close()
	defer c.unwatchAll()
	for c.process() {
		if !c.flush() {
			return
		}
		if err := c.rd.fill(); err != nil {
			return // errQueryBuffer included: Redis closes such a client without a reply
		}
	}
}

// process runs every complete request in the read buffer. It reports false
// when the connection must close (a protocol error, QUIT, a failed write),
// after writing the replies it has. In an event loop it stops early, with
// requests left, when the client does not read its replies (blocked).
func (c *conn) process() bool {
	for !c.blocked {
		args, err := c.rd.parse()
		if err != nil {
			if pe, ok := err.(protoError); ok {
				// Redis replies to a protocol error and then closes only
				// this connection; earlier pipelined replies go first.
				c.w.errorReply("ERR " + pe.Error())
			}
			c.flushAll()
			return false
		}
		if args == nil {
			return true
		}
		c.dispatch(args)
		if c.quit {
			c.flushAll()
			return false
		}
		if len(c.w.buf) >= flushAt && !c.flush() {
			return false
		}
	}
	return true
}

// flush writes the buffered replies; it reports false if the connection
// failed. On an event loop a write that would block keeps the rest and
// marks the connection blocked until the socket drains.
func (c *conn) flush() bool {
	if len(c.w.buf) == 0 {
		return true
	}
	if c.fd >= 0 {
		return c.flushFD()
	}
	_, err := c.nc.Write(c.w.buf)
	c.resetOut()
	return err == nil
}

// flushAll writes every buffered reply before the connection closes. On an
// event loop it writes what the socket takes and, if replies are left,
// marks the connection closing: the loop closes it once the client has
// read them (see end), serving its other connections meanwhile.
func (c *conn) flushAll() {
	if c.fd >= 0 {
		if c.flushFD() && c.blocked {
			c.closing = true
		}
		return
	}
	c.flush()
}

// resetOut empties the reply buffer, dropping a large one.
func (c *conn) resetOut() {
	if cap(c.w.buf) > shrinkAbove {
		c.w.buf = make([]byte, 0, 4096)
	} else {
		c.w.buf = c.w.buf[:0]
	}
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
