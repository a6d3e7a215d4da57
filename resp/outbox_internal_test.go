package resp

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// outboxClient is a raw client of a test server, with the server's side of
// its connection.
type outboxClient struct {
	nc net.Conn
	br *bufio.Reader
	c  *conn // the server's connection
}

// dialOutbox connects to s over TCP (an event loop on Linux) or in memory
// (a goroutine), and returns the client once the server has registered its
// connection.
func dialOutbox(t *testing.T, s *Server, transport string) *outboxClient {
	t.Helper()
	var nc net.Conn
	var err error
	if transport == "tcp" {
		nc, err = net.Dial("tcp", s.Addr())
	} else {
		nc, err = s.Dial(context.Background(), "", "")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	oc := &outboxClient{nc: nc, br: bufio.NewReader(nc)}
	// A reply proves the server serves the connection; the newest
	// connection is ours.
	if got := oc.do(t, "*1\r\n$4\r\nPING\r\n"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	cs := s.connections()
	oc.c = cs[len(cs)-1]
	return oc
}

// do sends raw bytes and reads one line.
func (oc *outboxClient) do(t *testing.T, req string) string {
	t.Helper()
	if _, err := io.WriteString(oc.nc, req); err != nil {
		t.Fatal(err)
	}
	return oc.line(t)
}

func (oc *outboxClient) line(t *testing.T) string {
	t.Helper()
	_ = oc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := oc.br.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v (got %q)", err, l)
	}
	return l
}

func newOutboxServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPushWakesIdleClient pushes frames to a client that sends nothing:
// its event loop or goroutine wakes and writes them, in order, and later
// replies follow them.
func TestPushWakesIdleClient(t *testing.T) {
	for _, transport := range []string{"tcp", "memory"} {
		t.Run(transport, func(t *testing.T) {
			s := newOutboxServer(t, Options{})
			oc := dialOutbox(t, s, transport)
			for i := range 3 {
				frame := ">2\r\n+push\r\n:" + string(rune('0'+i)) + "\r\n"
				if !oc.c.push([]byte(frame)) {
					t.Fatal("push to an open client failed")
				}
			}
			for i := range 3 {
				want := []string{">2\r\n", "+push\r\n", ":" + string(rune('0'+i)) + "\r\n"}
				for _, w := range want {
					if got := oc.line(t); got != w {
						t.Fatalf("frame %d: %q, want %q", i, got, w)
					}
				}
			}
			if got := oc.do(t, "*1\r\n$4\r\nPING\r\n"); got != "+PONG\r\n" {
				t.Fatalf("PING after pushes = %q", got)
			}
		})
	}
}

// TestPushBetweenReplies pushes while the client pipelines requests: every
// frame arrives whole, between replies, and every reply arrives.
func TestPushBetweenReplies(t *testing.T) {
	for _, transport := range []string{"tcp", "memory"} {
		t.Run(transport, func(t *testing.T) {
			s := newOutboxServer(t, Options{})
			oc := dialOutbox(t, s, transport)
			const pings, pushes = 2000, 500
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range pushes {
					oc.c.push([]byte(">1\r\n+x\r\n"))
				}
			}()
			go func() {
				_, _ = io.WriteString(oc.nc, strings.Repeat("*1\r\n$4\r\nPING\r\n", pings))
			}()
			gotPings, gotPushes := 0, 0
			for gotPings < pings || gotPushes < pushes {
				switch l := oc.line(t); l {
				case "+PONG\r\n":
					gotPings++
				case ">1\r\n":
					if next := oc.line(t); next != "+x\r\n" {
						t.Fatalf("a push frame was split: %q", next)
					}
					gotPushes++
				default:
					t.Fatalf("unexpected line %q", l)
				}
			}
			<-done
		})
	}
}

// TestPushLimits fills the output of a pub/sub client that does not read:
// past the hard limit the push fails at once (a publisher never waits) and
// the client is closed; past the soft limit for longer than its time
// (on the server's clock) likewise; a normal client has no limit.
func TestPushLimits(t *testing.T) {
	for _, transport := range []string{"tcp", "memory"} {
		t.Run(transport+"/hard", func(t *testing.T) {
			s := newOutboxServer(t, Options{})
			l, why := parseOutputLimits(s.outputLimits(), "pubsub 1mb 0 0")
			if why != "" {
				t.Fatal(why)
			}
			s.limits.Store(&l)
			oc := dialOutbox(t, s, transport)
			oc.c.subscribed.Store(true)
			closed := make(chan struct{})
			oc.c.atClose(func() { close(closed) })
			frame := []byte("$65536\r\n" + strings.Repeat("x", 65536) + "\r\n")
			failed := -1
			for i := range 4096 { // 256 MB if nothing stopped it
				if !oc.c.push(frame) {
					failed = i
					break
				}
			}
			if failed < 0 {
				t.Fatal("pushes past the hard limit never failed")
			}
			<-closed // the owner closes the client
			if oc.c.push(frame) {
				t.Error("a push to a closed client succeeded")
			}
			if s.clientsKilled.Load() != 1 {
				t.Errorf("clientsKilled = %d, want 1", s.clientsKilled.Load())
			}
		})
		t.Run(transport+"/soft", func(t *testing.T) {
			clk := clock.NewMock()
			clk.Set(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
			s := newOutboxServer(t, Options{Clock: clk})
			l, _ := parseOutputLimits(s.outputLimits(), "pubsub 0 256kb 10")
			s.limits.Store(&l)
			oc := dialOutbox(t, s, transport)
			oc.c.subscribed.Store(true)
			frame := []byte("$65536\r\n" + strings.Repeat("x", 65536) + "\r\n")
			// Fill well past the soft limit, whatever the socket buffers take.
			for range 512 {
				if !oc.c.push(frame) {
					t.Fatal("a push failed before the soft limit's time ran out")
				}
			}
			clk.Add(9 * time.Second)
			if !oc.c.push(frame) {
				t.Fatal("a push failed 9 s past the soft limit of 10 s")
			}
			clk.Add(2 * time.Second)
			if oc.c.push(frame) {
				t.Fatal("a push succeeded 11 s past the soft limit of 10 s")
			}
		})
		t.Run(transport+"/normal", func(t *testing.T) {
			s := newOutboxServer(t, Options{})
			oc := dialOutbox(t, s, transport)
			frame := []byte("$65536\r\n" + strings.Repeat("x", 65536) + "\r\n")
			for range 1024 { // 64 MB, past every pub/sub limit
				if !oc.c.push(frame) {
					t.Fatal("a push to a normal client failed: normal clients have no limit by default")
				}
			}
		})
	}
}

// TestCloseHooksRunOnce shows a client's close hooks run once, and its
// outbox refuses pushes, whether the client leaves or the server closes.
func TestCloseHooksRunOnce(t *testing.T) {
	for _, transport := range []string{"tcp", "memory"} {
		for _, how := range []string{"client leaves", "server closes"} {
			t.Run(transport+"/"+how, func(t *testing.T) {
				s := newOutboxServer(t, Options{})
				oc := dialOutbox(t, s, transport)
				runs := make(chan struct{}, 2)
				oc.c.atClose(func() { runs <- struct{}{} })
				if how == "client leaves" {
					oc.nc.Close()
				} else {
					s.Close()
				}
				<-runs
				if oc.c.push([]byte("+x\r\n")) {
					t.Error("a push to a closed client succeeded")
				}
				s.Close()
				if len(runs) != 0 {
					t.Error("a close hook ran twice")
				}
			})
		}
	}
}
