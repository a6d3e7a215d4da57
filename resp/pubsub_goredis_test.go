package resp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/resp"
)

// TestGoRedisPubSub runs go-redis's PubSub, unmodified, against the server
// in RESP2 and RESP3: subscriptions and their confirmations, messages from
// clients, scripts and Server.Publish, patterns, keyspace notifications,
// PING in subscribed mode, unsubscribing, and a Subscription of the test
// helper seeing what the clients published.
func TestGoRedisPubSub(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			s := resp.RunT(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: proto})
			defer rdb.Close()
			seen := s.PSubscribe("*")
			defer seen.Close()

			ps := rdb.Subscribe(ctx, "orders")
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
				t.Fatal(err)
			}
			if err := ps.PSubscribe(ctx, "lock:*", "__keyevent@0__:*"); err != nil {
				t.Fatal(err)
			}
			if err := s.ConfigSet("notify-keyspace-events", "E$g"); err != nil {
				t.Fatal(err)
			}
			want := []redis.Message{
				{Channel: "orders", Payload: "new"},
				{Channel: "lock:42", Pattern: "lock:*", Payload: "released"},
				{Channel: "orders", Payload: "from lua"},
				{Channel: "orders", Payload: "from a test"},
				{Channel: "__keyevent@0__:set", Pattern: "__keyevent@0__:*", Payload: "stock"},
				{Channel: "__keyevent@0__:del", Pattern: "__keyevent@0__:*", Payload: "stock"},
			}
			if n, err := rdb.Publish(ctx, "orders", "new").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH = %d, %v; want 2 (go-redis's subscription and the helper's)", n, err)
			}
			rdb.Publish(ctx, "lock:42", "released")
			rdb.Eval(ctx, "return redis.call('publish', KEYS[1], ARGV[1])", []string{"orders"}, "from lua")
			if n := s.Publish("orders", "from a test"); n != 2 {
				t.Fatalf("Publish = %d, want 2", n)
			}
			rdb.Set(ctx, "stock", "1", 0)
			rdb.Del(ctx, "stock")
			for i, w := range want {
				m, err := ps.ReceiveMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if m.Channel != w.Channel || m.Pattern != w.Pattern || m.Payload != w.Payload {
					t.Fatalf("message %d = %+v, want %+v", i, *m, w)
				}
			}
			if err := ps.Ping(ctx, "hi"); err != nil {
				t.Fatal(err)
			}
			if p, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			} else if pong, ok := p.(*redis.Pong); !ok || pong.Payload != "hi" {
				t.Fatalf("PING in subscribed mode = %#v", p)
			}
			if n, err := rdb.PubSubNumSub(ctx, "orders").Result(); err != nil || n["orders"] != 1 {
				t.Fatalf("PUBSUB NUMSUB = %v, %v", n, err)
			}
			if err := ps.Unsubscribe(ctx, "orders"); err != nil {
				t.Fatal(err)
			}
			if m, err := ps.Receive(ctx); err != nil { // go-redis does not wait for it
				t.Fatal(err)
			} else if sub, ok := m.(*redis.Subscription); !ok || sub.Kind != "unsubscribe" || sub.Count != 2 {
				t.Fatalf("UNSUBSCRIBE's confirmation = %#v", m)
			}
			ch := ps.Channel()
			rdb.Publish(ctx, "orders", "not for us")
			rdb.Publish(ctx, "lock:7", "for us")
			select {
			case m := <-ch:
				if m.Channel != "lock:7" || m.Payload != "for us" {
					t.Fatalf("after UNSUBSCRIBE orders: %+v", *m)
				}
			case <-ctx.Done():
				t.Fatal("no message on the Channel")
			}
			// The helper's subscription saw every publish, and the events.
			got := 0
			for got < 8 {
				select {
				case <-seen.Messages():
					got++
				case <-ctx.Done():
					t.Fatalf("Server.PSubscribe saw %d messages, want 8", got)
				}
			}
		})
	}
}
