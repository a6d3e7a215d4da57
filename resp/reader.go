package resp

// This file parses client requests: RESP multibulk arrays and inline
// commands, with Redis's limits and Redis's protocol error texts.

import (
	"bytes"
	"errors"
	"io"
)

// Redis's default limits on what one request may declare, and the error
// replies it sends when a client passes them (the connection is then closed).
const (
	// maxInline bounds an inline request, and the line a multibulk or bulk
	// length header is read from (Redis's PROTO_INLINE_MAX_SIZE).
	maxInline = 64 << 10
	// maxBulk is the largest bulk string (proto-max-bulk-len, 512 MB).
	maxBulk = 512 << 20
	// maxMultibulk is the largest array length Redis accepts (INT_MAX).
	maxMultibulk = 1<<31 - 1
	// maxQueryBuffer is how much unparsed input a client may have pending
	// (client-query-buffer-limit, 1 GB); past it the connection is closed.
	maxQueryBuffer = 1 << 30
	// Before AUTH, when a password is set, requests are held to small sizes
	// so that an unauthenticated client cannot make the server allocate.
	maxUnauthMultibulk = 10
	maxUnauthBulk      = 16 << 10
	// argsCap bounds the argument slots preallocated from a declared array
	// length; more grow as arguments actually arrive.
	argsCap = 1024
	// readChunk is the read buffer's initial size and the least free room
	// kept before each read.
	readChunk = 16 << 10
	// shrinkAbove is the buffer size kept between requests; a larger one,
	// grown for a large request, is dropped once it has been parsed.
	shrinkAbove = 1 << 20
)

// protoError is a protocol violation: the reply text (without "-ERR ")
// is sent and the connection closed.
type protoError string

func (e protoError) Error() string { return "Protocol error: " + string(e) }

var (
	errTooBigInline     = protoError("too big inline request")
	errTooBigMbulkCount = protoError("too big mbulk count string")
	errInvalidMbulk     = protoError("invalid multibulk length")
	errUnauthMbulk      = protoError("unauthenticated multibulk length")
	errTooBigBulkCount  = protoError("too big bulk count string")
	errInvalidBulk      = protoError("invalid bulk length")
	errUnauthBulk       = protoError("unauthenticated bulk length")
	errUnbalancedQuotes = protoError("unbalanced quotes in request")
	// errQueryBuffer closes a client whose pending input passed
	// maxQueryBuffer, without a reply (as Redis does).
	errQueryBuffer = errors.New("query buffer limit reached")
)

func errExpectedDollar(c byte) protoError {
	if c == '\r' || c == '\n' {
		c = ' ' // error replies cannot hold line breaks
	}
	return protoError("expected '$', got '" + string([]byte{c}) + "'")
}

// reader parses requests from one connection. Arguments returned by next
// alias the read buffer (or the inline arena) and are valid until the next
// call. A reader is used by one goroutine.
type reader struct {
	rd  io.Reader
	buf []byte
	r   int // start of the request being parsed
	w   int // end of the data read

	// Incremental multibulk state, so a large request arriving in many reads
	// is parsed once: pos is where parsing resumes, want the number of
	// arguments still expected (0: no multibulk in progress), offs the
	// [start, end) offsets of the arguments parsed so far, relative to r.
	pos  int
	want int
	offs []int

	// scanFrom and scanned (relative to r) remember how far a search for a
	// line end starting at scanFrom got without finding it.
	scanFrom, scanned int

	args   [][]byte
	inline []byte // arena holding inline arguments
	// unauth holds requests to the pre-AUTH limits; the connection sets it.
	unauth bool
	// maxBulk is the largest bulk string accepted (proto-max-bulk-len).
	maxBulk int
}

func newReader(rd io.Reader) *reader {
	return &reader{rd: rd, buf: make([]byte, readChunk), maxBulk: maxBulk}
}

// buffered reports whether unparsed input is waiting, that is, whether the
// caller should execute what next returns before flushing replies.
func (r *reader) buffered() bool { return r.w > r.r }

// next returns the next request's arguments (never empty), reading from the
// connection as needed. It returns a protoError for malformed input,
// errQueryBuffer, or the connection's read error (io.EOF at a clean end).
func (r *reader) next() ([][]byte, error) {
	for {
		args, err := r.parse()
		if err != nil || args != nil {
			return args, err
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// parse returns the next complete request in the buffer, nil if more input
// is needed. Empty requests (blank inline lines, "*0") are skipped.
func (r *reader) parse() ([][]byte, error) {
	for r.r < r.w {
		var args [][]byte
		var err error
		if r.want > 0 || r.buf[r.r] == '*' {
			args, err = r.parseMultibulk()
		} else {
			args, err = r.parseInline()
		}
		if err != nil || args == nil {
			return nil, err
		}
		if len(args) > 0 {
			return args, nil
		}
	}
	return nil, nil
}

// line returns the index of the '\r' ending the header that starts at
// from, and whether the header and its terminator (two bytes, as Redis
// assumes "\r\n") are complete.
func (r *reader) line(from int) (int, bool) {
	i := r.find(from, '\r')
	if i < 0 {
		return -1, false
	}
	return i, i+2 <= r.w
}

// find returns the index of the first c at or after from, or -1. A search
// that resumes from the same start skips what earlier calls scanned, so a
// long line arriving in small reads costs linear time, not quadratic.
func (r *reader) find(from int, c byte) int {
	start := from
	if r.scanFrom == from-r.r && r.scanned > from-r.r {
		start = r.r + r.scanned
	}
	if i := bytes.IndexByte(r.buf[start:r.w], c); i >= 0 {
		return start + i
	}
	r.scanFrom, r.scanned = from-r.r, r.w-r.r
	return -1
}

// parseMultibulk parses (or resumes) a "*<n>\r\n" request. It returns nil
// args and nil error when it needs more input, and an empty non-nil slice
// for a request declaring n <= 0 (skipped, as Redis does).
func (r *reader) parseMultibulk() ([][]byte, error) {
	if r.want == 0 {
		nl, ok := r.line(r.r + 1)
		if !ok {
			if r.w-r.r > maxInline {
				return nil, errTooBigMbulkCount
			}
			return nil, nil
		}
		n, ok := parseInt(r.buf[r.r+1 : nl])
		if !ok || n > maxMultibulk {
			return nil, errInvalidMbulk
		}
		if n > maxUnauthMultibulk && r.unauth {
			return nil, errUnauthMbulk
		}
		r.pos = nl + 2
		if n <= 0 {
			r.advance(r.pos)
			return [][]byte{}, nil
		}
		r.want = int(n)
		r.offs = r.offs[:0]
		if c := min(r.want, argsCap) * 2; cap(r.offs) < c {
			r.offs = make([]int, 0, c)
		}
	}
	for r.want > 0 {
		if r.pos >= r.w {
			return nil, nil
		}
		nl, ok := r.line(r.pos)
		if !ok {
			if r.w-r.pos > maxInline {
				return nil, errTooBigBulkCount
			}
			return nil, nil
		}
		if c := r.buf[r.pos]; c != '$' {
			return nil, errExpectedDollar(c)
		}
		n, ok := parseInt(r.buf[r.pos+1 : nl])
		if !ok || n < 0 || n > int64(r.maxBulk) {
			return nil, errInvalidBulk
		}
		if n > maxUnauthBulk && r.unauth {
			return nil, errUnauthBulk
		}
		start := nl + 2
		end := start + int(n)
		if end+2 > r.w {
			return nil, nil // the whole bulk and its CRLF are not here yet
		}
		r.offs = append(r.offs, start-r.r, end-r.r)
		r.pos = end + 2 // Redis skips two bytes without checking them
		r.want--
	}
	args := r.args[:0]
	for i := 0; i < len(r.offs); i += 2 {
		args = append(args, r.buf[r.r+r.offs[i]:r.r+r.offs[i+1]:r.r+r.offs[i+1]])
	}
	r.args = args
	r.advance(r.pos)
	return args, nil
}

// advance moves the start of the next request to i, forgetting the state
// of line searches.
func (r *reader) advance(i int) {
	r.r = i
	r.scanFrom, r.scanned = 0, 0
}

// parseInline parses one inline request (a line of space-separated,
// possibly quoted arguments).
func (r *reader) parseInline() ([][]byte, error) {
	nl := r.find(r.r, '\n')
	if nl < 0 {
		if r.w-r.r > maxInline {
			return nil, errTooBigInline
		}
		return nil, nil
	}
	line := r.buf[r.r:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	r.advance(nl + 1)
	if i := bytes.IndexByte(line, 0); i >= 0 {
		line = line[:i] // Redis splits the line as a C string
	}
	args, arena, ok := splitArgs(line, r.args[:0], r.inline[:0])
	r.inline = arena
	r.args = args
	if !ok {
		return nil, errUnbalancedQuotes
	}
	if len(args) == 0 {
		return [][]byte{}, nil
	}
	return args, nil
}

// fill reads more input into the buffer (see room).
func (r *reader) fill() error {
	if err := r.room(); err != nil {
		return err
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// room makes free space at the end of the buffer for the next read, first
// moving the pending request to the front or growing the buffer when it is
// full. The buffer grows only as data arrives (doubling), so memory stays
// within twice what a client sent. It returns errQueryBuffer when a
// client's pending input passed the limit.
func (r *reader) room() error {
	if r.r == r.w && r.want == 0 {
		r.advance(0)
		r.w, r.pos = 0, 0
		if len(r.buf) > shrinkAbove { // give back what a large request took
			r.buf = make([]byte, readChunk)
		}
	}
	if len(r.buf)-r.w < readChunk/4 {
		pending := r.w - r.r
		if pending > maxQueryBuffer {
			return errQueryBuffer
		}
		if r.r > 0 && pending <= len(r.buf)/2 {
			copy(r.buf, r.buf[r.r:r.w])
		} else {
			nb := make([]byte, max(2*len(r.buf), readChunk))
			copy(nb, r.buf[r.r:r.w])
			r.buf = nb
		}
		r.pos -= r.r
		r.w = pending
		r.r = 0
	}
	return nil
}
