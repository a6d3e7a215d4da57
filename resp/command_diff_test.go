package resp_test

// Differential tests of the command table against redis-server: what
// COMMAND INFO, DOCS and GETKEYS and INFO commandstats say of each command
// nxkv implements.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// parseReply parses one RESP2 reply into Go values: strings (simple and
// bulk), int64, nil, []any (arrays), and error values for errors.
func parseReply(b []byte) (any, error) {
	br := bufio.NewReader(bytes.NewReader(b))
	var read func() (any, error)
	read = func() (any, error) {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		body := strings.TrimSuffix(line[1:], "\r\n")
		switch line[0] {
		case '+':
			return body, nil
		case '-':
			return fmt.Errorf("%s", body), nil
		case ':':
			return strconv.ParseInt(body, 10, 64)
		case '$':
			n, _ := strconv.Atoi(body)
			if n < 0 {
				return nil, nil
			}
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(br, buf); err != nil {
				return nil, err
			}
			return string(buf[:n]), nil
		case '*':
			n, _ := strconv.Atoi(body)
			if n < 0 {
				return nil, nil
			}
			out := make([]any, n)
			for i := range out {
				if out[i], err = read(); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		return nil, fmt.Errorf("bad reply %q", line)
	}
	return read()
}

// query sends args on c and parses the reply.
func query(t *testing.T, c *rawConn, args ...string) any {
	t.Helper()
	r, err := c.do(args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	v, err := parseReply(r)
	if err != nil {
		t.Fatalf("%q: parsing %q: %v", args, r, err)
	}
	return v
}

// docFields returns the fields of a COMMAND DOCS entry (a flat RESP2 map)
// that nxkv carries as facts.
func docFields(doc any) map[string]any {
	out := map[string]any{}
	kv, _ := doc.([]any)
	for i := 0; i+1 < len(kv); i += 2 {
		switch k := kv[i].(string); k {
		case "since", "group", "doc_flags", "deprecated_since":
			out[k] = kv[i+1]
		}
	}
	return out
}

// newerThan70 reports whether since names a Redis release after 7.0, whose
// commands redis-server 7.0.15 does not have.
func newerThan70(since string) bool {
	var maj, min int
	fmt.Sscanf(since, "%d.%d", &maj, &min)
	return maj > 7 || maj == 7 && min > 0
}

// commandTableDiff compares what nxkv's COMMAND INFO and DOCS say of each
// of its commands with redis-server's and returns the differences: every
// field of COMMAND INFO but the key specifications (which nxkv does not
// describe) and, for a container, its subcommands (compared one by one);
// and DOCS's since, group, doc_flags and deprecated_since.
func commandTableDiff(t *testing.T, redisAddr, nxkvAddr string) []string {
	a, b := dialRaw(t, redisAddr), dialRaw(t, nxkvAddr)
	var diffs []string
	names := resp.CommandNames()
	for _, n := range names {
		if i := strings.IndexByte(n, '|'); i >= 0 && !slices.Contains(names, n[:i]) {
			names = append(names, n[:i])
		}
	}
	for _, name := range names {
		if name == "nxkv-test-panic" {
			continue
		}
		nd := query(t, b, "command", "docs", name).([]any)
		since, _ := docFields(nd[1])["since"].(string)
		ri := query(t, a, "command", "info", name).([]any)[0]
		if newerThan70(since) {
			if ri != nil {
				diffs = append(diffs, fmt.Sprintf("%s: since %s, but redis-server 7.0.15 has it", name, since))
			}
			continue
		}
		if ri == nil {
			diffs = append(diffs, fmt.Sprintf("%s: redis-server 7.0.15 does not have it (since %q)", name, since))
			continue
		}
		ni := query(t, b, "command", "info", name).([]any)[0]
		rv, nv := ri.([]any), ni.([]any)
		rv[8], nv[8] = nil, nil // key specifications
		if len(rv[9].([]any)) > 0 {
			rv[9], nv[9] = nil, nil // subcommands, compared by name
		}
		if !reflect.DeepEqual(rv, nv) {
			diffs = append(diffs, fmt.Sprintf("COMMAND INFO %s:\nredis-server: %v\nnxkv-server:  %v", name, rv, nv))
		}
		rd := query(t, a, "command", "docs", name).([]any)
		if rf, nf := docFields(rd[1]), docFields(nd[1]); !reflect.DeepEqual(rf, nf) {
			diffs = append(diffs, fmt.Sprintf("COMMAND DOCS %s:\nredis-server: %v\nnxkv-server:  %v", name, rf, nf))
		}
	}
	return diffs
}

// TestCommandTableMatchesRedis: every command of the table, subcommands
// included, is described as redis-server 7.0.15 describes it: arity,
// flags, key positions, ACL categories, tips (COMMAND INFO), and version,
// group and deprecation (COMMAND DOCS; COMMAND DOCS GET used to say group
// "generic"). Commands of later Redis releases must be unknown to it.
func TestCommandTableMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	for _, d := range commandTableDiff(t, rs.Addr, ns.Addr()) {
		t.Error(d)
	}
	c := dialRaw(t, ns.Addr())
	if g := docFields(query(t, c, "command", "docs", "GET").([]any)[1])["group"]; g != "string" {
		t.Errorf("COMMAND DOCS GET: group %v, want string", g)
	}
}

// TestCommandTableDiffCatchesPlantedBug: with GET declared in the group
// "generic" and without the fast flag, the comparison fails.
func TestCommandTableDiffCatchesPlantedBug(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	undo := resp.PlantCommandBug("get")
	defer undo()
	diffs := commandTableDiff(t, rs.Addr, ns.Addr())
	if len(diffs) != 2 || !strings.Contains(diffs[0], "COMMAND INFO get") || !strings.Contains(diffs[1], "COMMAND DOCS get") {
		t.Fatalf("the comparison found %q with a planted bug, want GET's INFO and DOCS", diffs)
	}
}

// TestCommandRepliesMatchRedis compares raw replies of COMMAND GETKEYS
// (keys of fixed and variable positions, scripts' numkeys, and the
// errors), COMMAND INFO of unknown names and COMMAND LIST's filters that
// select no command.
func TestCommandRepliesMatchRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	var steps []step
	for _, args := range [][]string{
		{"command", "getkeys", "get", "k"},
		{"command", "getkeys", "GET", "k"},
		{"command", "getkeys", "set", "k", "v", "get"},
		{"command", "getkeys", "mset", "a", "1", "b", "2"},
		{"command", "getkeys", "mset", "a", "1", "b"},
		{"command", "getkeys", "del", "a", "b", "c"},
		{"command", "getkeys", "rename", "a", "b"},
		{"command", "getkeys", "copy", "a", "b", "db", "1"},
		{"command", "getkeys", "sort", "abc", "store", "def"},
		{"command", "getkeys", "sort", "abc", "limit", "0", "1", "get", "store", "by", "x", "store", "y", "store", "z"},
		{"command", "getkeys", "sort_ro", "abc"},
		{"command", "getkeys", "zunionstore", "d", "2", "a", "b", "weights", "1", "2"},
		{"command", "getkeys", "zinter", "2", "a", "b"},
		{"command", "getkeys", "lmpop", "2", "a", "b", "left"},
		{"command", "getkeys", "blmpop", "0", "1", "a", "left"},
		{"command", "getkeys", "bzpopmin", "a", "b", "0"},
		{"command", "getkeys", "sintercard", "3", "a", "b"},
		{"command", "getkeys", "watch", "a", "b"},
		{"command", "getkeys", "expire", "k", "10", "nx"},
		{"command", "getkeys", "eval", "return 1", "2", "a", "b", "c"},
		{"command", "getkeys", "evalsha_ro", "x", "1", "a"},
		{"command", "getkeys", "eval", "x", "0"},
		{"command", "getkeys", "eval", "x", "5", "a"},
		{"command", "getkeys", "eval", "x", "-1", "a"},
		{"command", "getkeys", "eval", "x", "abc"},
		{"command", "getkeys", "get"},
		{"command", "getkeys", "get", "a", "b"},
		{"command", "getkeys", "ping", "x"},
		{"command", "getkeys", "keys", "*"},
		{"command", "getkeys", "client", "list"},
		{"command", "getkeys", "client", "nosuch"},
		{"command", "getkeys", "nosuch", "a"},
		{"command", "info", "nosuch", "get|x", "client|nosuch"},
		{"command", "docs", "nosuch"},
		{"command", "list", "filterby", "module", "x"},
		{"command", "list", "filterby", "aclcat", "nosuch"},
		{"command", "list", "filterby", "pattern", "nosuch*"},
		{"command", "list", "filterby", "x", "y"},
		{"command", "list", "filterby", "pattern"},
		{"command", "list", "x"},
	} {
		steps = append(steps, step{args: args})
	}
	if d := diff(t, rs.Addr, ns.Addr(), steps, false); d != "" {
		t.Fatal(d)
	}
}

// statLines returns INFO commandstats' lines without the times (usec,
// usec_per_call), sorted.
func statLines(t *testing.T, c *rawConn) []string {
	info := query(t, c, "info", "commandstats").(string)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(info), "\r\n")[1:] {
		name, fields, _ := strings.Cut(l, ":")
		var kept []string
		for _, f := range strings.Split(fields, ",") {
			if !strings.HasPrefix(f, "usec") {
				kept = append(kept, f)
			}
		}
		out = append(out, name+":"+strings.Join(kept, ","))
	}
	slices.Sort(out)
	return out
}

// TestCommandStatsMatchRedis: INFO commandstats counts calls, rejected
// calls (wrong arity, before AUTH, refused in a script, queued in a doomed
// MULTI) and failed calls (an error reply of the command's own: an error
// inside EXEC or a script counts for the command that replied it, and for
// EXEC or EVAL only when they reply an error themselves) as Redis does,
// and CONFIG RESETSTAT clears them. The comparison is shown to see one
// call more.
func TestCommandStatsMatchRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	a, b := dialRaw(t, rs.Addr), dialRaw(t, ns.Addr())
	run := [][]string{
		{"set", "s", "x"}, {"incr", "s"}, {"get"}, {"get", "a", "b"}, {"get", "s"},
		{"eval", "return redis.pcall('incr', 's')", "0"},
		{"eval", "return redis.call('incr', 's')", "0"},
		{"eval", "return redis.pcall('get')", "0"},
		{"eval", "return redis.pcall('multi')", "0"},
		{"eval_ro", "return redis.pcall('set', 'a', 'b')", "0"},
		{"eval", "return redis.call('get', 's')", "0"},
		{"multi"}, {"incr", "s"}, {"get", "s"}, {"exec"},
		{"multi"}, {"get"}, {"exec"},
		{"exec", "x"},
		{"client", "nosuch"}, {"client"}, {"client", "id", "x"}, {"nosuch"},
		{"command", "info", "get"}, {"script", "flush"},
	}
	for _, c := range []*rawConn{a, b} {
		query(t, c, "config", "resetstat")
		for _, args := range run {
			c.do(args)
		}
	}
	if sa, sb := statLines(t, a), statLines(t, b); !slices.Equal(sa, sb) {
		t.Errorf("INFO commandstats:\nredis-server: %q\nnxkv-server:  %q", sa, sb)
	}
	for _, c := range []*rawConn{a, b} {
		query(t, c, "config", "resetstat")
	}
	if sa, sb := statLines(t, a), statLines(t, b); !slices.Equal(sa, sb) || len(sb) != 1 {
		t.Errorf("after CONFIG RESETSTAT:\nredis-server: %q\nnxkv-server:  %q", sa, sb)
	}
	// The comparison sees one call more on one side.
	b.do([]string{"get", "s"})
	if sa, sb := statLines(t, a), statLines(t, b); slices.Equal(sa, sb) {
		t.Errorf("an extra GET went unseen: %q", sb)
	}
}

// TestCommandStatsBeforeAuth: a command refused before authentication
// counts as rejected, as in Redis.
func TestCommandStatsBeforeAuth(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	var got [][]string
	for _, addr := range []string{rs.Addr, ns.Addr()} {
		c := dialRaw(t, addr)
		query(t, c, "config", "set", "requirepass", "pw")
		query(t, c, "config", "resetstat")
		c = dialRaw(t, addr)
		c.do([]string{"get", "k"})
		c.do([]string{"auth", "pw"})
		got = append(got, statLines(t, c))
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("INFO commandstats:\nredis-server: %q\nnxkv-server:  %q", got[0], got[1])
	}
}
