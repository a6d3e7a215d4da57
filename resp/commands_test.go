package resp_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/resp"
)

// TestRedis84Commands checks Redis 8.4's compare-and-set family (SET
// IFEQ/IFNE/IFDEQ/IFDNE, DELEX, DIGEST, MSETEX), which the installed
// redis-server (7.0) lacks, against Redis 8.4's documented behaviour and
// the cases of its own tests: IFEQ writes or deletes only a key holding
// the value (never creating one), IFNE a key missing or holding another
// value, the digest forms likewise by the value's digest; conditions
// exclude each other and NX/XX.
func TestRedis84Commands(t *testing.T) {
	clk := clock.NewMock() // PTTLs are exact only while time stands still
	clk.Set(time.Date(2026, 11, 27, 9, 0, 0, 500_000, time.UTC))
	s := resp.NewT(t, resp.Options{Clock: clk})
	c := dialRaw(t, s.Addr())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"set", "k", "new", "ifeq", "x"}, "$-1\r\n"}, // IFEQ never creates
		{[]string{"exists", "k"}, ":0\r\n"},
		{[]string{"set", "k", "v1", "ifne", "x"}, "+OK\r\n"}, // IFNE creates a missing key
		{[]string{"set", "k", "v2", "ifne", "v1"}, "$-1\r\n"},
		{[]string{"set", "k", "v2", "ifeq", "v1", "px", "100000", "get"}, "$2\r\nv1\r\n"},
		{[]string{"get", "k"}, "$2\r\nv2\r\n"},
		{[]string{"set", "k", "v3", "ifeq", "nope", "get"}, "$2\r\nv2\r\n"}, // GET replies the old value either way
		{[]string{"get", "k"}, "$2\r\nv2\r\n"},
		{[]string{"set", "k", "v3", "ifeq", "v2", "nx"}, "-ERR syntax error\r\n"},
		{[]string{"set", "k", "v3", "ifeq", "v2", "ifne", "v2"}, "-ERR syntax error\r\n"},
		{[]string{"set", "k", "v3", "xx", "ifne", "v2"}, "-ERR syntax error\r\n"},
		{[]string{"set", "k", "v3", "ifeq"}, "-ERR syntax error\r\n"},
		{[]string{"set", "k", "v2", "ifeq", "v2", "keepttl"}, "+OK\r\n"}, // a native lock refresh keeps the TTL here
		{[]string{"delex", "k", "ifeq", "nope"}, ":0\r\n"},
		{[]string{"delex", "k", "ifne", "v2"}, ":0\r\n"},
		{[]string{"delex", "k", "ifeq", "v2"}, ":1\r\n"},
		{[]string{"delex", "k", "ifeq", "v2"}, ":0\r\n"},
		{[]string{"set", "k", "v"}, "+OK\r\n"},
		{[]string{"delex", "k", "ifne", "w"}, ":1\r\n"},
		{[]string{"delex", "k", "ifne", "w"}, ":0\r\n"},
		{[]string{"set", "k", "v"}, "+OK\r\n"},
		{[]string{"delex", "k"}, ":1\r\n"},
		{[]string{"delex", "k"}, ":0\r\n"},
		{[]string{"delex", "k", "ifeq"}, "-ERR wrong number of arguments for 'delex' command\r\n"},
		{[]string{"delex", "k", "ifeq", "v", "extra"}, "-ERR wrong number of arguments for 'delex' command\r\n"},
		{[]string{"delex", "k", "foo", "v"}, ":0\r\n"}, // a missing key: 0 before the condition is read
		{[]string{"set", "k", "v"}, "+OK\r\n"},
		{[]string{"delex", "k", "foo", "v"}, "-ERR Invalid condition\r\n"},
		{[]string{"delex", "k", "if", "v"}, "-ERR Invalid condition\r\n"},
		{[]string{"delex"}, "-ERR wrong number of arguments for 'delex' command\r\n"},
		// DIGEST: XXH3 in 16 hex digits (the values of Redis's and Dragonfly's docs).
		{[]string{"set", "d", "Hello world"}, "+OK\r\n"},
		{[]string{"digest", "d"}, "$16\r\nb6acb9d84a38ff74\r\n"},
		{[]string{"set", "d", "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd"}, "+OK\r\n"},
		{[]string{"digest", "d"}, "$16\r\n00006c38adf31777\r\n"}, // leading zeros kept
		{[]string{"digest", "nokey"}, "$-1\r\n"},
		{[]string{"digest"}, "-ERR wrong number of arguments for 'digest' command\r\n"},
		{[]string{"set", "d", "hello"}, "+OK\r\n"},
		{[]string{"set", "d", "w", "ifdeq", "9555E8555C62DCFD", "get"}, "$5\r\nhello\r\n"}, // any case
		{[]string{"get", "d"}, "$1\r\nw\r\n"},
		{[]string{"set", "d", "x", "ifdeq", "9555e8555c62dcfd"}, "$-1\r\n"},
		{[]string{"set", "d", "x", "ifdne", "9555e8555c62dcfd", "px", "100000"}, "+OK\r\n"},
		{[]string{"set", "d", "y", "ifdne", "9555e8555c62dcf"}, "-ERR must be exactly 16 hexadecimal characters\r\n"},
		{[]string{"set", "d", "y", "ifdeq", ""}, "-ERR must be exactly 16 hexadecimal characters\r\n"},
		{[]string{"set", "d", "y", "ifdeq", "x", "nx"}, "-ERR syntax error\r\n"},
		{[]string{"set", "d", "y", "ifdeq", "x", "ifdne", "y"}, "-ERR syntax error\r\n"},
		{[]string{"set", "nod", "y", "ifdeq", "1234567890"}, "$-1\r\n"}, // a missing key's digest is not checked
		{[]string{"set", "nod", "y", "ifdne", "1234567890"}, "+OK\r\n"},
		{[]string{"delex", "nod", "ifdeq", "123"}, "-ERR must be exactly 16 hexadecimal characters\r\n"},
		{[]string{"delex", "nod", "ifdne", "9ec9f7918d7dfc40"}, ":1\r\n"},
		{[]string{"delex", "nod", "ifdeq", "123"}, ":0\r\n"},
		{[]string{"set", "d", "test"}, "+OK\r\n"},
		{[]string{"delex", "d", "ifdne", "9ec9f7918d7dfc40"}, ":0\r\n"},
		{[]string{"delex", "d", "ifdeq", "9EC9F7918D7DFC40"}, ":1\r\n"},
		// MSETEX: all or none, one expiration, options in any order.
		{[]string{"msetex", "2", "m1", "a", "m2", "b", "px", "100000", "nx"}, ":1\r\n"},
		{[]string{"pttl", "m2"}, ":100000\r\n"},
		{[]string{"msetex", "2", "m1", "x", "m3", "y", "nx", "ex", "10"}, ":0\r\n"},
		{[]string{"exists", "m3"}, ":0\r\n"},
		{[]string{"msetex", "2", "m1", "x", "m3", "y", "xx"}, ":0\r\n"},
		{[]string{"msetex", "1", "m1", "x", "keepttl", "xx"}, ":1\r\n"},
		{[]string{"get", "m1"}, "$1\r\nx\r\n"},
		{[]string{"pttl", "m1"}, ":100000\r\n"},
		{[]string{"msetex", "1", "m1", "z"}, ":1\r\n"},
		{[]string{"pttl", "m1"}, ":-1\r\n"},
		{[]string{"msetex"}, "-ERR wrong number of arguments for 'msetex' command\r\n"},
		{[]string{"msetex", "k1", "v1", "ex", "10"}, "-ERR invalid numkeys value\r\n"},
		{[]string{"msetex", "0", "k1", "v1"}, "-ERR invalid numkeys value\r\n"},
		{[]string{"msetex", "2147483648", "k1", "v1", "ex", "10"}, "-ERR invalid numkeys value\r\n"},
		{[]string{"msetex", "2147483647", "k1", "v1", "ex", "10"}, "-ERR wrong number of key-value pairs\r\n"},
		{[]string{"msetex", "2", "k1", "v1", "k2"}, "-ERR wrong number of key-value pairs\r\n"},
		{[]string{"msetex", "1", "k1", "v1", "invalid_flag"}, "-ERR syntax error\r\n"},
		{[]string{"msetex", "1", "k1", "v1", "nx", "xx"}, "-ERR syntax error\r\n"},
		{[]string{"msetex", "1", "k1", "v1", "ex", "10", "px", "5000"}, "-ERR syntax error\r\n"},
		{[]string{"msetex", "1", "k1", "v1", "keepttl", "ex", "10"}, "-ERR syntax error\r\n"},
		{[]string{"msetex", "1", "k1", "v1", "ex"}, "-ERR syntax error\r\n"},
		{[]string{"msetex", "1", "k1", "v1", "ex", "0"}, "-ERR invalid expire time in 'msetex' command\r\n"},
		{[]string{"exists", "k1"}, ":0\r\n"},
		{[]string{"flushall"}, "+OK\r\n"},
		{[]string{"client", "setinfo", "lib-name", "go-redis"}, "+OK\r\n"},
		{[]string{"client", "setinfo", "lib-ver", "9 x"}, "-ERR lib-ver cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"client", "setinfo", "foo", "x"}, "-ERR Unrecognized option 'foo'\r\n"},
		{[]string{"dbsize"}, ":0\r\n"},
		{[]string{"set", "a", "1"}, "+OK\r\n"},
		{[]string{"set", "b", "1", "px", "100000"}, "+OK\r\n"},
		{[]string{"dbsize"}, ":2\r\n"},
		{[]string{"pexpireat", "b", "99999999999999"}, "-ERR expire time beyond the year 2262 is not supported\r\n"},
		{[]string{"pexpireat", "nokey", "99999999999999"}, ":0\r\n"}, // Redis's exact reply when it does not depend on the range
		{[]string{"set", "c", "1", "pxat", "99999999999999"}, "-ERR expire time beyond the year 2262 is not supported\r\n"},
	} {
		got, err := c.do(tc.args)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}
