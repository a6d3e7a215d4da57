package resp_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/resp"
)

// A go-redis client talks to the server through the in-memory dialer: no
// port, no socket. The lock pattern of Redis's documentation works as is:
// SET NX PX to acquire, a compare-and-delete script to release.
func ExampleServer_Dial() {
	s := resp.New(resp.Options{})
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Dialer: s.Dial})
	defer rdb.Close()
	ctx := context.Background()

	ok, _ := rdb.SetNX(ctx, "lock:report", "token-1", 10*time.Second).Result()
	fmt.Println("acquired:", ok)
	ok, _ = rdb.SetNX(ctx, "lock:report", "token-2", 10*time.Second).Result()
	fmt.Println("second client acquired:", ok)

	release := redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)
	n, _ := release.Run(ctx, rdb, []string{"lock:report"}, "token-1").Int()
	fmt.Println("released:", n)
	// Output:
	// acquired: true
	// second client acquired: false
	// released: 1
}

// With an injected clock, a test moves time and keys expire at once, with
// no sleeping; the test reads the server's state without a client.
func ExampleServer_injectedClock() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: clk})
	defer e.Close()
	s := resp.New(resp.Options{Engine: e})
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Dialer: s.Dial})
	defer rdb.Close()
	ctx := context.Background()

	rdb.Set(ctx, "session", "alice", time.Minute)
	clk.Add(time.Minute)
	v, ok := s.Get("session")
	fmt.Println(v, ok)
	clk.Add(time.Millisecond)
	_, err := rdb.Get(ctx, "session").Result()
	fmt.Println(err == redis.Nil)
	now, _ := rdb.Time(ctx).Result()
	fmt.Println(now.UTC())
	// Output:
	// alice true
	// true
	// 2026-11-22 09:01:00.001 +0000 UTC
}

// A test sees what the code under test published, and keyspace
// notifications of its writes, without a client of its own: Subscribe
// (or PSubscribe) gives the messages on a Go channel.
func ExampleServer_Subscribe() {
	s := resp.New(resp.Options{})
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Dialer: s.Dial})
	defer rdb.Close()
	ctx := context.Background()

	releases := s.Subscribe("lock-released")
	defer releases.Close()
	_ = s.ConfigSet("notify-keyspace-events", "Eg")
	deletes := s.Subscribe("__keyevent@0__:del")
	defer deletes.Close()

	// The code under test: a lock released by a script that tells waiters.
	rdb.Set(ctx, "lock:job", "token-1", time.Minute)
	rdb.Eval(ctx, `if redis.call("get", KEYS[1]) == ARGV[1] then
		redis.call("del", KEYS[1])
		return redis.call("publish", "lock-released", KEYS[1])
	end
	return 0`, []string{"lock:job"}, "token-1")

	m := <-releases.Messages()
	fmt.Println(m.Channel, m.Payload)
	m = <-deletes.Messages()
	fmt.Println(m.Channel, m.Payload)
	fmt.Println("receivers:", s.Publish("lock-released", "by the test"))
	// Output:
	// lock-released lock:job
	// __keyevent@0__:del lock:job
	// receivers: 1
}
