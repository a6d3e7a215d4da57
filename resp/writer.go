package resp

// This file encodes replies in RESP2 or RESP3, and counts error replies
// by code for INFO errorstats.

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nxkv/nxkv/resp/internal/cnum"
)

// replier receives one command's reply. The writer encodes it for the
// client; inside Lua, a script replier turns it into Lua values. Aggregates
// are a header (array, mapHeader, set) followed by their elements.
type replier interface {
	simple(s string)
	// errorReply sends s, which starts with an error code ("ERR ...",
	// "WRONGTYPE ..."), and counts it in INFO errorstats.
	errorReply(s string)
	// countedErrorReply sends s without counting it: a script's error
	// that the command it called replied, counted then.
	countedErrorReply(s string)
	int(n int64)
	bulk(b []byte)
	bulkString(s string)
	// null is a missing value: RESP2's nil bulk string, RESP3's null.
	null()
	// nullArray is RESP2's nil array (an aborted EXEC), RESP3's null.
	nullArray()
	array(n int)
	// mapHeader starts n key-value pairs: a RESP3 map, a flat array of 2n
	// elements in RESP2.
	mapHeader(n int)
	// set starts n elements: a RESP3 set, an array in RESP2.
	set(n int)
	// double is a RESP3 double, a bulk string in RESP2.
	double(f float64)
	// boolean is a RESP3 boolean, the integer 1 or 0 in RESP2.
	boolean(b bool)
	// verbatim is a RESP3 verbatim string of format "txt", a bulk string in
	// RESP2.
	verbatim(s string)
	// resp3 reports whether RESP3 shapes are in use.
	resp3() bool
	// takeErrors returns the number of error replies sent since its last
	// call (for INFO commandstats).
	takeErrors() int
}

// writer buffers one connection's replies; the connection flushes it to
// the socket outside every engine critical section.
type writer struct {
	buf   []byte
	proto int         // 2 or 3
	errs  *errorStats // counts error replies; nil counts nothing
	fresh int         // error replies since the last takeErrors
}

var _ replier = (*writer)(nil)

func (w *writer) resp3() bool { return w.proto == 3 }

func (w *writer) takeErrors() int {
	n := w.fresh
	w.fresh = 0
	return n
}

func (w *writer) simple(s string) {
	w.buf = append(w.buf, '+')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) errorReply(s string) {
	if w.errs != nil {
		w.errs.count(s)
	}
	w.countedErrorReply(s)
}

func (w *writer) countedErrorReply(s string) {
	w.fresh++ // the command failed, counted or not (Redis's failed_calls)
	w.buf = append(w.buf, '-')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) int(n int64) {
	w.buf = append(w.buf, ':')
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) header(c byte, n int) {
	w.buf = append(w.buf, c)
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) bulk(b []byte) {
	w.header('$', len(b))
	w.buf = append(w.buf, b...)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) bulkString(s string) {
	w.header('$', len(s))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) null() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
	} else {
		w.buf = append(w.buf, "$-1\r\n"...)
	}
}

func (w *writer) nullArray() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
	} else {
		w.buf = append(w.buf, "*-1\r\n"...)
	}
}

func (w *writer) array(n int) { w.header('*', n) }

func (w *writer) mapHeader(n int) {
	if w.proto == 3 {
		w.header('%', n)
	} else {
		w.header('*', 2*n)
	}
}

func (w *writer) set(n int) {
	if w.proto == 3 {
		w.header('~', n)
	} else {
		w.header('*', n)
	}
}

func (w *writer) double(f float64) {
	if w.proto != 3 {
		w.bulkString(cnum.FormatDouble(f))
		return
	}
	w.buf = append(w.buf, ',')
	w.buf = append(w.buf, cnum.FormatDouble(f)...)
	w.buf = append(w.buf, '\r', '\n')
}

func (w *writer) boolean(b bool) {
	switch {
	case w.proto != 3 && b:
		w.buf = append(w.buf, ":1\r\n"...)
	case w.proto != 3:
		w.buf = append(w.buf, ":0\r\n"...)
	case b:
		w.buf = append(w.buf, "#t\r\n"...)
	default:
		w.buf = append(w.buf, "#f\r\n"...)
	}
}

func (w *writer) verbatim(s string) {
	if w.proto != 3 {
		w.bulkString(s)
		return
	}
	w.header('=', len(s)+4)
	w.buf = append(w.buf, "txt:"...)
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// maxErrorKinds is how many different error codes INFO errorstats counts
// before it stops, as Redis's ERROR_STATS_NUMBER.
const maxErrorKinds = 128

// errorStats counts error replies by their code (the first word: ERR,
// WRONGTYPE, NOSCRIPT, ...) for INFO errorstats and total_error_replies.
type errorStats struct {
	total    atomic.Int64
	mu       sync.Mutex
	byCode   map[string]int64 // guarded by mu
	disabled bool             // guarded by mu: past maxErrorKinds codes
}

// count records one error reply whose text is msg.
func (es *errorStats) count(msg string) {
	es.total.Add(1)
	// Redis looks for the space that ends the code within the first 32
	// bytes of "-CODE ...", and counts ERR when there is none.
	code := "ERR"
	if i := strings.IndexByte(msg[:min(len(msg), 31)], ' '); i >= 0 {
		code = msg[:i]
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.disabled {
		return
	}
	if _, ok := es.byCode[code]; !ok {
		if es.byCode == nil {
			es.byCode = map[string]int64{}
		}
		if len(es.byCode) >= maxErrorKinds {
			// As Redis: stop adding codes, so a client inventing error
			// texts (error_reply from scripts) cannot grow the table.
			es.byCode = map[string]int64{"ERRORSTATS_DISABLED": 1}
			es.disabled = true
			return
		}
	}
	es.byCode[code]++
}

// snapshot returns the counts by code.
func (es *errorStats) snapshot() map[string]int64 {
	es.mu.Lock()
	defer es.mu.Unlock()
	out := make(map[string]int64, len(es.byCode))
	for k, v := range es.byCode {
		out[k] = v
	}
	return out
}

// reset clears the counts (CONFIG RESETSTAT).
func (es *errorStats) reset() {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.byCode = nil
	es.disabled = false
	es.total.Store(0)
}
