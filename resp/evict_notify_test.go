package resp_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// TestEvictedEventsMatchRedis: an eviction is published as the keyspace
// event "evicted", as Redis publishes it: three keys in each of two
// databases, notify-keyspace-events "KEe", then maxmemory 1 under
// allkeys-lru, and the next write evicts every key before it is refused.
// The subscriber's messages (which key goes first is the sampling's
// choice) and the replies are compared with redis-server's.
func TestEvictedEventsMatchRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	var got [2][]string
	for i, addr := range []string{rs.Addr, ns.Addr()} {
		ctl, sub := dialRaw(t, addr), dialRaw(t, addr)
		var replies []string
		do := func(c *rawConn, args ...string) {
			t.Helper()
			r, err := c.do(args)
			if err != nil {
				t.Fatalf("%q on %s: %v", args, addr, err)
			}
			replies = append(replies, string(r))
		}
		do(ctl, "flushall")
		do(ctl, "config", "set", "notify-keyspace-events", "KEe")
		do(ctl, "config", "set", "maxmemory-policy", "allkeys-lru")
		for _, db := range []string{"0", "3"} {
			do(ctl, "select", db)
			do(ctl, "mset", "a", "1", "b", "2", "c", "3")
		}
		do(sub, "psubscribe", "__key*@*__:*")
		do(ctl, "config", "set", "maxmemory", "1")
		do(ctl, "set", "d", "4")
		do(ctl, "config", "set", "maxmemory", "0")
		do(ctl, "dbsize")
		var msgs []string
		for range 12 { // six keys, two events each
			r, err := sub.Read(5 * time.Second)
			if err != nil {
				t.Fatalf("%s: after %d messages: %v", addr, len(msgs), err)
			}
			msgs = append(msgs, string(r))
		}
		do(ctl, "config", "set", "notify-keyspace-events", "")
		slices.Sort(msgs)
		got[i] = append(replies, msgs...)
	}
	if !slices.Equal(got[0], got[1]) {
		t.Fatalf("redis-server:\n%q\nnxkv:\n%q", got[0], got[1])
	}
}

// TestOOMInPubSubContextMatchesRedis: a RESP2 client in pub/sub context
// over maxmemory gets the OOM error for a deny-oom command, which Redis
// checks before the pub/sub context, and the context's error for a read.
func TestOOMInPubSubContextMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	var got [2][]string
	for i, addr := range []string{rs.Addr, ns.Addr()} {
		ctl, sub := dialRaw(t, addr), dialRaw(t, addr)
		for _, step := range []struct {
			c    *rawConn
			args []string
		}{
			{sub, []string{"subscribe", "ch"}},
			{ctl, []string{"config", "set", "maxmemory", "1"}},
			{sub, []string{"set", "k", "v"}},
			{sub, []string{"get", "k"}},
			{sub, []string{"ping"}},
			{ctl, []string{"config", "set", "maxmemory", "0"}},
			{sub, []string{"set", "k", "v"}},
		} {
			r, err := step.c.do(step.args)
			if err != nil {
				t.Fatalf("%q on %s: %v", step.args, addr, err)
			}
			got[i] = append(got[i], string(r))
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Fatalf("redis-server:\n%q\nnxkv:\n%q", got[0], got[1])
	}
}
