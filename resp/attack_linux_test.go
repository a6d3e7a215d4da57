//go:build linux

package resp_test

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nxkv/nxkv/resp"
)

// TestHalfClosedSlowReaderDoesNotSpinLoop: a client that stops reading
// its replies and then shuts down its sending side left its socket
// reporting a half-close (EPOLLRDHUP, level-triggered) while the loop waited
// for it to become writable. The loop ignored the event, so epoll_wait
// returned at once, forever: one client kept an event loop spinning on a
// core. Counted here as loop wake-ups while another client makes a few
// hundred round trips.
func TestHalfClosedSlowReaderDoesNotSpinLoop(t *testing.T) {
	s := resp.NewT(t, resp.Options{})
	s.Set("big", strings.Repeat("x", 4<<20))
	slow, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_ = slow.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := slow.Write([]byte(strings.Repeat("GET big\r\n", 4))); err != nil {
		t.Fatal(err)
	}
	// A first byte of reply: the server has written all the socket takes
	// of 16 MB of replies, and waits for the client to read.
	if _, err := slow.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := slow.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}

	fast, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	br := bufio.NewReader(fast)
	ping := func() {
		if _, err := fast.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "+PONG\r\n" {
			t.Fatalf("PING: %q, %v", line, err)
		}
	}
	ping()
	before := resp.LoopWakeups(s)
	const trips = 300
	for range trips {
		ping()
	}
	// Each round trip wakes a loop about once; a spinning loop wakes
	// thousands of times meanwhile.
	if n := resp.LoopWakeups(s) - before; n > 3*trips {
		t.Fatalf("event loops woke %d times during %d round trips of another client: a loop spins", n, trips)
	}
}

// ping makes one PING round trip on c, read through br.
func ping(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING = %q, %v, want +PONG", line, err)
	}
}

// sameLoopPeer connects to s until a connection lands on the event loop
// of the connection made just before the call (connections go to the loops
// in turn), and returns it with its reader; it skips the test where s has
// no event loops.
func sameLoopPeer(t *testing.T, s *resp.Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	loops := resp.Loops(s)
	if loops == 0 {
		t.Skip("no event loops on this platform")
	}
	var c net.Conn
	var br *bufio.Reader
	for range loops {
		var err error
		if c, err = net.Dial("tcp", s.Addr()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		br = bufio.NewReader(c)
		ping(t, c, br)
	}
	return c, br
}

// readBulk reads one bulk reply of n bytes from br.
func readBulk(t *testing.T, br *bufio.Reader, n int, what string) {
	t.Helper()
	if line, err := br.ReadString('\n'); err != nil || line != "$"+strconv.Itoa(n)+"\r\n" {
		t.Fatalf("%s: header %q, %v, want a bulk of %d bytes", what, line, err, n)
	}
	if _, err := br.Discard(n + 2); err != nil {
		t.Fatalf("%s: the reply was cut short: %v", what, err)
	}
}

// readQuitAndClose reads QUIT's +OK from br, then expects the close.
func readQuitAndClose(t *testing.T, br *bufio.Reader) {
	t.Helper()
	if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("QUIT = %q, %v, want +OK", line, err)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatalf("connection still open after QUIT's reply")
	}
}

// TestQuitWithSlowReaderKeepsLoopServing: a client pipelines far more
// replies than the sockets hold, then QUIT, and reads nothing until
// another client on the same event loop has had its reply: the loop keeps
// serving others while the slow reader's replies wait, and the slow
// reader still gets every reply, QUIT's +OK last, then the close.
func TestQuitWithSlowReaderKeepsLoopServing(t *testing.T) {
	s := resp.NewT(t, resp.Options{})
	const size = 1 << 20
	s.Set("big", strings.Repeat("x", size))
	slow, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slow.Close() })
	slowBr := bufio.NewReader(slow)
	ping(t, slow, slowBr) // the loops are started: slow is on one
	other, otherBr := sameLoopPeer(t, s)
	const gets = 32 // 32 MB of replies: far more than the sockets hold
	if _, err := slow.Write([]byte(strings.Repeat("GET big\r\n", gets) + "QUIT\r\n")); err != nil {
		t.Fatal(err)
	}
	ping(t, other, otherBr)
	for i := range gets {
		readBulk(t, slowBr, size, fmt.Sprintf("reply %d of %d to the slow reader", i+1, gets))
	}
	readQuitAndClose(t, slowBr)
}

// TestQuitBehindFullSocketKeepsLoopServing: QUIT (or a protocol error)
// with replies the socket cannot take yet. The loop used to write them in
// a blocking loop of up to a second, serving none of its other
// connections meanwhile, then closed the socket with the rest unsent. Now
// the connection closes once the client has taken every reply, and the
// loop serves others in between: here the slow client reads nothing until
// another client on the same loop has its reply, then expects its reply
// whole, QUIT's +OK, and the close.
func TestQuitBehindFullSocketKeepsLoopServing(t *testing.T) {
	s := resp.NewT(t, resp.Options{})
	const size = 60 << 10 // under the size that flushes replies before QUIT
	s.Set("mid", strings.Repeat("x", size))
	// The slow client's receive buffer is set before it connects, so the
	// window it offers stays small.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	slow, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slow.Close() })
	slowBr := bufio.NewReaderSize(slow, 4096)
	ping(t, slow, slowBr) // the loops are started: slow is on one
	other, otherBr := sameLoopPeer(t, s)
	resp.ShrinkSendBuffers(s, 4096)
	// A first reply the slow client leaves unread: with its receive queue
	// empty the kernel could take a whole large segment past the buffer's
	// size. The round trip on the other connection, on the same loop, is
	// served after it.
	s.Set("pre", strings.Repeat("p", 2048))
	if _, err := slow.Write([]byte("GET pre\r\n")); err != nil {
		t.Fatal(err)
	}
	ping(t, other, otherBr)
	if _, err := slow.Write([]byte("GET mid\r\nQUIT\r\n")); err != nil {
		t.Fatal(err)
	}
	ping(t, other, otherBr)
	readBulk(t, slowBr, 2048, "GET pre")
	readBulk(t, slowBr, size, "GET mid")
	readQuitAndClose(t, slowBr)
}
