package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
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
	var read func(out *[]byte, top bool) error
	read = func(out *[]byte, top bool) error {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return err
		}
		return readRest(br, line, out, read)
	}
	err := read(&out, true)
	return out, err
}

// ReadFrames reads one reply from br and returns it with the RESP3 pushes
// it holds: a push that comes inside an aggregate (a message a
// transaction's command published to its own client) is out of band, so
// it is returned as a frame of its own, before the aggregate, which holds
// "<push>" in its place. A push that is an (un)subscribe notification, a
// command's own reply in RESP3, stays an element.
func ReadFrames(br *bufio.Reader) ([][]byte, error) {
	var pushes [][]byte
	var read func(out *[]byte, top bool) error
	read = func(out *[]byte, top bool) error {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return err
		}
		if len(line) < 3 || line[0] != '>' || top {
			return readRest(br, line, out, read)
		}
		var push []byte
		if err := readRest(br, line, &push, read); err != nil {
			return err
		}
		if subReply.Match(push) {
			*out = append(*out, push...)
			return nil
		}
		pushes = append(pushes, push)
		*out = append(*out, "<push>"...)
		return read(out, false) // the element it came before
	}
	var f []byte
	if err := read(&f, true); err != nil {
		return nil, err
	}
	return append(pushes, f), nil
}

// subReply matches a RESP3 (un)subscribe notification.
var subReply = regexp.MustCompile(`^>3\r\n\$\d+\r\n[ps]?(un)?subscribe\r\n`)

// readRest reads the rest of the frame whose first line is line, its
// elements through read, appending its bytes to out.
func readRest(br *bufio.Reader, line []byte, out *[]byte, read func(*[]byte, bool) error) error {
	*out = append(*out, line...)
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
		*out = append(*out, buf...)
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
			if err := read(out, false); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("bad reply type in %q", line)
}
