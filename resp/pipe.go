package resp

// This file holds the in-memory connection behind Server.Dial: a pair of
// buffered byte queues with net.Conn deadlines, so clients reach the server
// without a socket.

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// memAddr is the address of an in-memory connection.
type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "memory" }

// queue is one direction of an in-memory connection: writes append (never
// block), reads wait for data, the writer's close, or a deadline.
type queue struct {
	mu     sync.Mutex
	buf    []byte        // guarded by mu
	closed bool          // guarded by mu: the writer closed
	ready  chan struct{} // buffered 1: data or close since the last wait
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *queue) write(p []byte) (int, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	q.buf = append(q.buf, p...)
	q.mu.Unlock()
	q.signal()
	return len(p), nil
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// read copies buffered data into p, waiting until there is some, the
// queue is closed (io.EOF), the reading side closes (local), or the
// deadline passes.
func (q *queue) read(p []byte, local <-chan struct{}, d *deadline) (int, error) {
	for {
		q.mu.Lock()
		if len(q.buf) > 0 {
			n := copy(p, q.buf)
			q.buf = q.buf[n:]
			if len(q.buf) == 0 {
				q.buf = q.buf[:0:0] // let a large buffer go
			}
			q.mu.Unlock()
			return n, nil
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		select {
		case <-local:
			return 0, net.ErrClosed
		default:
		}
		timer, expired := d.wait()
		select {
		case <-q.ready:
		case <-local:
			return 0, net.ErrClosed
		case <-timer:
			return 0, os.ErrDeadlineExceeded
		case <-expired:
			return 0, os.ErrDeadlineExceeded
		}
	}
}

// deadline is a settable read or write deadline.
type deadline struct {
	mu sync.Mutex
	t  time.Time // guarded by mu; zero: none
	// changed is closed and replaced whenever t changes, waking waiters to
	// re-read it.
	changed chan struct{}
}

// wait returns channels firing when the deadline passes or changes.
func (d *deadline) wait() (<-chan time.Time, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.changed == nil {
		d.changed = make(chan struct{})
	}
	if d.t.IsZero() {
		return nil, d.changed
	}
	dur := time.Until(d.t)
	if dur <= 0 {
		c := make(chan struct{})
		close(c)
		return nil, c
	}
	return time.After(dur), d.changed
}

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	d.t = t
	if d.changed != nil {
		close(d.changed)
	}
	d.changed = make(chan struct{})
	d.mu.Unlock()
}

// expired reports whether the deadline has passed.
func (d *deadline) expired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.t.IsZero() && !time.Now().Before(d.t)
}

// memConn is one end of an in-memory connection.
type memConn struct {
	in, out   *queue
	rd, wd    deadline
	closeOnce sync.Once
	done      chan struct{} // closed by Close
	peer      *memConn
}

var _ net.Conn = (*memConn)(nil)

func newMemPipe() (*memConn, *memConn) {
	a2b, b2a := newQueue(), newQueue()
	a := &memConn{in: b2a, out: a2b, done: make(chan struct{})}
	b := &memConn{in: a2b, out: b2a, done: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func (c *memConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := c.in.read(p, c.done, &c.rd)
	if err == os.ErrDeadlineExceeded {
		// The deadline channel may have fired because it changed: retry
		// unless it really passed.
		for !c.rd.expired() && err == os.ErrDeadlineExceeded {
			n, err = c.in.read(p, c.done, &c.rd)
		}
	}
	return n, err
}

func (c *memConn) Write(p []byte) (int, error) {
	select {
	case <-c.done:
		return 0, net.ErrClosed
	default:
	}
	if c.wd.expired() {
		return 0, os.ErrDeadlineExceeded
	}
	return c.out.write(p)
}

// Close closes both directions: the peer reads io.EOF once it has read
// what was written.
func (c *memConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.out.close()
		c.in.close()
	})
	return nil
}

// unread returns the bytes written to the peer that it has not read yet:
// an in-memory connection's writes never block, so this is where a client
// that does not read holds its output (counted for the output limits).
func (c *memConn) unread() int64 {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return int64(len(c.out.buf))
}

func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

func (c *memConn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error  { c.rd.set(t); return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

// Dial returns an in-memory connection to the server: no socket, no port.
// Its signature fits go-redis's Options.Dialer (network and addr are
// ignored), so tests can run a client against the server with nothing
// listening. It fails with ErrServerClosed after Close, and with ctx's
// error if ctx is done. It is safe for concurrent use.
func (s *Server) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	client, server := newMemPipe()
	if !s.serve(server) {
		return nil, ErrServerClosed
	}
	return client, nil
}
