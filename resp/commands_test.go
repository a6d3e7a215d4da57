package resp_test

import (
	"testing"

	"github.com/nxkv/nxkv/resp"
)

// TestRedis84Commands checks SET IFEQ/IFNE and DELEX, which the installed
// redis-server (7.0) lacks, against Redis 8.4's documented behaviour:
// IFEQ writes or deletes only a key holding the value (never creating
// one), IFNE a key missing or holding another value; conditions exclude
// each other and NX/XX.
func TestRedis84Commands(t *testing.T) {
	s := resp.RunT(t)
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
		{[]string{"delex", "k", "ifeq"}, "-ERR syntax error\r\n"},
		{[]string{"delex", "k", "foo", "v"}, "-ERR syntax error\r\n"},
		{[]string{"delex"}, "-ERR wrong number of arguments for 'delex' command\r\n"},
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
