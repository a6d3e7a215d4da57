package resp_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// exchange sends raw bytes on a new connection and returns what comes back
// until the server has sent at least min bytes (or closed) and then has
// been quiet for a short wait, and whether it closed the connection. Redis
// answers first; the server under test gets min = len(Redis's answer), so a
// slow machine cannot cut its answer short.
func exchange(t *testing.T, addr string, input []byte, min int) (out []byte, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(input); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	deadline := time.Now().Add(10 * time.Second)
	for {
		wait := 200 * time.Millisecond
		if len(out) < min {
			wait = time.Until(deadline)
		}
		_ = c.SetReadDeadline(time.Now().Add(wait))
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return out, false
		}
		if err != nil {
			return out, true
		}
	}
}

// protocolCases are raw inputs, well-formed and malformed, whose replies and
// connection state must match Redis's.
var protocolCases = []string{
	"PING\r\n",
	"ping\n",
	"  ping   \r\n",
	"\r\n\r\nPING\r\n",
	"foo a b\r\n",
	"GET\r\n",
	"*1\r\n$3\r\nGET\r\n",
	"*-1\r\n*0\r\nPING\r\n",
	"*x\r\n",
	"*1\r\n$-1\r\n",
	"*1\r\nx\r\n",
	"*1\r\n$1000000000000\r\n",
	"set \"a b\r\n",
	"set k \"a\\x41\\n\" \r\nget k\r\nset k 'a\\'b'\r\nget k\r\nset k \"a\"b\r\n",
	"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$3\r\nabc\r\nget k\r\n*1\r\n$4\r\nPING\r\n*3000000000\r\n",
	"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n",
	"*2\r\n$4\r\nPING\r\n$1\r\nab\r\n",
	"*1\r\n$4\r\nping\n\n",
	"*1\n$4\r\nping\r\n",
	"*+1\r\n$4\r\nping\r\n",
	"*01\r\n$4\r\nping\r\n",
	"*1\r\n$04\r\nping\r\n",
	"*1\r\n$ 4\r\nping\r\n",
	"*1\r\n$536870913\r\n",
	"*1\r\n$536870912\r\n",
	"*2147483648\r\n",
	"*2147483647\r\n",
	"ECHO \"\\x4\"\r\n",
	"ECHO \"unterminated\r\n",
	"ECHO 'a\r\n",
	"*1\r\n$4\r\nPING\r\nGET\r\n*1\r\n$2\r\nxx\r\n",
	"MULTI\r\nSET a b\r\n*1\r\nx\r\n",
	strings.Repeat("a", 70000),
	"*" + strings.Repeat("1", 70000),
	"*1\r\n$" + strings.Repeat("1", 70000),
	"*1\r\n" + strings.Repeat("x", 70000),
	"GET " + strings.Repeat("k", 1000) + " b\r\n",
	"x" + strings.Repeat(" 'y'", 40) + "\r\n",
	"unknowncmd\r\nPING\r\n",
	"\x00\x01\x02\r\n",
	"*1\r0\n\r0",
	"*1\r\n\r\n",
	"*1\r\n\xff\r\n",
}

// TestProtocolMatchesRedis sends each raw input to redis-server and to the
// server and compares the bytes returned and whether the connection was
// closed: protocol errors get Redis's reply and close only that connection.
func TestProtocolMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	for _, in := range protocolCases {
		name := in
		if len(name) > 40 {
			name = name[:40]
		}
		outR, closedR := exchange(t, rs.Addr, []byte(in), 0)
		outN, closedN := exchange(t, ns.Addr(), []byte(in), len(outR))
		if !bytes.Equal(outR, outN) || closedR != closedN {
			t.Errorf("input %q:\nredis-server: %q closed=%v\nnxkv-server:  %q closed=%v", name, outR, closedR, outN, closedN)
		}
		// The server still serves everyone else.
		if out, _ := exchange(t, ns.Addr(), []byte("PING\r\n"), 7); string(out) != "+PONG\r\n" {
			t.Fatalf("after %q: PING on a new connection = %q", name, out)
		}
	}
}

// TestUnauthenticatedLimitsMatchRedis checks the small request limits
// before AUTH when a password is set.
func TestUnauthenticatedLimitsMatchRedis(t *testing.T) {
	rs := redistest.Start(t)
	// The launcher checks the server with PING, so the password comes after.
	if out, _ := exchange(t, rs.Addr, []byte("config set requirepass sekret\r\n"), 5); string(out) != "+OK\r\n" {
		t.Fatalf("config set requirepass: %q", out)
	}
	ns := resp.NewT(t, resp.Options{Password: "sekret"})
	for _, in := range []string{
		"*20\r\n",
		"*2\r\n$100000\r\n",
		"get k\r\n",
		"auth x\r\n",
		"auth a b\r\n",
		"hello 3\r\n",
		"hello 3 auth default sekret\r\nclient getname\r\n",
		"hello 2 auth default sekret setname x\r\nclient getname\r\n",
		"hello 4\r\n",
		"ping\r\n",
		"quit\r\n",
		"auth sekret\r\nget k\r\n",
		"auth sekret\r\nauth x\r\nget k\r\n",
		"auth default sekret\r\n*20\r\n" + strings.Repeat("$1\r\na\r\n", 20),
		"multi\r\nget k\r\nexec\r\n",
		"auth sekret\r\nexec x\r\nmulti\r\nexec x\r\nexec\r\n",
		"auth sekret\r\nmulti\r\nnosuch\r\nexec\r\n",
		"reset\r\n",
		"auth sekret\r\nreset\r\nget k\r\n",
	} {
		outR, closedR := exchange(t, rs.Addr, []byte(in), 0)
		outN, closedN := exchange(t, ns.Addr(), []byte(in), len(outR))
		// HELLO replies carry the connection id, which differs.
		outR, outN = helloID.ReplaceAll(outR, []byte("id\r\n:ID")), helloID.ReplaceAll(outN, []byte("id\r\n:ID"))
		if !bytes.Equal(outR, outN) || closedR != closedN {
			t.Errorf("input %q:\nredis-server: %q closed=%v\nnxkv-server:  %q closed=%v", in, outR, closedR, outN, closedN)
		}
	}
}

var helloID = regexp.MustCompile(`id\r\n:[0-9]+`)

// TestPipelining sends many commands in one write and reads all replies.
func TestPipelining(t *testing.T) {
	ns := resp.RunT(t)
	c, err := net.Dial("tcp", ns.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 20000
	var req bytes.Buffer
	for range n {
		req.Write(encode([]string{"INCR", "counter"}))
	}
	go func() { _, _ = c.Write(req.Bytes()) }()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(io.LimitReader(c, int64(len(":1\r\n")*9+len(":10\r\n")*90+len(":100\r\n")*900+len(":1000\r\n")*9000+len(":10000\r\n")*10001)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(got, []byte(":20000\r\n")) || bytes.Count(got, []byte("\r\n")) != n {
		t.Fatalf("pipelined INCRs: %d replies, ending %q", bytes.Count(got, []byte("\r\n")), got[max(0, len(got)-20):])
	}
}
