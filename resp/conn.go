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
	c.w.proto = 2
	c.w.buf = make([]byte, 0, 4096)
	c.rd.unauth = !c.authed
	c.rd.maxBulk = s.maxBulk()
	return c
}

// serve runs the connection until the client leaves, sends malformed input
// or the server closes.
func (c *conn) serve() {
	defer c.nc.Close()
	defer c.unwatchAll()
	for {
		args, err := c.rd.parse()
		if err != nil {
			if pe, ok := err.(protoError); ok {
				// Redis replies to a protocol error and then closes only
				// this connection; earlier pipelined replies go first.
				c.w.errorReply("ERR " + pe.Error())
			}
			c.flush()
			return
		}
		if args == nil {
			if len(c.w.buf) > 0 && !c.flush() {
				return
			}
			if err := c.rd.fill(); err != nil {
				if err == errQueryBuffer {
					return // Redis closes such a client without a reply
				}
				return
			}
			continue
		}
		c.dispatch(args)
		if c.quit {
			c.flush()
			return
		}
		if len(c.w.buf) >= flushAt && !c.flush() {
			return
		}
	}
}

// flush writes the buffered replies; it reports false if the connection
// failed.
func (c *conn) flush() bool {
	if len(c.w.buf) == 0 {
		return true
	}
	_, err := c.nc.Write(c.w.buf)
	if cap(c.w.buf) > shrinkAbove {
		c.w.buf = make([]byte, 0, 4096)
	} else {
		c.w.buf = c.w.buf[:0]
	}
	return err == nil
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
