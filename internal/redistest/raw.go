package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// Conn is a raw RESP connection for differential tests: it sends commands
// and returns the exact bytes of each reply, so that two servers' replies
// can be compared byte for byte. It is not safe for concurrent use.
type Conn struct {
	c  net.Conn
	br *bufio.Reader
}

// Dial connects to addr over TCP, failing t if it cannot, and closes the
// connection when t ends.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return NewConn(c)
}

// NewConn returns a Conn over an established connection c, which the
// caller closes.
func NewConn(c net.Conn) *Conn { return &Conn{c: c, br: bufio.NewReader(c)} }

// Do sends one command and returns its reply's bytes, or the error that
// ended the exchange (after ten seconds without a reply, a timeout).
func (rc *Conn) Do(args []string) ([]byte, error) {
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(Encode(args)); err != nil {
		return nil, err
	}
	return ReadReply(rc.br)
}

// Send sends one command without reading its reply: a blocking command's,
// read later with Read.
func (rc *Conn) Send(args []string) error {
	_ = rc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := rc.c.Write(Encode(args))
	return err
}

// Read reads one reply, waiting at most d for it.
func (rc *Conn) Read(d time.Duration) ([]byte, error) {
	_ = rc.c.SetReadDeadline(time.Now().Add(d))
	return ReadReply(rc.br)
}

// Encode returns args as a RESP multibulk request.
func Encode(args []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// ReadReply reads one complete RESP2 or RESP3 reply from br and returns
// its bytes.
func ReadReply(br *bufio.Reader) ([]byte, error) {
	var out []byte
	var read func() error
	read = func() error {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return err
		}
		out = append(out, line...)
		if len(line) < 3 {
			return fmt.Errorf("short line %q", line)
		}
		body := string(line[1 : len(line)-2])
		switch line[0] {
		case '+', '-', ':', '_', '#', ',', '(':
			return nil
		case '$', '=', '!':
			n, err := strconv.Atoi(body)
			if err != nil || n < 0 {
				return err
			}
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(br, buf); err != nil {
				return err
			}
			out = append(out, buf...)
			return nil
		case '*', '~', '>', '%', '|':
			n, err := strconv.Atoi(body)
			if err != nil {
				return err
			}
			if line[0] == '%' || line[0] == '|' {
				n *= 2
			}
			for range n {
				if err := read(); err != nil {
					return err
				}
			}
			return nil
		}
		return fmt.Errorf("bad reply type in %q", line)
	}
	err := read()
	return out, err
}
