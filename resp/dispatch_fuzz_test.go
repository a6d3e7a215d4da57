package resp_test

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nxkv/nxkv/resp"
)

// dispatchWords are the arguments the dispatcher test draws from besides
// the integer boundaries: keys, values, and the option words of Redis's
// commands.
var dispatchWords = []string{
	"k", "k", "k2", "v", "", "x", "1.5", "-inf", "inf", "nan", "1e400", "return 1", "*", "k*",
	"ex", "px", "exat", "pxat", "nx", "xx", "gt", "lt", "keepttl", "get", "persist", "count", "match",
	"type", "db", "replace", "withscores", "limit", "ifeq", "ifne", "ifdeq", "ifdne", "id", "kill",
	"setname", "on", "off", "yes", "no", "skip", "sync", "async", "rank", "maxlen", "len", "idx",
	"minmatchlen", "withmatchlen", "redirect", "bcast", "prefix", "optin", "optout", "noloop",
	"flush", "load", "exists", "help", "info", "docs", "list", "getkeys", "filterby", "pattern",
	"default", "all", "everything", "string", "left", "right", "before", "after", "byscore", "bylex",
	"rev", "weights", "aggregate", "sum", "min", "max", "incr", "ch", "channels", "numsub",
	"withvalues", "timeout", "error", "unblock", "0.01",
}

// TestDispatchIntegerBoundaries sends every command of the table, with
// random arguments in which integers at the edges of C's and Go's integer
// types (0, -1, ±2^31, ±2^32, ±2^63 and their neighbours) take every
// position, through the whole dispatcher: no command may panic (the server
// would contain it, and TestMain fails the package for it), and every reply
// must be well-formed RESP, one reply per command (the pub/sub commands
// reply once per channel, and MONITOR streams lines). Each command gets a server of its own, so one
// that changes the configuration (CONFIG SET requirepass) cannot starve
// the others.
func TestDispatchIntegerBoundaries(t *testing.T) {
	vectors := 2000
	if testing.Short() {
		vectors = 50
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range resp.CommandNames() {
		if name == "nxkv-test-panic" {
			continue // the planted command: TestPanicContained
		}
		s := resp.New(resp.Options{MaxBulkLen: 1 << 20})
		var in bytes.Buffer
		sent := 0
		for range vectors {
			args := strings.Split(name, "|")
			for range r.IntN(8) {
				if r.IntN(5) < 2 {
					args = append(args, boundaries[r.IntN(len(boundaries))])
				} else {
					args = append(args, dispatchWords[r.IntN(len(dispatchWords))])
				}
			}
			switch args[0] {
			case "quit", "reset", "hello", "auth":
				continue // they end or reset the connection, which the rest shares
			}
			if resp.Blocks(name) {
				// A blocking command runs inside MULTI, where it never
				// waits: a stream has no one to push to it.
				in.Write(encode([]string{"multi"}))
				in.Write(encode(args))
				in.Write(encode([]string{"exec"}))
				sent += 3
				continue
			}
			in.Write(encode(args))
			sent++
		}
		out := resp.Serve(s, in.Bytes())
		br := bufio.NewReader(bytes.NewReader(out))
		replies := 0
		for {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			if _, err := readReply(br); err != nil {
				t.Fatalf("%s: malformed reply stream: %v", name, err)
			}
			replies++
		}
		switch name {
		case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "monitor", "client|reply":
			// A notification per channel, monitor lines, replies turned
			// off: no count to check, only well-formed output.
		default:
			if replies != sent {
				t.Errorf("%s: %d replies to %d commands", name, replies, sent)
			}
		}
		s.Close()
		if n := s.Stats().Panics; n > 0 {
			t.Errorf("%s: %d panics", name, n)
		}
	}
}
