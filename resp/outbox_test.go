package resp_test

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// TestOutputLimitConfigMatchesRedis sets client-output-buffer-limit to
// values Redis reads in its own ways (memtoull's units and saturation,
// strtoll's seconds kept in a C int, fields split on single spaces) and
// compares the replies and CONFIG GET with redis-server.
func TestOutputLimitConfigMatchesRedis(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	a, b := dialRaw(t, redisAddr), dialRaw(t, nxkvAddr)
	for _, v := range []string{
		"normal 0 0 9999999999", "normal 18446744073709551615 0 0", "normal 18446744073709551616 0 0",
		"normal 5000000000gb 0 0", "normal  1 0 0", "normal 1 0 0 ", "", "pubsub 1KB 2Mb 3", "pubsub 1k 2m 3g",
		"pubsub 1 1 -1", "pubsub 1 1 +5", "pubsub 1 1 ", "pubsub 1 1 x", "pubsub -1 1 1", "pubsub 1b 1B 1",
		"replica 1 2 3", "slave 1 2 3", "master 1 2 3", "PUBSUB 1 2 3", "pubsub 1 2 2147483648", "pubsub 1x 1 1",
		"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
	} {
		var got [2]string
		for i, c := range []*rawConn{a, b} {
			r1, err := c.do([]string{"config", "set", "client-output-buffer-limit", v})
			if err != nil {
				t.Fatal(err)
			}
			r2, err := c.do([]string{"config", "get", "client-output-buffer-limit"})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = string(r1) + string(r2)
		}
		if got[0] != got[1] {
			t.Errorf("%q:\nredis-server: %q\nnxkv-server:  %q", v, got[0], got[1])
		}
	}
}

// TestNormalOutputLimitOnReplies: a client that pipelines replies it does
// not read is closed once they pass the normal class's hard limit, as
// Redis checks every reply it adds to a client's buffer: the in-memory
// dialer, whose writes never block, kept all 20 MB of 40 GETs of a
// 512 KB value before.
func TestNormalOutputLimitOnReplies(t *testing.T) {
	s := resp.NewT(t, resp.Options{})
	c := dialRaw(t, s.Addr())
	big := strings.Repeat("x", 512<<10)
	for _, cmd := range [][]string{{"config", "set", "client-output-buffer-limit", "normal 1mb 0 0"}, {"set", "big", big}} {
		if r, err := c.do(cmd); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("%q: %q %v", cmd[0], r, err)
		}
	}
	nc, err := s.Dial(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := strings.Repeat(string(redistest.Encode([]string{"get", "big"})), 40)
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing until the server has stopped serving it:
	// a client that reads while the server writes keeps its unread output
	// small, and more replies get through.
	for deadline := time.Now().Add(10 * time.Second); s.Stats().OutputLimitCloses == 0; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the client was not closed at its output limit")
		}
	}
	br := bufio.NewReader(nc)
	got := 0
	for ; got < 40; got++ {
		if _, err := redistest.ReadReply(br); err != nil {
			break
		}
	}
	if got > 3 {
		t.Fatalf("%d replies of 512 KB delivered to a client past its 1 MB normal hard limit", got)
	}
	if n := s.Stats().OutputLimitCloses; n != 1 {
		t.Errorf("Stats().OutputLimitCloses = %d, want 1", n)
	}
}
