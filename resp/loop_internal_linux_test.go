package resp

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLoopRunsRequestsBehindADrainedReply: a pipelined GET whose reply the
// socket does not take stops the requests behind it; if the client reads
// that reply before the loop's flush that follows, the flush drains and
// the loop used to go back to waiting for readable input. The client had
// sent everything already, so the requests behind stayed unserved and the
// client waited forever. Here the client reads at exactly that moment
// (the afterProcess hook), on a socket pair driven by hand.
func TestLoopRunsRequestsBehindADrainedReply(t *testing.T) {
	s := NewT(t, Options{})
	const size = flushAt + 16<<10 // a reply that is flushed at once
	s.Set("big", strings.Repeat("x", size))

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	server, client := fds[0], fds[1]
	defer syscall.Close(client)
	if err := syscall.SetsockoptInt(server, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(epfd)
	lp := &loop{s: s, epfd: epfd, wakefd: -1, conns: map[int]*conn{}}
	c := newConn(s, fdConn{fd: server})
	c.fd = server
	lp.adopt(c)
	lp.add(c)
	defer c.closeFD()

	var got bytes.Buffer
	drain := func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := syscall.Read(client, buf)
			if n <= 0 {
				if !errors.Is(err, syscall.EAGAIN) {
					t.Fatalf("read: %d, %v", n, err)
				}
				return
			}
			got.Write(buf[:n])
		}
	}
	reads := 0
	afterProcess = func(c *conn) {
		if c.blocked {
			// The client reads all it can, and the socket now takes
			// the rest of the reply: the flush that follows drains.
			reads++
			if err := syscall.SetsockoptInt(server, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4<<20); err != nil {
				t.Fatal(err)
			}
			drain()
		}
	}
	defer func() { afterProcess = nil }()

	if _, err := syscall.Write(client, []byte("GET big\r\nGET big\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	c.events = syscall.EPOLLIN
	c.onEvents()
	if reads == 0 {
		t.Fatalf("the first reply never blocked: the socket took %d bytes at once", size)
	}
	for c.blocked {
		// The loop would wait for the socket to drain: drain it.
		drain()
		c.events = syscall.EPOLLOUT
		c.onEvents()
	}
	drain()

	one := "$" + strconv.Itoa(size) + "\r\n" + strings.Repeat("x", size) + "\r\n"
	if want := one + one + "+PONG\r\n"; got.String() != want {
		t.Fatalf("replies: got %d bytes ending %q, want %d bytes ending %q (two bulks and +PONG)",
			got.Len(), tail(got.String()), len(want), tail(want))
	}
	if c.writeWatch {
		t.Errorf("every reply written, but the loop still waits for the socket to be writable, not for requests")
	}
}

func tail(s string) string { return s[max(0, len(s)-12):] }
