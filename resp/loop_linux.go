package resp

// This file holds the event loops that serve socket connections on Linux:
// as Redis does, each loop waits on epoll for readable sockets, reads what
// arrived, runs every complete request and writes the replies, two system
// calls per request and none that finds nothing to read. A connection
// served by a goroutine makes a third (the read that parks it).

import (
	"errors"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// loop is one event loop: an epoll instance and the connections it serves.
// Its goroutine owns the connections; mu guards conns and closing, which
// Server.Close and the accepting goroutines touch.
type loop struct {
	s      *Server
	epfd   int
	wakefd int // eventfd: wakes the loop to stop, or to take pushed output

	mu      sync.Mutex
	conns   map[int]*conn // guarded by mu
	closing bool          // guarded by mu
	kicked  []*conn       // guarded by mu: connections with pushed output to take
	// fdsClosed, guarded by mu, is set when shutdown closes epfd and
	// wakefd: nothing may use their numbers after.
	fdsClosed bool
	// gen, guarded by mu, counts hand-offs: the goroutine that runs the
	// loop is the one started at the latest generation (handOff).
	gen int
	// held, guarded by mu, maps a connection whose long command (a busy
	// script) still runs on a goroutine the loop was handed off from to
	// that goroutine's generation: the loop's goroutine leaves it alone.
	held map[*conn]int

	wakeups atomic.Int64 // epoll_wait returns, for tests
}

// startLoops starts one event loop per two cores (at least one): on a
// 2-core machine one loop used clearly less CPU per request than two under
// redis-benchmark, since each epoll_wait then finds more sockets ready, and
// it leaves cores to the clients and the engine. It
// returns nil if epoll is not available (the server then uses a goroutine
// per connection).
func (s *Server) startLoops() []*loop {
	n := max(1, runtime.GOMAXPROCS(0)/2)
	var loops []*loop
	for range n {
		lp, err := newLoop(s)
		if err != nil {
			for _, l := range loops {
				l.stop()
			}
			return nil
		}
		loops = append(loops, lp)
	}
	return loops
}

func newLoop(s *Server) (*loop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	r, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if e != 0 {
		syscall.Close(epfd)
		return nil, e
	}
	wakefd := int(r)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(wakefd)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(wakefd)
		return nil, err
	}
	lp := &loop{s: s, epfd: epfd, wakefd: wakefd, conns: map[int]*conn{}}
	s.wg.Add(1)
	go lp.run()
	return lp, nil
}

// stop makes the loop close its connections and exit.
func (lp *loop) stop() {
	lp.mu.Lock()
	lp.closing = true
	lp.mu.Unlock()
	lp.signal()
}

// kick makes the loop take c's pushed output (outbox.go); any goroutine
// may call it. A connection is queued once until the loop takes it.
func (lp *loop) kick(c *conn) {
	if c.kicked.Swap(true) {
		return
	}
	lp.mu.Lock()
	lp.kicked = append(lp.kicked, c)
	lp.mu.Unlock()
	lp.signal()
}

// signal wakes the loop's epoll_wait through its eventfd, unless the loop
// has closed it (a later file may have its number).
func (lp *loop) signal() {
	var one = [8]byte{1}
	lp.mu.Lock()
	if !lp.fdsClosed {
		_, _ = syscall.Write(lp.wakefd, one[:])
	}
	lp.mu.Unlock()
}

// detach moves a socket connection off Go's poller: c takes a duplicate of
// the socket (non-blocking, like the original) and nc is closed. It returns
// false, leaving nc untouched, if that fails.
func (c *conn) detach(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(f uintptr) {
		fd, dupErr = syscall.Dup(int(f))
	}); err != nil || dupErr != nil {
		return false
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return false
	}
	c.nc = fdConn{fd: fd, laddr: nc.LocalAddr(), raddr: nc.RemoteAddr()}
	c.fd = fd
	nc.Close() // the duplicate keeps the socket open
	return true
}

// closeDetached closes the socket detach made, for a connection that
// will not be served (the server closed meanwhile).
func (c *conn) closeDetached() {
	if c.fd >= 0 {
		syscall.Close(c.fd)
	}
}

// adopt makes lp c's owner: pushes to c wake lp. It runs before c is
// listed anywhere a pusher could find it.
func (lp *loop) adopt(c *conn) {
	c.lp = lp
	c.kick = func() { lp.kick(c) }
	c.handOff = func() { lp.handOff(c) }
}

// add starts serving a detached connection on the loop (adopted by it).
func (lp *loop) add(c *conn) {
	lp.mu.Lock()
	if lp.closing {
		lp.mu.Unlock()
		c.closeFD()
		return
	}
	lp.conns[c.fd] = c
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
	err := syscall.EpollCtl(lp.epfd, syscall.EPOLL_CTL_ADD, c.fd, &ev)
	lp.mu.Unlock()
	if err != nil {
		c.closeFD()
	}
}

// handOff gives the loop to a new goroutine while the current one runs
// c's long command: a script past busy-reply-threshold, during which Redis
// serves other clients (answering BUSY) and so must the loop. c stays with
// the old goroutine, out of epoll, until its command returns; that
// goroutine then gives c back and exits (retire). It is called while c's
// command runs on the loop's goroutine.
func (lp *loop) handOff(c *conn) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.closing || c.fd < 0 {
		return
	}
	if _, ok := lp.held[c]; ok {
		return
	}
	if lp.held == nil {
		lp.held = map[*conn]int{}
	}
	lp.held[c] = lp.gen
	lp.gen++
	_ = syscall.EpollCtl(lp.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	lp.s.wg.Add(1)
	go lp.run()
}

// retire ends the goroutine of generation gen, which the loop was handed
// off from: it gives back the connections it kept (to epoll, with their
// pushed output queued) or closes them if the loop is closing, and queues
// again the kicked connections of its batch it did not reach (the ready
// ones epoll reports again to the new goroutine).
func (lp *loop) retire(gen int, kicked []*conn) {
	var closing []*conn
	lp.mu.Lock()
	for c, g := range lp.held {
		if g != gen {
			continue
		}
		delete(lp.held, c)
		switch {
		case c.fd < 0:
		case lp.closing:
			closing = append(closing, c)
		default:
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
			if c.writeWatch {
				ev.Events = syscall.EPOLLOUT
			}
			_ = syscall.EpollCtl(lp.epfd, syscall.EPOLL_CTL_ADD, c.fd, &ev)
		}
	}
	for _, c := range kicked {
		if !c.kicked.Swap(true) {
			lp.kicked = append(lp.kicked, c)
		}
	}
	lp.mu.Unlock()
	for _, c := range closing {
		c.closeFD()
	}
	lp.signal() // the new goroutine takes what was queued for the kept connections
}

// current returns the loop's generation.
func (lp *loop) current() int {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.gen
}

// run is the loop's goroutine (one at a time, see handOff).
func (lp *loop) run() {
	defer lp.s.wg.Done()
	gen := lp.current()
	events := make([]syscall.EpollEvent, 128)
	var ready []*conn
	for {
		n, err := syscall.EpollWait(lp.epfd, events, -1)
		lp.wakeups.Add(1)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			lp.shutdown()
			return
		}
		ready = ready[:0]
		woken := false
		lp.mu.Lock()
		closing := lp.closing
		for _, ev := range events[:n] {
			if int(ev.Fd) == lp.wakefd {
				woken = true
			} else if c := lp.conns[int(ev.Fd)]; c != nil {
				if _, held := lp.held[c]; !held {
					c.events = ev.Events
					ready = append(ready, c)
				}
			}
		}
		kicked := lp.kicked
		lp.kicked = nil
		for _, c := range kicked {
			if _, held := lp.held[c]; held {
				lp.kicked = append(lp.kicked, c) // for after its command (retire)
			}
		}
		if len(lp.kicked) > 0 {
			kicked = slices.DeleteFunc(slices.Clone(kicked), func(c *conn) bool { _, held := lp.held[c]; return held })
		}
		lp.mu.Unlock()
		if closing {
			lp.shutdown()
			return
		}
		if woken {
			var buf [8]byte
			_, _ = syscall.Read(lp.wakefd, buf[:]) // reset the eventfd's count
		}
		for _, c := range ready {
			c.onEvents()
			if lp.current() != gen {
				lp.retire(gen, kicked)
				return
			}
		}
		for i, c := range kicked {
			c.kicked.Store(false)
			c.onKick()
			if lp.current() != gen {
				lp.retire(gen, kicked[i+1:])
				return
			}
		}
	}
}

// onKick writes the output pushed to c (outbox.go), or closes c when it
// passed its output limits. A connection closed meanwhile is left alone.
func (c *conn) onKick() {
	if c.fd < 0 {
		return
	}
	if c.takeOutbox() != nil {
		c.closeFD()
		return
	}
	if c.blocked {
		return // behind replies the client has not read: EPOLLOUT writes it all
	}
	if c.resumed() {
		c.runPending() // a blocking command was answered: run what waits behind it
		return
	}
	if !c.flushFD() {
		c.closeFD()
		return
	}
	if c.closing && !c.blocked {
		c.closeFD()
	}
}

// shutdown closes every connection of the loop and the loop's descriptors;
// a goroutine the loop was handed off from closes the connection it kept
// (retire).
func (lp *loop) shutdown() {
	lp.mu.Lock()
	conns := lp.conns
	lp.conns = map[int]*conn{}
	lp.closing = true
	for fd, c := range conns {
		if _, held := lp.held[c]; held {
			delete(conns, fd)
		}
	}
	lp.mu.Unlock()
	for _, c := range conns {
		c.closeFD()
	}
	lp.mu.Lock()
	lp.fdsClosed = true
	lp.kicked = nil
	syscall.Close(lp.epfd)
	syscall.Close(lp.wakefd)
	lp.mu.Unlock()
}

// onEvents handles the socket's readiness: drain pending replies when
// writable, then read and run requests when readable.
func (c *conn) onEvents() {
	if c.events&syscall.EPOLLOUT != 0 && c.blocked {
		if !c.flushFD() {
			c.closeFD()
			return
		}
		if c.blocked {
			return
		}
		if c.closing {
			c.closeFD() // the last replies before a close are written
			return
		}
		c.runPending() // drained: run the requests that waited
		return
	}
	if c.events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR|syscall.EPOLLRDHUP) == 0 || c.blocked {
		return
	}
	if err := c.rd.room(); err != nil {
		c.closeFD() // past the query buffer limit: closed without a reply
		return
	}
	n, err := syscall.Read(c.fd, c.rd.buf[c.rd.w:])
	if n <= 0 {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
			return
		}
		c.closeFD() // EOF or error
		return
	}
	c.rd.w += n
	c.runPending()
}

// afterProcess, when set (by tests), runs between process and the flush
// after it: the moment a client may read the replies that blocked.
var afterProcess func(*conn)

// runPending runs the complete requests in the read buffer and writes
// their replies, until none is left or the socket takes no more; then the
// loop waits for requests again, or for the socket to drain. process stops
// at a reply the socket does not take; if the client reads it before the
// flush that follows, that flush drains, and the requests behind it must
// run now: the client has sent them already, so no readiness would
// announce them again.
func (c *conn) runPending() {
	for {
		if !c.process() {
			c.end()
			return
		}
		stopped := c.blocked // requests may be left behind the blocked reply
		if afterProcess != nil {
			afterProcess(c)
		}
		if c.takeOutbox() != nil || !c.flush() {
			c.closeFD()
			return
		}
		if c.blocked {
			return // the loop waits for the socket to drain
		}
		if !stopped {
			break
		}
	}
	if c.writeWatch {
		c.watchRead()
	}
}

// end closes a connection that process said must close, unless its last
// replies still wait for the client to read them (closing): then the loop
// closes it once they are written, and reads nothing more from it.
func (c *conn) end() {
	if c.closing && c.blocked {
		return
	}
	c.closeFD()
}

// flushFD writes buffered replies without blocking; what the socket does
// not take stays buffered, the connection is marked blocked and the loop
// waits for the socket to be writable. It reports false on a write error.
func (c *conn) flushFD() bool {
	for len(c.w.buf) > 0 {
		n, err := syscall.Write(c.fd, c.w.buf)
		if n > 0 {
			c.w.buf = c.w.buf[:copy(c.w.buf, c.w.buf[n:])]
			continue
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			if !c.blocked {
				c.blocked = true
				c.watchWrite()
			}
			c.noteUnflushed()
			return true
		}
		return false
	}
	c.resetOut()
	c.out.unflushed.Store(0)
	if c.blocked {
		c.blocked = false
	}
	return true
}

// watchWrite waits for the socket to take more replies. It leaves out
// EPOLLRDHUP: a client that shut down its sending side while not reading
// would report it at every epoll_wait (level-triggered) and the loop, which
// reads nothing while replies wait, would spin. A reset or closed socket
// still reports EPOLLERR or EPOLLHUP with EPOLLOUT, and the failed write
// closes the connection.
func (c *conn) watchWrite() {
	c.writeWatch = true
	ev := syscall.EpollEvent{Events: syscall.EPOLLOUT, Fd: int32(c.fd)}
	_ = syscall.EpollCtl(c.lp.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev)
}

func (c *conn) watchRead() {
	c.writeWatch = false
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
	_ = syscall.EpollCtl(c.lp.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev)
}

// closeFD closes an event-loop connection: it leaves the loop and the
// server, its watches are released and its socket closed.
func (c *conn) closeFD() {
	if c.fd < 0 {
		return
	}
	lp := c.lp
	lp.mu.Lock()
	if lp.conns[c.fd] == c {
		delete(lp.conns, c.fd)
	}
	lp.mu.Unlock()
	_ = syscall.EpollCtl(lp.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	syscall.Close(c.fd)
	c.fd = -2 // closed: never -1, which means a goroutine connection
	c.release()
	c.s.forget(c)
}

// fdConn is the net.Conn of an event-loop connection: its addresses for
// CLIENT LIST; reads and writes go through the loop.
type fdConn struct {
	fd           int
	laddr, raddr net.Addr
}

func (f fdConn) Read([]byte) (int, error)         { return 0, errors.ErrUnsupported }
func (f fdConn) Write([]byte) (int, error)        { return 0, errors.ErrUnsupported }
func (f fdConn) Close() error                     { return nil } // the loop closes the socket
func (f fdConn) LocalAddr() net.Addr              { return f.laddr }
func (f fdConn) RemoteAddr() net.Addr             { return f.raddr }
func (f fdConn) SetDeadline(time.Time) error      { return nil }
func (f fdConn) SetReadDeadline(time.Time) error  { return nil }
func (f fdConn) SetWriteDeadline(time.Time) error { return nil }
