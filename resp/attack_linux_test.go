//go:build linux

package resp_test

import (
	"bufio"
	"net"
	"strings"
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
