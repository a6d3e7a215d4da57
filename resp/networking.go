package resp

// This file runs client connections, as Redis's networking.c: accepting
// them (Serve, Listen), then for each one reading a request, running it,
// buffering the reply and flushing when no complete request is waiting
// (pipelining). Sockets are served by the event loops of loop_linux.go
// where there are any, other connections by a goroutine each.

import (
	"errors"
	"net"
	"time"
)

// serve runs the connection on its own goroutine until the client leaves,
// sends malformed input or the server closes.
func (c *conn) serve() {
	defer c.nc.Close()
	defer c.release()
	for c.process() {
		if c.takeOutbox() != nil || !c.flush() {
			return
		}
		err := c.rd.fill()
		for isWakeUp(err) {
			// A push woke the read (outbox.go): clear the deadline first, so
			// a push after the take wakes the next read, then write it.
			_ = c.nc.SetReadDeadline(time.Time{})
			if c.takeOutbox() != nil || !c.flush() {
				return
			}
			if c.resumed() {
				err = nil // a blocking command was answered: run what waits behind it
				break
			}
			err = c.rd.fill()
		}
		if err != nil {
			return // errQueryBuffer included: Redis closes such a client without a reply
		}
	}
	if c.takeOutbox() == nil {
		c.flush() // pushes that came with the last replies
	}
}

// release ends the client's life in the server: its outbox refuses
// pushes, its WATCHes and close hooks are released. The owner calls it
// once, when the connection closes.
func (c *conn) release() {
	c.out.mu.Lock()
	c.out.closed, c.out.released = true, true
	c.out.buf = nil
	hooks := c.closeHooks
	c.closeHooks = nil
	c.out.mu.Unlock()
	c.unwatchAll()
	for _, f := range hooks {
		f()
	}
}

// process runs every complete request in the read buffer. It reports false
// when the connection must close (a protocol error, QUIT, a failed write),
// after writing the replies it has. In an event loop it stops early, with
// requests left, when the client does not read its replies (blocked).
func (c *conn) process() bool {
	for !c.blocked && !c.parked() {
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
			if c.s.trk.bcastPending.Load() {
				// Redis sends BCAST invalidations before it sleeps, after
				// the requests it read: the batch's keys go in one message.
				c.s.trackingBroadcast(c)
			}
			return true
		}
		// Output pushed before this command began goes before its reply
		// (an event loop may read the command before it takes a push
		// that came first).
		if c.takeOutbox() != nil {
			return false
		}
		c.dispatch(args)
		if c.quit {
			c.flushAll()
			return false
		}
		if c.overOutputLimit() {
			// As Redis after adding a reply: closed at once, its pending
			// output dropped.
			c.w.buf = c.w.buf[:0]
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
	c.noteUnflushed() // a client that does not read holds the write here
	_, err := c.nc.Write(c.w.buf)
	c.resetOut()
	c.out.unflushed.Store(0)
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

// ErrServerClosed is returned by Serve and Listen after Close.
var ErrServerClosed = errors.New("resp: server closed")

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
		if lp != nil {
			lp.adopt(c) // before the server lists c, where pushers find it
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

// flushAt is the reply size past which the connection flushes even while
// more pipelined requests are waiting, so a long pipeline streams.
const flushAt = 64 << 10
