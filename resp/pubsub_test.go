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

// dialP connects to addr, closing the connection when the test ends.
func dialP(t testing.TB, addr string) *pconn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return newPconn(nc)
}

// TestPushBeforeLaterReply: a message published before a subscriber sends
// a command reaches the subscriber before that command's reply. The
// publisher runs on a goroutine (an in-memory connection) and the
// subscriber on an event loop, which, without taking its outbox before
// each command, ran a command it read in the same wake-up as a push first
// and put the push behind the reply.
func TestPushBeforeLaterReply(t *testing.T) {
	s := resp.RunT(t)
	sub := dialP(t, s.Addr())
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
	c := dialP(t, s.Addr())
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

// TestSlowSubscriberClosed: a subscriber that stops reading is closed at the
// pub/sub output limit, and the publisher never waits for it; a monitor
// is bounded the same way. The limit is lowered to 256 KB for the test.
func TestSlowSubscriberClosed(t *testing.T) {
	for _, who := range []string{"subscriber", "monitor"} {
		t.Run(who, func(t *testing.T) {
			s := resp.RunT(t)
			if err := s.ConfigSet("client-output-buffer-limit", "pubsub 256kb 0 0"); err != nil {
				t.Fatal(err)
			}
			slow := dialP(t, s.Addr())
			if who == "subscriber" {
				roundTrip(t, slow, "subscribe", "news")
			} else {
				roundTrip(t, slow, "monitor")
			}
			pub := dialP(t, s.Addr())
			big := strings.Repeat("x", 64<<10)
			start := time.Now()
			for i := range 400 { // 25 MB: far past the limit and the socket's buffers
				if r := roundTrip(t, pub, "publish", "news", big); r[0] != ':' {
					t.Fatalf("PUBLISH %d = %q", i, r)
				}
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("400 publishes took %v: the publisher waited for the slow client", d)
			}
			if s.Stats().OutputLimitCloses != 1 {
				t.Fatalf("OutputLimitCloses = %d, want 1", s.Stats().OutputLimitCloses)
			}
			if r := roundTrip(t, pub, "pubsub", "numsub", "news"); string(r) != "*2\r\n$4\r\nnews\r\n:0\r\n" {
				t.Fatalf("PUBSUB NUMSUB news after the close = %q", r)
			}
		})
	}
}

// TestTrackingTableBounded: the tracking table holds at most
// tracking-table-max-keys keys; the keys it forgets are invalidated for
// the clients that read them, as if they had changed, and INFO counts
// what is left.
func TestTrackingTableBounded(t *testing.T) {
	s := resp.RunT(t)
	if err := s.ConfigSet("tracking-table-max-keys", "10"); err != nil {
		t.Fatal(err)
	}
	c := dialP(t, s.Addr())
	roundTrip(t, c, "hello", "3")
	roundTrip(t, c, "client", "tracking", "on")
	invalidated := 0
	// do sends a command and returns its reply, counting the
	// invalidations that come first (the table is trimmed before each
	// command, as Redis trims it).
	do := func(args ...string) string {
		_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.nc.Write(encode(args)); err != nil {
			t.Fatal(err)
		}
		for {
			f := readFrame(t, c)
			if !strings.HasPrefix(string(f), ">2\r\n$10\r\ninvalidate\r\n") {
				return string(f)
			}
			invalidated++
		}
	}
	for i := range 100 {
		do("get", "key:"+strconv.Itoa(i))
	}
	info := do("info", "stats")
	if !strings.Contains(info, "tracking_total_keys:10\r\n") {
		t.Fatalf("INFO stats after 100 tracked reads with a limit of 10:\n%s", info)
	}
	if invalidated != 90 {
		t.Fatalf("%d keys invalidated as the table was trimmed, want 90", invalidated)
	}
}

// TestTrackingTableTrimmedBySetting: lowering tracking-table-max-keys
// trims the table at once, with as much effort as it takes (250 keys down
// to 1: 249 invalidations, read with no command after), as Redis's cron
// does; it waited for the next command, and forgot 100 keys per command.
func TestTrackingTableTrimmedBySetting(t *testing.T) {
	s := resp.RunT(t)
	c, ctl := dialP(t, s.Addr()), dialP(t, s.Addr())
	roundTrip(t, c, "hello", "3")
	roundTrip(t, c, "client", "tracking", "on")
	for i := range 250 {
		roundTrip(t, c, "get", "key:"+strconv.Itoa(i))
	}
	roundTrip(t, ctl, "config", "set", "tracking-table-max-keys", "1")
	_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	for i := range 249 {
		if f := readFrame(t, c); !strings.HasPrefix(string(f), ">2\r\n$10\r\ninvalidate\r\n") {
			t.Fatalf("frame %d after the setting: %q, want an invalidation", i, f)
		}
	}
	if info := string(roundTrip(t, c, "info", "stats")); !strings.Contains(info, "tracking_total_keys:1\r\n") {
		t.Fatalf("INFO after the trim:\n%s", info)
	}
}

// TestInfoCounts: INFO reports the channels and patterns with subscribers
// and the tracking clients, and they fall back when clients leave.
func TestInfoCounts(t *testing.T) {
	s := resp.RunT(t)
	a, b, c := dialP(t, s.Addr()), dialP(t, s.Addr()), dialP(t, s.Addr())
	roundTrip(t, a, "subscribe", "x", "y")
	roundTrip(t, a, "psubscribe", "z*")
	roundTrip(t, b, "ssubscribe", "s")
	roundTrip(t, c, "client", "tracking", "on")
	roundTrip(t, c, "get", "k")
	for _, want := range []string{"pubsub_channels:2\r\n", "pubsub_patterns:1\r\n", "pubsubshard_channels:1\r\n",
		"tracking_clients:1\r\n", "tracking_total_keys:1\r\n", "tracking_total_items:1\r\n"} {
		if info := string(roundTrip(t, c, "info", "everything")); !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
	a.nc.Close()
	roundTrip(t, c, "client", "tracking", "off")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		info := string(roundTrip(t, c, "info", "everything"))
		if strings.Contains(info, "pubsub_channels:0\r\n") && strings.Contains(info, "pubsub_patterns:0\r\n") &&
			strings.Contains(info, "tracking_clients:0\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO 5 s after the subscriber left and tracking went off:\n%s", info)
		}
	}
}
