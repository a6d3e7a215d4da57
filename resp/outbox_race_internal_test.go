package resp

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestPushToNewConnection: a pusher that finds a client among the
// server's connections (as CLIENT LIST, a MONITOR or CLIENT KILL would) may
// push to it at once. The event loop adopts a connection before it is
// listed, so the push sees its wake-up and an idle client gets the frame;
// the race detector checks the hand-over.
func TestPushToNewConnection(t *testing.T) {
	s := newOutboxServer(t, Options{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		seen := map[*conn]bool{}
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, c := range s.connections() {
				if !seen[c] {
					seen[c] = true
					c.push([]byte("+hello\r\n"))
				}
			}
		}
	})
	lost := 0
	for i := 0; i < 200; i++ {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		// The client sends nothing: the pushed frame must arrive on its own.
		_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		l, err := bufio.NewReader(nc).ReadString('\n')
		if err != nil || l != "+hello\r\n" {
			lost++
			t.Logf("connection %d: got %q, %v", i, l, err)
		}
		nc.Close()
		if lost > 0 {
			break
		}
	}
	close(stop)
	wg.Wait()
	if lost > 0 {
		t.Fatalf("a frame pushed to a new idle connection was not delivered")
	}
}

// TestPushDuringClose: pushers hammer every connection (TCP on the
// event loop, and in memory on goroutines) while clients leave and the
// server closes. Nothing may race, panic or hang, and Close must return.
func TestPushDuringClose(t *testing.T) {
	for round := 0; round < 20; round++ {
		s := New(Options{})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		var ncs []net.Conn
		for i := 0; i < 6; i++ {
			var nc net.Conn
			var err error
			if i%2 == 0 {
				nc, err = net.Dial("tcp", s.Addr())
			} else {
				nc, err = s.Dial(t.Context(), "", "")
			}
			if err != nil {
				t.Fatal(err)
			}
			ncs = append(ncs, nc)
			_, _ = nc.Write([]byte("*1\r\n$4\r\nPING\r\n"))
			if l, err := bufio.NewReader(nc).ReadString('\n'); err != nil || l != "+PONG\r\n" {
				t.Fatalf("PING: %q %v", l, err) // served (c.kick set) before the pushes
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					for _, c := range s.connections() {
						c.push([]byte(">1\r\n+x\r\n"))
					}
				}
			})
		}
		ncs[0].Close()
		ncs[1].Close()
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Close hung")
		}
		close(stop)
		wg.Wait()
		for _, nc := range ncs {
			nc.Close()
		}
	}
}

// wrappedListener hides the *net.TCPConn type, so the server serves its
// connections on goroutines (as on other systems, or behind TLS).
type wrappedListener struct{ net.Listener }

type wrappedConn struct{ net.Conn }

func (l wrappedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrappedConn{c}, nil
}

// TestPushGoroutineTCP: the goroutine path over a real socket. A
// pub/sub-class client that stops reading while the server's goroutine is
// blocked writing a large reply is killed by a push past the hard limit;
// the connection must close and the server must close cleanly.
func TestPushGoroutineTCP(t *testing.T) {
	s := New(Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(wrappedListener{l})
	defer s.Close()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	nc.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	if l, _ := br.ReadString('\n'); l != "+PONG\r\n" {
		t.Fatal(l)
	}
	cs := s.connections()
	c := cs[len(cs)-1]
	if c.fd != -1 {
		t.Fatal("expected a goroutine connection")
	}
	// Pipelined pushes interleaved with PINGs, read in full.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			c.push([]byte(">1\r\n+x\r\n"))
		}
	}()
	for range 500 {
		nc.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	}
	pongs, pushes := 0, 0
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for pongs < 500 || pushes < 300 {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d PONGs and %d pushes: %v", pongs, pushes, err)
		}
		switch l {
		case "+PONG\r\n":
			pongs++
		case ">1\r\n":
			if n, _ := br.ReadString('\n'); n != "+x\r\n" {
				t.Fatalf("split push: %q", n)
			}
			pushes++
		default:
			t.Fatalf("line %q", l)
		}
	}
	<-done
	// Now a subscriber that stops reading: fill until the limit kills it.
	c.subscribed.Store(true)
	frame := []byte(">1\r\n$65536\r\n" + string(make([]byte, 65536)) + "\r\n")
	killed := false
	for i := 0; i < 2000; i++ {
		if !c.push(frame) {
			killed = true
			break
		}
	}
	if !killed {
		t.Fatal("pushes past 32 MB to a subscriber that does not read never failed")
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("killed client's connection did not end: %v", err)
	}
}

// TestConnChurn: 300 clients (in memory and TCP) connect, push-wake,
// pipeline and leave abruptly; the server forgets every one and keeps no
// goroutine per departed client.
func TestConnChurn(t *testing.T) {
	s := newOutboxServer(t, Options{})
	base := runtime.NumGoroutine()
	for i := 0; i < 300; i++ {
		var nc net.Conn
		var err error
		if i%2 == 0 {
			nc, err = s.Dial(t.Context(), "", "")
		} else {
			nc, err = net.Dial("tcp", s.Addr())
		}
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte("*1\r\n$4\r\nPING\r\n*2\r\n$5\r\nWATCH\r\n$1\r\nk\r\n*1\r\n$5\r\nMULTI\r\n"))
		br := bufio.NewReader(nc)
		if l, _ := br.ReadString('\n'); l != "+PONG\r\n" {
			t.Fatal(l)
		}
		for _, c := range s.connections() {
			c.push([]byte(">1\r\n+x\r\n"))
		}
		nc.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.clients() != 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := s.clients(); n != 0 {
		t.Fatalf("%d clients still listed after all left", n)
	}
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		t.Fatalf("goroutines %d, %d before", n, base)
	}
	if err := s.DB(0).Verify(); err != nil {
		t.Fatal(err)
	}
}
