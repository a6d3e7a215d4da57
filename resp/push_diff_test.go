package resp_test

// Differential tests of what the server pushes, against redis-server:
// several connections to each server, in RESP2 and RESP3, run the same
// steps (subscribes and publishes from clients and Lua, client-side caching
// in every mode with reads and writes, keyspace notifications with expiry,
// MONITOR), and after each step every connection's received bytes are
// compared. A step is sent on one connection followed by a PING with a
// unique marker, and every other connection is then sent such a PING: what
// a connection reads up to its marker's reply is what the step made it
// receive, on both servers alike (each server queues what it pushes before
// it replies to the command that caused it). Only what cannot agree is
// normalized: MONITOR's timestamps and client addresses, client ids, and
// the orders Redis takes from its hash tables (UNSUBSCRIBE without
// arguments, a message matching several patterns, PUBSUB CHANNELS).

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// pconn is one raw connection of a push test.
type pconn struct {
	nc     net.Conn
	br     *bufio.Reader
	proto  int
	addr   string // its address as the server sees it
	closed bool
}

// pushSide is one server of a push test: its connections, their client ids
// and a control connection (for polling during expiry).
type pushSide struct {
	name  string
	addr  string
	conns []*pconn
	ids   []int64
	ctl   *pconn
	ctlAt string
}

// pushPair runs steps on redis-server and nxkv-server side by side.
type pushPair struct {
	t     testing.TB
	sides [2]*pushSide
	n     int // steps run, for markers
	log   []string
}

// pushStep is one step: commands sent (pipelined) on one connection.
type pushStep struct {
	conn int
	cmds [][]string
	// ids: the replies carry client ids (CLIENT ID, GETREDIR, TRACKINGINFO).
	ids bool
	// unsubAll: an UNSUBSCRIBE family command without arguments, whose
	// notifications come in the order of the server's hash table.
	unsubAll bool
	// sorted: a reply listing channels in the server's order.
	sorted bool
	// expire: after the commands, wait until this key is gone on both
	// servers (it was given a short TTL): its "expired" notification and
	// invalidations then land in this step.
	expire string
	// close: close the connection instead of sending commands, and wait
	// until the server has let it go.
	close bool
}

func (st pushStep) String() string {
	var parts []string
	for _, c := range st.cmds {
		parts = append(parts, fmt.Sprintf("%q", c))
	}
	s := fmt.Sprintf("conn %d: %s", st.conn, strings.Join(parts, " "))
	if st.expire != "" {
		s += " (then wait for " + st.expire + " to expire)"
	}
	return s
}

// newPushPair starts redis-server and nxkv-server and connects protos[i]
// (2 or 3) to each, in the same order, so the connections' positions match.
func newPushPair(t testing.TB, ns *resp.Server, protos ...int) *pushPair {
	t.Helper()
	rs := redistest.Start(t)
	p := &pushPair{t: t}
	for i, addr := range []string{rs.Addr, ns.Addr()} {
		side := &pushSide{name: []string{"redis-server", "nxkv-server"}[i], addr: addr}
		for _, proto := range protos {
			c := p.dial(addr)
			c.proto = proto
			side.conns = append(side.conns, c)
		}
		side.ctl = p.dial(addr)
		for _, c := range append(slices.Clone(side.conns), side.ctl) {
			info := string(p.do(c, "client", "info"))
			m := regexp.MustCompile(`id=(\d+) addr=(\S+)`).FindStringSubmatch(info)
			if m == nil {
				t.Fatalf("%s: CLIENT INFO = %q", side.name, info)
			}
			id, _ := strconv.ParseInt(m[1], 10, 64)
			c.addr = m[2]
			if c == side.ctl {
				side.ctlAt = m[2]
			} else {
				side.ids = append(side.ids, id)
			}
			if c.proto == 3 {
				p.do(c, "hello", "3")
			}
		}
		p.do(side.ctl, "config", "set", "notify-keyspace-events", "")
		p.do(side.ctl, "flushall")
		p.sides[i] = side
	}
	return p
}

func (p *pushPair) dial(addr string) *pconn {
	p.t.Helper()
	c := dialP(p.t, addr)
	c.proto = 2
	return c
}

// do sends one command and reads one reply (for setup, where nothing is
// pushed).
func (p *pushPair) do(c *pconn, args ...string) []byte {
	p.t.Helper()
	_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(encode(args)); err != nil {
		p.t.Fatal(err)
	}
	r, err := readReply(c.br)
	if err != nil {
		p.t.Fatalf("%q: %v", args, err)
	}
	return r
}

// resolve replaces "{id:N}" in args with side's id of connection N.
func (side *pushSide) resolve(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "{id:") && strings.HasSuffix(a, "}") {
			n, _ := strconv.Atoi(a[4 : len(a)-1])
			if n < len(side.ids) {
				a = strconv.FormatInt(side.ids[n], 10)
			} else {
				a = "999999"
			}
		}
		out[i] = a
	}
	return out
}

// sync sends cmds (if any) and a marked PING on c, and returns the frames c
// read up to the PING's reply.
func (p *pushPair) sync(c *pconn, mark string, cmds [][]string) ([][]byte, error) {
	var out bytes.Buffer
	for _, cmd := range cmds {
		out.Write(encode(cmd))
	}
	out.Write(encode([]string{"ping", mark}))
	_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(out.Bytes()); err != nil {
		return nil, err
	}
	plain := fmt.Sprintf("$%d\r\n%s\r\n", len(mark), mark)
	pong := "*2\r\n$4\r\npong\r\n" + plain
	var frames [][]byte
	for {
		fs, err := redistest.ReadFrames(c.br)
		if err != nil {
			return frames, err
		}
		for _, f := range fs {
			if s := string(f); s == plain || s == pong {
				return frames, nil
			}
			frames = append(frames, f)
		}
	}
}

// run runs steps and fails the test at the first difference.
func (p *pushPair) run(steps []pushStep) {
	p.t.Helper()
	for _, st := range steps {
		if d := p.step(st); d != "" {
			p.t.Fatal(d)
		}
	}
}

// step runs st on both servers and returns a description of the first
// difference, or "".
func (p *pushPair) step(st pushStep) string {
	p.n++
	var got [2][][][]byte
	for i, side := range p.sides {
		got[i] = make([][][]byte, len(side.conns))
		if st.close {
			if msg := p.closeConn(side, st.conn); msg != "" {
				return msg
			}
			continue
		}
		var cmds [][]string
		for _, c := range st.cmds {
			cmds = append(cmds, side.resolve(c))
		}
		f, err := p.sync(side.conns[st.conn], fmt.Sprintf("mk-%d-%d", p.n, st.conn), cmds)
		if err != nil {
			return fmt.Sprintf("%s: %v: %v", side.name, st, err)
		}
		got[i][st.conn] = p.normalize(side, st, f, true)
		if st.expire != "" {
			if msg := p.waitGone(side, st.expire); msg != "" {
				return msg
			}
		}
		for j, c := range side.conns {
			if j == st.conn && st.expire == "" || c.closed {
				continue
			}
			f, err := p.sync(c, fmt.Sprintf("mk-%d-%d", p.n, j), nil)
			if err != nil {
				return fmt.Sprintf("%s: sync of conn %d after %v: %v", side.name, j, st, err)
			}
			got[i][j] = append(got[i][j], p.normalize(side, st, f, false)...)
		}
	}
	p.log = append(p.log, st.String())
	if len(p.log) > 12 && os.Getenv("NXKV_DIFF_STREAM") == "" {
		p.log = p.log[1:]
	}
	for j := range got[0] {
		a, b := bytes.Join(got[0][j], nil), bytes.Join(got[1][j], nil)
		if !bytes.Equal(a, b) {
			return fmt.Sprintf("after step %v\nconnection %d (RESP%d) received\nredis-server: %q\nnxkv-server:  %q\nrecent steps:\n  %s",
				st, j, p.sides[0].conns[j].proto, a, b, strings.Join(p.log, "\n  "))
		}
	}
	return ""
}

// closeConn closes side's connection i and waits until the server no
// longer lists it.
func (p *pushPair) closeConn(side *pushSide, i int) string {
	c := side.conns[i]
	c.nc.Close()
	c.closed = true
	id := "id=" + strconv.FormatInt(side.ids[i], 10) + " "
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !strings.Contains(string(p.do(side.ctl, "client", "list")), id) {
			return ""
		}
		time.Sleep(time.Millisecond) // real time: the servers close on their own
	}
	return side.name + ": connection " + strconv.Itoa(i) + " still listed 5 s after it closed"
}

// waitGone polls side until key is gone (its TTL ran out), through the
// control connection, which MONITOR's normalization leaves out. It polls
// with RENAME key key, which changes nothing while the key lives and,
// unlike a read, publishes no keymiss once it is gone.
func (p *pushPair) waitGone(side *pushSide, key string) string {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if string(p.do(side.ctl, "rename", key, key)) == "-ERR no such key\r\n" {
			return ""
		}
		time.Sleep(2 * time.Millisecond) // real time: redis-server has no other clock
	}
	return side.name + ": " + key + " did not expire within 5 s"
}

var (
	monitorLine = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) ([^\]]+)\] (.*)\r\n$`)
	redirectArg = regexp.MustCompile(`("(?i:redirect)" ")(\d+)"`)
	idField     = regexp.MustCompile(`^:(-?\d+)\r\n$|(\$2\r\nid\r\n|\$8\r\nredirect\r\n):(-?\d+)\r\n`)
	redirBroken = regexp.MustCompile(`^(>2\r\n\$21\r\ntracking-redir-broken\r\n:)(\d+)\r\n$`)
	subFrame    = regexp.MustCompile(`^([*>])3\r\n\$(\d+)\r\n([a-z]+)\r\n(\$-1\r\n|_\r\n|\$\d+\r\n[^\r]*\r\n)(:\d+\r\n)$`)
	pmsgFrame   = regexp.MustCompile(`^[*>]4\r\n\$8\r\npmessage\r\n\$\d+\r\n([^\r]*)\r\n(\$\d+\r\n[^\r]*\r\n\$\d+\r\n[^\r]*\r\n)$`)
)

// normalize rewrites what cannot agree between the two servers; own marks
// the frames of the connection that sent the step.
func (p *pushPair) normalize(side *pushSide, st pushStep, frames [][]byte, own bool) [][]byte {
	var out [][]byte
	for _, f := range frames {
		s := string(f)
		if m := monitorLine.FindStringSubmatch(s); m != nil {
			who := "other"
			switch {
			case m[2] == "lua":
				who = "lua"
			case m[2] == side.ctlAt:
				continue // the control connection's polling
			default:
				for i, c := range side.conns {
					if c.addr == m[2] {
						who = "c" + strconv.Itoa(i)
					}
				}
			}
			rest := redirectArg.ReplaceAllStringFunc(m[3], func(x string) string {
				n := redirectArg.FindStringSubmatch(x)
				return n[1] + side.idName(n[2]) + `"`
			})
			s = "+T [" + m[1] + " " + who + "] " + rest + "\r\n"
		}
		if m := redirBroken.FindStringSubmatch(s); m != nil {
			s = m[1] + side.idName(m[2]) + "\r\n"
		}
		if own && st.ids {
			s = idField.ReplaceAllStringFunc(s, func(x string) string {
				m := idField.FindStringSubmatch(x)
				if m[1] != "" {
					return ":" + side.idName(m[1]) + "\r\n"
				}
				return m[2] + ":" + side.idName(m[3]) + "\r\n"
			})
		}
		out = append(out, []byte(s))
	}
	if own && st.sorted {
		for i, f := range out {
			out[i] = []byte(sortedElems(f))
		}
	}
	if own && st.unsubAll {
		sortRuns(out, func(f []byte) (string, bool) {
			m := subFrame.FindSubmatch(f)
			if m == nil || !strings.HasSuffix(string(m[3]), "unsubscribe") {
				return "", false
			}
			return string(m[4]), true
		}, func(f []byte, name string) []byte {
			m := subFrame.FindSubmatch(f)
			return []byte(string(m[1]) + "3\r\n$" + string(m[2]) + "\r\n" + string(m[3]) + "\r\n" + name + string(m[5]))
		})
	}
	// A message matching several patterns comes once per pattern, in the
	// order of the server's table of patterns.
	for i := 0; i < len(out); {
		m := pmsgFrame.FindSubmatch(out[i])
		j := i + 1
		for m != nil && j < len(out) {
			n := pmsgFrame.FindSubmatch(out[j])
			if n == nil || !bytes.Equal(n[2], m[2]) {
				break
			}
			j++
		}
		if j-i > 1 {
			slices.SortFunc(out[i:j], bytes.Compare)
		}
		i = j
	}
	return out
}

// idName names client id n as the connection it belongs to.
func (side *pushSide) idName(n string) string {
	id, _ := strconv.ParseInt(n, 10, 64)
	for i, x := range side.ids {
		if x == id {
			return "ID" + strconv.Itoa(i)
		}
	}
	return n
}

// sortRuns sorts, within each run of consecutive frames that key reports,
// their keys, leaving the rest of each frame in place (the counts of
// unsubscribe notifications).
func sortRuns(frames [][]byte, key func([]byte) (string, bool), with func([]byte, string) []byte) {
	for i := 0; i < len(frames); {
		_, ok := key(frames[i])
		j := i
		var names []string
		for j < len(frames) {
			n, ok2 := key(frames[j])
			if !ok2 {
				break
			}
			names = append(names, n)
			j++
		}
		if !ok {
			i++
			continue
		}
		slices.Sort(names)
		for k := i; k < j; k++ {
			frames[k] = with(frames[k], names[k-i])
		}
		i = j
	}
}

// pushCases are the steps every feature's scenario runs, in order.
func pushScenario(name string) []pushStep {
	s := func(conn int, args ...string) pushStep { return pushStep{conn: conn, cmds: [][]string{args}} }
	tx := func(conn int, cmds ...[]string) pushStep {
		return pushStep{conn: conn, cmds: append(append([][]string{{"multi"}}, cmds...), []string{"exec"})}
	}
	c := func(args ...string) []string { return args }
	switch name {
	case "pubsub":
		return []pushStep{
			s(0, "subscribe", "ch1", "ch2"), s(1, "psubscribe", "ch*", "*2"), s(2, "ssubscribe", "sh1"),
			s(3, "publish", "ch1", "hello"), s(3, "publish", "ch2", "two"), s(3, "spublish", "sh1", "shard"),
			s(0, "publish", "ch2", "self"), s(1, "publish", "ch1", "self-pattern"),
			s(3, "eval", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "ch1", "from-lua"),
			s(0, "get", "k"), s(0, "ping"), s(0, "ping", "x"), s(1, "set", "k", "v"),
			{conn: 3, cmds: [][]string{{"pubsub", "channels"}}, sorted: true},
			{conn: 3, cmds: [][]string{{"pubsub", "channels", "ch*"}}, sorted: true},
			s(3, "pubsub", "numsub", "ch1", "ch2", "nope"), s(3, "pubsub", "numpat"),
			s(3, "pubsub", "shardnumsub", "sh1"), s(3, "pubsub", "shardchannels"),
			s(0, "unsubscribe", "ch1", "nope"), s(3, "publish", "ch1", "after"),
			{conn: 1, cmds: [][]string{{"punsubscribe"}}, unsubAll: true},
			{conn: 0, cmds: [][]string{{"unsubscribe"}}, unsubAll: true},
			{conn: 0, cmds: [][]string{{"unsubscribe"}}, unsubAll: true},
			s(0, "get", "k"), s(2, "sunsubscribe"), s(2, "sunsubscribe", "x"),
			tx(3, c("subscribe", "m1"), c("ssubscribe", "m2")),
			s(3, "reset"), s(3, "publish", "m1", "gone"),
			s(3, "pubsub", "foo"), s(3, "pubsub", "channels", "a", "b"), s(3, "pubsub", "help"),
			// CLIENT REPLY silences replies, never pushes.
			s(0, "client", "reply", "bogus"),
			{conn: 0, cmds: [][]string{{"client", "reply", "skip"}, {"subscribe", "r1"}, {"get", "k"}}},
			{conn: 0, cmds: [][]string{{"client", "reply", "off"}, {"get", "k"}, {"psubscribe", "r*"}, {"nosuch"},
				{"client", "reply", "skip"}, {"ping"}, {"client", "reply", "on"}, {"ping"}}},
			s(3, "publish", "r1", "m"),
			{conn: 2, cmds: [][]string{{"hello", "3"}, {"client", "reply", "off"}, {"subscribe", "r2"}, {"set", "k", "v"},
				{"publish", "r2", "own"}, {"reset"}}, ids: true},
			{conn: 1, cmds: [][]string{{"client", "reply", "off"}, {"client", "reply", "skip"}, {"get", "k"}, {"client", "reply", "on"}}},
		}
	case "tracking":
		return []pushStep{
			// Tracking turned on and off inside transactions, on a server
			// that tracks nothing yet (the change feed's listener cannot be
			// installed while the transaction holds the shards).
			tx(0, c("client", "tracking", "on"), c("get", "kt"), c("set", "kt", "own")), s(0, "get", "kt"),
			s(3, "set", "kt", "1"), tx(0, c("client", "tracking", "off")), s(0, "get", "kt"), s(3, "set", "kt", "2"),
			s(0, "client", "tracking", "on"), s(0, "get", "k1"), s(0, "mget", "k1", "k2"),
			s(3, "set", "k1", "a"), s(3, "set", "k1", "b"), s(0, "get", "k1"), s(0, "set", "k1", "own"),
			s(0, "get", "k1"), s(0, "client", "tracking", "on", "noloop"), s(0, "get", "k1"), s(0, "set", "k1", "noloop"),
			s(3, "set", "k1", "other"),
			// Typed reads are tracked, typed writes invalidate.
			s(0, "hget", "th", "f"), s(0, "lrange", "tl", "0", "-1"), s(0, "sismember", "ts", "a"), s(0, "zscore", "tz", "m"),
			s(0, "hgetall", "th2"), s(0, "zunion", "2", "tz", "tz2"), s(0, "sort_ro", "tl"), s(0, "hget", "k1", "f"),
			s(3, "hset", "th", "f", "v"), s(3, "rpush", "tl", "a"), s(3, "sadd", "ts", "a"), s(3, "zadd", "tz", "1", "m"),
			s(3, "zadd", "tz2", "1", "m"), s(3, "hset", "th2", "a", "1"), s(3, "set", "k1", "again"),
			s(0, "hget", "th", "f"), s(0, "llen", "tl"), s(0, "scard", "ts"), s(0, "zrange", "tz", "0", "-1"),
			s(0, "hdel", "th", "f"), s(3, "lpop", "tl"), s(3, "srem", "ts", "a"), s(3, "zincrby", "tz", "1", "m"),
			s(0, "llen", "tl"), s(3, "lmove", "tl2", "tl", "left", "right"), s(3, "rpush", "tl2", "b"),
			s(3, "lmove", "tl2", "tl", "left", "right"),
			{conn: 1, cmds: [][]string{{"client", "id"}}, ids: true},
			s(2, "subscribe", "__redis__:invalidate"),
			s(1, "client", "tracking", "on", "redirect", "{id:2}"), s(1, "get", "k2"), s(3, "set", "k2", "x"),
			{conn: 1, cmds: [][]string{{"client", "getredir"}}, ids: true},
			{conn: 1, cmds: [][]string{{"client", "trackinginfo"}}, ids: true},
			s(1, "client", "tracking", "on", "redirect", "999999"), s(1, "client", "tracking", "on", "bogus"),
			s(1, "client", "tracking", "on", "prefix", "a"), s(1, "client", "tracking", "on", "optin", "optout"),
			s(1, "client", "tracking", "off"), s(1, "client", "tracking", "on", "bcast", "prefix", "k", "prefix", "x"),
			s(1, "client", "tracking", "on", "bcast", "prefix", "kk"),
			s(3, "mset", "k1", "1", "k2", "2", "other", "3"), s(3, "set", "x1", "1"),
			s(3, "hset", "kkh", "f", "1"), s(3, "rpush", "kkl", "a"), s(3, "sadd", "xs", "a"), s(3, "zadd", "kz", "1", "a"),
			{conn: 1, cmds: [][]string{{"client", "trackinginfo"}}, ids: true},
			// Tracking off ends CLIENT CACHING, and a flush forgets the keys
			// of clients no longer tracking.
			s(0, "client", "tracking", "off"), s(0, "client", "tracking", "on", "optin"), s(0, "client", "caching", "yes"),
			s(0, "client", "tracking", "off"), s(0, "client", "tracking", "on", "optout"),
			{conn: 0, cmds: [][]string{{"client", "trackinginfo"}}, ids: true},
			s(0, "client", "tracking", "off"), s(0, "client", "tracking", "on"), s(0, "get", "kf"), s(0, "client", "tracking", "off"),
			s(3, "flushall"), s(0, "client", "tracking", "on"), s(3, "set", "kf", "1"),
			s(0, "client", "tracking", "off"), s(0, "client", "tracking", "on", "optin"), s(0, "get", "k1"),
			s(0, "client", "caching", "yes"), s(0, "get", "k1"), s(3, "del", "k1"),
			s(0, "client", "caching", "no"), s(0, "client", "tracking", "off"),
			s(0, "client", "tracking", "on", "optout"), s(0, "client", "caching", "no"), s(0, "get", "k3"),
			s(0, "get", "k4"), s(3, "mset", "k3", "1", "k4", "1"),
			tx(0, c("get", "k5"), c("set", "k5", "own")),
			s(0, "eval", "redis.call('get', KEYS[1]); return redis.call('set', KEYS[1], 'x')", "1", "k6"),
			s(0, "get", "k6"), s(3, "flushall"), s(0, "get", "k7"), s(0, "flushdb"),
			{conn: 0, cmds: [][]string{{"get", "k8"}, {"client", "reply", "off"}, {"set", "k8", "own"}, {"get", "k8"},
				{"client", "reply", "skip"}, {"set", "k8", "again"}, {"client", "reply", "on"}}},
			s(0, "client", "tracking", "off"), s(2, "unsubscribe"), s(1, "get", "kx"),
			s(0, "client", "caching", "yes"),
			// A redirection to a client that left: tracking-redir-broken.
			s(1, "client", "tracking", "off"), s(1, "client", "tracking", "on", "redirect", "{id:4}"),
			s(1, "get", "kb"), {conn: 4, close: true}, s(3, "set", "kb", "1"),
			{conn: 1, cmds: [][]string{{"client", "trackinginfo"}}, ids: true}, s(1, "get", "kb"), s(3, "set", "kb", "2"),
		}
	case "keyspace":
		return []pushStep{
			s(0, "psubscribe", "__key*__:*"),
			tx(3, c("config", "set", "notify-keyspace-events", "KEA"), c("set", "first", "1")),
			s(1, "subscribe", "__keyevent@0__:expired", "__keyspace@1__:k"),
			s(3, "set", "k", "v"), s(3, "append", "k", "w"), s(3, "setrange", "k", "1", "zz"), s(3, "incr", "n"),
			s(3, "incrbyfloat", "f", "1.5"), s(3, "rename", "k", "k2"), s(3, "copy", "k2", "k3"),
			s(3, "move", "k3", "1"), s(3, "expire", "k2", "100"), s(3, "persist", "k2"), s(3, "getex", "k2", "ex", "100"),
			s(3, "getdel", "k2"), s(3, "getset", "g", "1"), s(3, "mset", "a", "1", "b", "2"), s(3, "del", "a", "b", "c"),
			s(3, "set", "s", "1", "px", "100000"), s(3, "set", "s", "2", "keepttl"),
			s(3, "setnx", "s", "3"), s(3, "pexpire", "s", "-1"), s(3, "swapdb", "0", "1"), s(3, "swapdb", "0", "1"),
			s(3, "eval", "redis.call('set', KEYS[1], '1'); return redis.call('incrby', KEYS[1], 2)", "1", "lua"),
			tx(3, c("set", "t", "1"), c("del", "t")),
			// The typed commands' events, as their t_*.c name them.
			s(3, "hset", "h", "f", "1", "g", "2"), s(3, "hsetnx", "h", "n", "1"), s(3, "hincrby", "h", "f", "2"),
			s(3, "hincrbyfloat", "h", "f", "0.5"), s(3, "hdel", "h", "f", "g", "n"), s(3, "hmset", "h2", "a", "1"),
			s(3, "rpush", "l", "a", "b", "c"), s(3, "lpush", "l", "z"), s(3, "linsert", "l", "before", "a", "x"),
			s(3, "lset", "l", "0", "y"), s(3, "lrem", "l", "1", "x"), s(3, "ltrim", "l", "0", "2"), s(3, "lpop", "l"),
			s(3, "rpop", "l", "5"), s(3, "rpushx", "l", "a"), s(3, "rpush", "l2", "1", "2", "3"),
			s(3, "lmove", "l2", "l3", "left", "right"), s(3, "rpoplpush", "l2", "l3"), s(3, "blpop", "l3", "0"),
			s(3, "blmove", "l2", "l3", "right", "left", "0"), s(3, "lmpop", "2", "nol", "l3", "left", "count", "5"),
			s(3, "sadd", "s1", "1", "2", "3"), s(3, "srem", "s1", "3"), s(3, "smove", "s1", "s2", "1"),
			s(3, "sadd", "s3", "2", "5"), s(3, "sinterstore", "s4", "s1", "s3"), s(3, "sunionstore", "s5", "s1", "s3"),
			s(3, "sdiffstore", "s6", "s1", "s3"), s(3, "sinterstore", "s7", "s1", "nos"), s(3, "spop", "s2"),
			s(3, "zadd", "z", "1", "a", "2", "b", "3", "c"), s(3, "zincrby", "z", "1", "a"), s(3, "zadd", "z", "incr", "1", "c"),
			s(3, "zrem", "z", "b"), s(3, "zremrangebyscore", "z", "0", "1"), s(3, "zadd", "z", "5", "d", "6", "e"),
			s(3, "zremrangebyrank", "z", "0", "0"), s(3, "zpopmin", "z"), s(3, "zpopmax", "z"), s(3, "bzpopmin", "z", "0"),
			s(3, "zadd", "z2", "1", "a", "2", "b"), s(3, "zunionstore", "z3", "1", "z2"), s(3, "zinterstore", "z4", "2", "z2", "z3"),
			s(3, "zdiffstore", "z7", "1", "z2"), s(3, "zrangestore", "z5", "z2", "0", "-1"), s(3, "zremrangebylex", "z3", "-", "+"),
			s(3, "zmpop", "1", "z2", "min"), s(3, "sort", "s5", "store", "ls"), s(3, "sort", "nos", "store", "ls"),
			s(3, "rename", "z5", "z6"), s(3, "copy", "z6", "z8"), s(3, "move", "z8", "1"), s(3, "expire", "z6", "100"),
			s(3, "del", "s4", "l3", "h2"), s(3, "set", "h", "str"),
			s(3, "eval", "redis.call('hset', KEYS[1], 'a', '1'); return redis.call('lpush', KEYS[2], 'x')", "2", "lh", "ll"),
			{conn: 3, cmds: [][]string{{"rpush", "le", "a"}, {"pexpire", "le", "20"}}, expire: "le"},
			s(3, "flushall"),
			{conn: 3, cmds: [][]string{{"set", "e", "v", "px", "20"}}, expire: "e"},
			{conn: 3, cmds: [][]string{{"set", "e2", "v"}, {"pexpire", "e2", "20"}}, expire: "e2"},
			{conn: 2, cmds: [][]string{{"hello", "3"}}, ids: true}, s(2, "psubscribe", "__keyevent@*"), s(2, "set", "self", "1"), s(2, "get", "self"),
			s(3, "config", "set", "notify-keyspace-events", "Em$"), s(3, "get", "nokey"), s(3, "mget", "k", "nokey"),
			s(3, "set", "x", "1", "get"), s(3, "getset", "y", "1"), s(3, "exists", "z", "x"),
			s(3, "hget", "nokey", "f"), s(3, "llen", "nokey"), s(3, "smembers", "nokey"), s(3, "zscore", "nokey", "m"),
			s(3, "hgetall", "nokey"), s(3, "lrange", "nokey", "0", "1"), s(3, "hget", "x", "f"), s(3, "type", "nokey"),
			s(3, "rpush", "tl", "a"), s(3, "lindex", "tl", "0"), s(3, "lpop", "nokey"), s(3, "sinter", "nokey", "tl"),
			s(3, "zunion", "2", "nokey", "noz"), s(3, "sort_ro", "nokey"), s(3, "hexists", "nokey", "f"),
			s(3, "getbit", "nokey", "0"), s(3, "bitcount", "nokey"), s(3, "bitpos", "nokey", "1"), s(3, "getrange", "nokey", "0", "1"),
			s(3, "dump", "nokey"), s(3, "bitop", "and", "bd", "nokey", "noz"), s(3, "bitfield_ro", "nokey", "get", "u8", "0"),
			s(3, "config", "set", "notify-keyspace-events", "Kgn"), s(3, "set", "new", "1"), s(3, "set", "new", "2"),
			s(3, "config", "set", "notify-keyspace-events", "Kx"), s(3, "config", "get", "notify-keyspace-events"),
			s(3, "config", "set", "notify-keyspace-events", "KQ"), s(3, "config", "get", "notify-keyspace-events"),
			{conn: 3, cmds: [][]string{{"set", "e3", "v", "px", "20"}}, expire: "e3"},
		}
	case "monitor":
		return []pushStep{
			s(0, "monitor"), s(1, "set", "k", "v\x01\"\n"), s(1, "get", "k"), s(1, "auth", "secret"),
			s(1, "auth", "user", "secret"), s(1, "auth", "a", "b", "c"), s(1, "hello", "2", "auth", "u", "p"),
			s(1, "eval", "redis.call('set', KEYS[1], ARGV[1]); return redis.pcall('incr', KEYS[1])", "1", "k", "x"),
			tx(1, c("set", "a", "1")), tx(1, c("nosuch")),
			s(1, "select", "1"), s(1, "set", "a", "1"), s(1, "select", "0"), s(1, "config", "set", "notify-keyspace-events", ""),
			s(1, "config", "get", "hz"), s(0, "get", "k"), s(0, "ping"), s(0, "monitor"), s(2, "monitor"),
			s(1, "publish", "c", "m"), s(0, "publish", "c", "m"), s(0, "reset"), s(1, "set", "b", "2"),
		}
	}
	return nil
}

// TestPushMatchesRedis runs each feature's scenario on connections in RESP2
// and RESP3 and compares what every connection receives with redis-server.
func TestPushMatchesRedis(t *testing.T) {
	for _, feature := range []string{"pubsub", "tracking", "keyspace", "monitor"} {
		for _, protos := range [][]int{{2, 2, 2, 2, 2}, {3, 3, 3, 3, 3}, {3, 2, 2, 3, 2}} {
			t.Run(fmt.Sprintf("%s/%v", feature, protos), func(t *testing.T) {
				p := newPushPair(t, resp.NewT(t, resp.Options{}), protos...)
				p.run(pushScenario(feature))
			})
		}
	}
}

// pushGen generates random steps over a few channels, patterns and keys.
type pushGen struct {
	r     *rand.Rand
	conns int
}

func (g *pushGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *pushGen) key() string { return g.pick("k1", "k2", "k3", "kk1", "x1") }

func (g *pushGen) channel() string {
	return g.pick("ch1", "ch2", "c1", "__redis__:invalidate", "__keyspace@0__:k1", "__keyevent@0__:set",
		"__keyevent@0__:expired", "__keyevent@0__:del")
}

func (g *pushGen) pattern() string {
	return g.pick("ch*", "*", "__key*__:*", "__keyevent@0__:*", "c?1", "__keyspace@*__:k?")
}

// names returns up to max of gen's values, at least min.
func (g *pushGen) names(lo, hi int, gen func() string) []string {
	var out []string
	for range lo + g.r.IntN(hi-lo+1) {
		out = append(out, gen())
	}
	return out
}

// tracking returns a CLIENT TRACKING command with random options, valid
// or not.
func (g *pushGen) tracking() []string {
	args := []string{"client", "tracking", g.pick("on", "on", "on", "off", "ON", "maybe")}
	if g.r.IntN(3) == 0 {
		args = append(args, "redirect", "{id:"+strconv.Itoa(g.r.IntN(g.conns+1))+"}")
	}
	switch g.r.IntN(4) {
	case 0:
		args = append(args, "bcast")
		for range g.r.IntN(3) {
			args = append(args, "prefix", g.pick("k", "kk", "x", "k1"))
		}
	case 1:
		args = append(args, g.pick("optin", "optout", "OPTIN"))
	case 2:
		if g.r.IntN(4) == 0 {
			args = append(args, g.pick("optin", "prefix", "bogus"), g.pick("optout", "k", "bcast"))
		}
	}
	if g.r.IntN(3) == 0 {
		args = append(args, "noloop")
	}
	return args
}

// data returns a command on keys: a read or a write.
func (g *pushGen) data() []string {
	k := g.key()
	if g.r.IntN(3) == 0 {
		return g.typed(k)
	}
	switch g.r.IntN(24) {
	case 0, 1, 2:
		return []string{"get", k}
	case 3:
		return []string{"mget", k, g.key()}
	case 4:
		return []string{g.pick("exists", "ttl", "strlen", "type"), k}
	case 5, 6, 7:
		args := []string{"set", k, g.pick("v", "1", "w")}
		if g.r.IntN(3) == 0 {
			args = append(args, g.pick("nx", "xx", "get", "keepttl"))
		}
		if g.r.IntN(4) == 0 {
			args = append(args, "px", "100000")
		}
		return args
	case 8:
		return []string{g.pick("del", "unlink"), k, g.key()}
	case 9:
		return []string{g.pick("incr", "decr"), k}
	case 10:
		return []string{"append", k, "x"}
	case 11:
		return []string{"setrange", k, g.pick("0", "2"), "ab"}
	case 12:
		return []string{"incrbyfloat", k, "1.5"}
	case 13:
		return []string{g.pick("rename", "renamenx"), k, g.key()}
	case 14:
		args := []string{"copy", k, g.key()}
		if g.r.IntN(2) == 0 {
			args = append(args, "replace")
		}
		return args
	case 15:
		return []string{"mset", k, "1", g.key(), "2"}
	case 16:
		return []string{g.pick("expire", "pexpire"), k, g.pick("100000", "0", "-1")}
	case 17:
		return []string{"persist", k}
	case 18:
		return []string{"getex", k, g.pick("ex", "px", "persist"), "100000"}[:2+g.r.IntN(2)]
	case 19:
		return []string{g.pick("getdel", "getset"), k, "g"}[:2+g.r.IntN(2)]
	case 20:
		return []string{"setnx", k, "n"}
	case 21:
		return []string{"eval", "return redis.call('get', KEYS[1])", "1", k}
	case 22:
		return []string{"eval", "redis.call('get', KEYS[1]); redis.call('set', KEYS[2], ARGV[1]); return redis.call('publish', 'ch1', ARGV[1])", "2", k, g.key(), "lua"}
	default:
		return []string{"move", k, "1"}
	}
}

// typed returns a command of the other types on k (and maybe another
// key): a read or a write, whose reply does not depend on a hash table's
// order.
func (g *pushGen) typed(k string) []string {
	m := func() string { return g.pick("a", "b", "1", "2") }
	switch g.r.IntN(20) {
	case 0:
		return []string{"hset", k, m(), g.pick("1", "x")}
	case 1:
		return []string{g.pick("hget", "hexists", "hstrlen"), k, m()}
	case 2:
		return []string{g.pick("hdel", "hincrby"), k, m(), "1"}[:3+g.r.IntN(2)]
	case 3:
		return []string{g.pick("hlen", "llen", "scard", "zcard"), k}
	case 4:
		return []string{g.pick("lpush", "rpush", "lpushx"), k, m(), m()}
	case 5:
		return []string{g.pick("lpop", "rpop"), k, "2"}[:2+g.r.IntN(2)]
	case 6:
		return []string{g.pick("lrange", "zrange"), k, "0", "-1"}
	case 7:
		return []string{"lmove", k, g.key(), g.pick("left", "right"), g.pick("left", "right")}
	case 8:
		return []string{g.pick("lindex", "lset"), k, "0", "z"}[:3+g.r.IntN(2)]
	case 9:
		return []string{g.pick("sadd", "srem"), k, m(), m()}
	case 10:
		return []string{g.pick("sismember", "smismember"), k, m()}
	case 11:
		return []string{g.pick("sinterstore", "sunionstore", "sdiffstore"), k, g.key(), g.key()}
	case 12:
		return []string{g.pick("sintercard", "zintercard"), "2", k, g.key()}
	case 13:
		return []string{"smove", k, g.key(), m()}
	case 14:
		if g.r.IntN(3) == 0 {
			return []string{"zadd", k, "incr", "1", m()}
		}
		return []string{"zadd", k, g.pick("1", "2"), m()}
	case 15:
		return []string{g.pick("zrem", "zscore", "zrank"), k, m()}
	case 16:
		return []string{g.pick("zpopmin", "zpopmax"), k}
	case 17:
		return []string{g.pick("zunionstore", "zinterstore", "zdiffstore"), k, "2", g.key(), g.key()}
	case 18:
		return []string{"zremrangebyscore", k, "-inf", g.pick("1", "+inf")}
	default:
		return []string{"eval", "redis.call('hset', KEYS[1], 'l', '1'); return redis.call('hget', KEYS[2], 'l')", "2", k, g.key()}
	}
}

// step returns one random step.
func (g *pushGen) step() pushStep {
	conn := g.r.IntN(g.conns)
	one := func(args ...string) pushStep { return pushStep{conn: conn, cmds: [][]string{args}} }
	switch g.r.IntN(40) {
	case 0, 1, 2:
		return one(append([]string{"subscribe"}, g.names(1, 2, g.channel)...)...)
	case 3:
		args := append([]string{"unsubscribe"}, g.names(0, 2, g.channel)...)
		return pushStep{conn: conn, cmds: [][]string{args}, unsubAll: len(args) == 1}
	case 4, 5:
		return one(append([]string{"psubscribe"}, g.names(1, 2, g.pattern)...)...)
	case 6:
		args := append([]string{"punsubscribe"}, g.names(0, 1, g.pattern)...)
		return pushStep{conn: conn, cmds: [][]string{args}, unsubAll: len(args) == 1}
	case 7:
		if g.r.IntN(2) == 0 {
			return one("ssubscribe", g.pick("sh1", "sh2"))
		}
		args := append([]string{"sunsubscribe"}, g.names(0, 1, func() string { return g.pick("sh1", "sh2") })...)
		return pushStep{conn: conn, cmds: [][]string{args}, unsubAll: len(args) == 1}
	case 8, 9, 10:
		return one("publish", g.channel(), g.pick("hi", "m", ""))
	case 11:
		return one("spublish", g.pick("sh1", "sh2"), "s")
	case 12:
		if g.r.IntN(2) == 0 {
			return pushStep{conn: conn, cmds: [][]string{{"pubsub", g.pick("channels", "shardchannels")}}, sorted: true}
		}
		return one("pubsub", g.pick("numsub", "shardnumsub", "numpat"), g.channel(), "sh1")
	case 13, 14:
		return one(g.tracking()...)
	case 15:
		return one("client", "caching", g.pick("yes", "no", "maybe"))
	case 16:
		return pushStep{conn: conn, cmds: [][]string{{"client", g.pick("getredir", "trackinginfo")}}, ids: true}
	case 17:
		letters := "KEAg$xnm"
		var b []byte
		for range g.r.IntN(6) {
			b = append(b, letters[g.r.IntN(len(letters))])
		}
		return one("config", "set", "notify-keyspace-events", string(b))
	case 18:
		// In database 0, where the control connection waits for the key.
		return pushStep{conn: conn, cmds: [][]string{{"select", "0"}, {"set", "e1", "v", "px", "15"}}, expire: "e1"}
	case 19:
		if g.r.IntN(8) == 0 {
			return one("monitor")
		}
		return one("ping")
	case 20:
		if g.r.IntN(6) == 0 {
			return one("reset")
		}
		return pushStep{conn: conn, cmds: [][]string{{"hello", g.pick("2", "3")}}, ids: true}
	case 21:
		if g.r.IntN(4) == 0 {
			return one(g.pick("flushdb", "flushall"))
		}
		return one("swapdb", "0", "1")
	case 22, 23:
		cmds := [][]string{{"multi"}}
		for range 1 + g.r.IntN(3) {
			cmds = append(cmds, g.data())
		}
		return pushStep{conn: conn, cmds: append(cmds, []string{g.pick("exec", "exec", "discard")})}
	case 24:
		return one("select", g.pick("0", "0", "1"))
	default:
		return one(g.data()...)
	}
}

// TestPushDifferential runs random streams of steps on four connections
// (a random mix of RESP2 and RESP3) to redis-server and to nxkv-server and
// compares, step by step, what every connection receives. Rerun a failure
// with NXKV_DIFF_SEED and NXKV_DIFF_STREAM.
func TestPushDifferential(t *testing.T) {
	seed, streams, _ := diffStreams(24, 4)
	const length = 200
	for _, i := range streams {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		protos := make([]int, 4)
		for j := range protos {
			protos[j] = 2 + r.IntN(2)
		}
		t.Run(fmt.Sprintf("stream%d", i), func(t *testing.T) {
			p := newPushPair(t, resp.NewT(t, resp.Options{}), protos...)
			g := &pushGen{r: r, conns: len(protos)}
			for range length {
				st := g.step()
				if d := p.step(st); d != "" {
					t.Fatalf("seed %d stream %d (rerun with NXKV_DIFF_SEED=%d NXKV_DIFF_STREAM=%d), connections in RESP%v:\n%s",
						seed, i, seed, i, protos, d)
				}
			}
		})
	}
}

// TestPushDifferentialCatchesPlantedBugs shows the comparison fails for a
// bug planted in each feature: pattern subscribers skipped by PUBLISH,
// NOLOOP ignored, APPEND notified as "set", AUTH's password shown by
// MONITOR.
func TestPushDifferentialCatchesPlantedBugs(t *testing.T) {
	for _, feature := range []string{"pubsub", "tracking", "keyspace", "monitor"} {
		t.Run(feature, func(t *testing.T) {
			ns := resp.NewT(t, resp.Options{})
			resp.PlantPushBug(ns, feature)
			p := newPushPair(t, ns, 3, 2, 2, 3, 2)
			for _, st := range pushScenario(feature) {
				if d := p.step(st); d != "" {
					t.Logf("caught: %s", d)
					return
				}
			}
			t.Fatalf("the %s scenario found no difference with a bug planted in %s", feature, feature)
		})
	}
}
