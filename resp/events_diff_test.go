package resp_test

// The keyspace events of the typed commands (and of the string and key
// commands that build a value from another) against redis-server's: Redis
// publishes them as keyspace notifications (notify-keyspace-events KEAn,
// "new" included), nxkv reports them on its engines' change feed, which a
// server's notifications will publish. Until nxkv publishes them itself,
// the feed is compared with what redis-server publishes.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// eventSteps are commands whose events are compared, in order.
var eventSteps = [][]string{
	{"hset", "h", "a", "1", "b", "2"}, {"hset", "h", "a", "3"}, {"hsetnx", "h", "c", "x"}, {"hsetnx", "h", "c", "y"},
	{"hincrby", "h", "a", "2"}, {"hincrbyfloat", "h", "n", "1.5"}, {"hdel", "h", "zz"}, {"hdel", "h", "a", "b", "c", "n"},
	{"rpush", "l", "a", "b", "c"}, {"lpush", "l", "z"}, {"lpushx", "nolist", "x"}, {"linsert", "l", "before", "b", "x"},
	{"lset", "l", "0", "y"}, {"lrem", "l", "0", "x"}, {"ltrim", "l", "0", "1"}, {"lpop", "l"}, {"rpop", "l", "5"},
	{"rpush", "src", "1", "2"}, {"lmove", "src", "dst", "left", "right"}, {"rpoplpush", "src", "dst"},
	{"lmpop", "1", "dst", "left", "count", "5"},
	{"sadd", "s", "1", "a"}, {"sadd", "s", "1"}, {"srem", "s", "zz"}, {"smove", "s", "s2", "a"}, {"spop", "s", "5"},
	{"sadd", "s3", "x", "y"}, {"sadd", "s4", "y"}, {"sinterstore", "d", "s3", "s4"}, {"sunionstore", "d", "s3", "s4"},
	{"sdiffstore", "d", "s4", "s3"},
	{"zadd", "z", "1", "a", "2", "b", "3", "c"}, {"zadd", "z", "nx", "1", "a"}, {"zincrby", "z", "1", "a"},
	{"zadd", "z", "incr", "1", "zz"}, {"zrem", "z", "zz"}, {"zremrangebyscore", "z", "10", "20"},
	{"zremrangebyrank", "z", "0", "0"}, {"zrangestore", "zd", "z", "0", "-1"}, {"zunionstore", "zu", "2", "z", "zd"},
	{"zinterstore", "zu", "1", "nokey"}, {"zpopmin", "z"}, {"zpopmax", "zd", "5"}, {"zmpop", "1", "z", "max"},
	{"set", "str", "ab"}, {"append", "str", "cd"}, {"append", "newstr", "x"}, {"setrange", "str", "1", "zz"},
	{"setrange", "newrange", "2", "q"}, {"incrbyfloat", "fl", "1.5"}, {"incrbyfloat", "fl", "1"},
	{"rename", "str", "str2"}, {"rpush", "rl", "a"}, {"rename", "rl", "str2"}, {"copy", "str2", "c1"},
	{"copy", "c1", "str2", "replace"}, {"move", "c1", "1"}, {"hset", "mh", "f", "v"}, {"move", "mh", "1"},
	{"setbit", "bits", "9", "1"}, {"setbit", "bits", "9", "1"}, {"setbit", "bits", "100", "0"}, {"setbit", "bits", "0", "0"},
	{"bitfield", "bf", "overflow", "fail", "set", "u8", "0", "300"}, {"bitfield", "bf", "set", "u8", "0", "7"},
	{"bitfield", "bf", "set", "u8", "0", "7"}, {"bitfield", "bf", "overflow", "fail", "incrby", "u8", "#3", "999"},
	{"bitfield", "bf", "get", "u8", "0"}, {"bitop", "and", "bo", "bits", "bf"}, {"bitop", "or", "bo", "nokey"},
	{"rpush", "bl", "x"}, {"bitop", "not", "bl", "bits"}, {"set", "bt", "x", "ex", "100"}, {"bitop", "xor", "bt", "bits"},
	{"del", "h", "l", "str2", "nokey"},
}

// redisEvents runs the steps on redis-server and returns the keyspace
// events it published for each step, as "db event key".
func redisEvents(t *testing.T, addr string) [][]string {
	t.Helper()
	c, sub := dialRaw(t, addr), dialRaw(t, addr)
	for _, cmd := range [][]string{{"flushall"}, {"config", "set", "notify-keyspace-events", "KEAn"}} {
		if _, err := c.do(cmd); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { c.do([]string{"config", "set", "notify-keyspace-events", ""}) })
	if _, err := sub.do([]string{"psubscribe", "__keyevent@*__:*"}); err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, st := range eventSteps {
		if _, err := c.do(st); err != nil {
			t.Fatal(err)
		}
		if err := sub.Send([]string{"ping", "end"}); err != nil {
			t.Fatal(err)
		}
		var evs []string
		for {
			r, err := sub.Read(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			v, err := parseReply(r)
			if err != nil {
				t.Fatal(err)
			}
			msg := v.([]any)
			if msg[0] == "pong" {
				break
			}
			// pmessage pattern __keyevent@<db>__:<event> key
			ch := msg[2].(string)
			db, ev, _ := strings.Cut(strings.TrimPrefix(ch, "__keyevent@"), "__:")
			evs = append(evs, db+" "+ev+" "+msg[3].(string))
		}
		out = append(out, evs)
	}
	return out
}

// nxkvEvents runs the steps on nxkv and returns its engines' feed for
// each step, as "db event key".
func nxkvEvents(t *testing.T, fault resp.Fault) [][]string {
	t.Helper()
	s := resp.RunT(t)
	if fault.Command != "" {
		s.InjectFault(fault)
	}
	var mu sync.Mutex
	var evs []string
	for db := range 2 {
		stop := s.DB(db).Listen(func(ev engine.Event) {
			mu.Lock()
			evs = append(evs, fmt.Sprintf("%d %s %s", db, ev.Kind, ev.Key))
			mu.Unlock()
		})
		t.Cleanup(stop)
	}
	c := dialRaw(t, s.Addr())
	var out [][]string
	for _, st := range eventSteps {
		if _, err := c.do(st); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		out = append(out, evs)
		evs = nil
		mu.Unlock()
	}
	return out
}

// TestKeyspaceEventsMatchRedis compares, step by step, the events nxkv's
// feed reports with the keyspace notifications redis-server publishes.
func TestKeyspaceEventsMatchRedis(t *testing.T) {
	rs := redistest.Start(t)
	want, got := redisEvents(t, rs.Addr), nxkvEvents(t, resp.Fault{})
	n := 0
	for i, st := range eventSteps {
		n += len(want[i])
		if strings.Join(want[i], ", ") != strings.Join(got[i], ", ") {
			t.Errorf("%q:\nredis-server: %q\nnxkv feed:    %q", st, want[i], got[i])
		}
	}
	t.Logf("%d events of %d commands compared", n, len(eventSteps))
}

// TestKeyspaceEventsCatchPlantedBug shows the comparison fails when a
// command's events differ: a fault makes ZINCRBY reply an error instead of
// running.
func TestKeyspaceEventsCatchPlantedBug(t *testing.T) {
	rs := redistest.Start(t)
	want, got := redisEvents(t, rs.Addr), nxkvEvents(t, resp.Fault{Command: "zincrby", Err: "ERR planted"})
	for i := range eventSteps {
		if strings.Join(want[i], ", ") != strings.Join(got[i], ", ") {
			return
		}
	}
	t.Fatal("the comparison found no difference with ZINCRBY failing")
}
