package resp_test

import (
	"bufio"
	"bytes"
	"io"
	"testing"

	"github.com/nxkv/nxkv/resp"
)

// maxFuzzInput bounds fuzz inputs: minimizing a 70 KB input takes the
// fuzzer minutes.
const maxFuzzInput = 8 << 10

// FuzzReader feeds arbitrary bytes, in arbitrary read sizes, to the request
// parser: it must never panic, must end every input with a clean EOF or a
// protocol error, and its buffer must stay within a small multiple of what
// it was sent (a declared length never makes it allocate).
func FuzzReader(f *testing.F) {
	for _, c := range protocolCases {
		if len(c) <= maxFuzzInput {
			f.Add([]byte(c), uint8(7))
		}
	}
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), uint8(1))
	f.Add([]byte("*1\r\n$536870912\r\nabc"), uint8(255))
	f.Fuzz(func(t *testing.T, input []byte, chunk uint8) {
		if len(input) > maxFuzzInput {
			t.Skip("the 64 KB limits are covered by TestProtocolMatchesRedis; large inputs stall minimization")
		}
		_, err, maxBuf := resp.Parse(input, int(chunk)+1)
		if err != io.EOF && !resp.IsProtocolError(err) {
			t.Fatalf("Parse ended with %v, want io.EOF or a protocol error", err)
		}
		if limit := 2*len(input) + 64<<10; maxBuf > limit {
			t.Fatalf("read buffer grew to %d bytes for %d bytes of input", maxBuf, len(input))
		}
	})
}

// FuzzServer runs arbitrary input as one client connection through the
// whole dispatcher (every command, scripts, transactions): no command
// panics (the server would contain it; the fuzzer must see it), and the
// output is a sequence of well-formed RESP replies.
func FuzzServer(f *testing.F) {
	for _, c := range protocolCases {
		if len(c) <= maxFuzzInput {
			f.Add([]byte(c))
		}
	}
	for _, cmds := range [][]string{
		{"set", "k", "v", "px", "100", "get"}, {"incrbyfloat", "k", "1e10"}, {"eval", "return redis.call('get', KEYS[1])", "1", "k"},
		{"multi"}, {"exec"}, {"watch", "k"}, {"hello", "3"}, {"setrange", "k", "10", "x"}, {"keys", "*[a-"},
		{"scan", "0", "match", "k*", "count", "2"}, {"client", "setname", "x"}, {"config", "get", "*"},
		{"eval", "return {1,{2,{3}},'x',true,false,nil}", "0"}, {"copy", "k", "j", "db", "2"}, {"select", "3"},
		{"setrange", "k", "9223372036854775806", "AB"}, {"getrange", "k", "-9223372036854775808", "9223372036854775807"},
		{"incrby", "k", "-9223372036854775808"}, {"expire", "k", "9223372036854775807"}, {"copy", "k", "j", "db", "4294967296"},
	} {
		f.Add(encode(cmds))
	}
	s := resp.New(resp.Options{MaxBulkLen: 1 << 20})
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) > maxFuzzInput {
			t.Skip("large inputs stall minimization")
		}
		out := resp.Serve(s, input)
		if n := s.Stats().Panics; n > 0 {
			t.Fatalf("a command panicked on input %q", input)
		}
		br := bufio.NewReader(bytes.NewReader(out))
		for {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			if _, err := readReply(br); err != nil {
				t.Fatalf("malformed reply stream for input %q: %v\noutput %q", input, err, out)
			}
		}
	})
}
