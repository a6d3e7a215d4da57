package resp_test

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/resp"
)

// roundTrip sends args on c and reads one frame.
func roundTrip(t testing.TB, c *pconn, args ...string) []byte {
	t.Helper()
	_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(encode(args)); err != nil {
		t.Fatal(err)
	}
	return readFrame(t, c)
}

// readFrame reads one frame from c.
func readFrame(t testing.TB, c *pconn) []byte {
	t.Helper()
	r, err := readReply(c.br)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newPconn(nc net.Conn) *pconn { return &pconn{nc: nc, br: bufio.NewReader(nc)} }

// TestPushBeforeLaterReply: a message published before a subscriber sends
// a command reaches the subscriber before that command's reply. The
// publisher runs on a goroutine (an in-memory connection) and the
// subscriber on an event loop, which, without taking its outbox before
// each command, ran a command it read in the same wake-up as a push first
// and put the push behind the reply.
func TestPushBeforeLaterReply(t *testing.T) {
	s := resp.RunT(t)
	snc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer snc.Close()
	sub := newPconn(snc)
	if r := roundTrip(t, sub, "hello", "3"); r[0] != '%' {
		t.Fatalf("HELLO 3 = %q", r)
	}
	if r := roundTrip(t, sub, "subscribe", "ch"); !strings.HasPrefix(string(r), ">3") {
		t.Fatalf("SUBSCRIBE = %q", r)
	}
	pnc, err := s.Dial(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer pnc.Close()
	pub := newPconn(pnc)
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for i := range rounds {
		msg := strconv.Itoa(i)
		if r := roundTrip(t, pub, "publish", "ch", msg); string(r) != ":1\r\n" {
			t.Fatalf("PUBLISH = %q", r)
		}
		first := roundTrip(t, sub, "ping", msg)
		want := ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$" + strconv.Itoa(len(msg)) + "\r\n" + msg + "\r\n"
		if string(first) != want {
			t.Fatalf("round %d: the subscriber read %q first, want the message published before its PING (%q)", i, first, want)
		}
		if r := readFrame(t, sub); string(r) != "$"+strconv.Itoa(len(msg))+"\r\n"+msg+"\r\n" {
			t.Fatalf("round %d: PING = %q", i, r)
		}
	}
}

// TestFlushDeletesReservedKeys: FLUSHDB and FLUSHALL delete the keys under
// nxkv: too, on their own and inside a transaction (the flush that names
// no keyspace event deleted only the others for a while).
func TestFlushDeletesReservedKeys(t *testing.T) {
	s := resp.RunT(t)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := newPconn(nc)
	for _, flush := range [][]string{{"flushdb"}, {"flushall"}} {
		for _, tx := range []bool{false, true} {
			roundTrip(t, c, "set", "nxkv:a", "1")
			roundTrip(t, c, "set", "b", "1")
			if tx {
				roundTrip(t, c, "multi")
				roundTrip(t, c, flush...)
				roundTrip(t, c, "exec")
			} else {
				roundTrip(t, c, flush...)
			}
			if r := roundTrip(t, c, "exists", "nxkv:a", "b"); string(r) != ":0\r\n" {
				t.Errorf("%v (in MULTI: %v): EXISTS nxkv:a b = %q, want :0", flush, tx, r)
			}
		}
	}
}
