package main

// Clients that wait on a server's pushes, unmodified, against nxkv-server:
// redigo's PubSubConn and rueidis's client-side caching (DoCache) and its
// lock package. They live in the bench module, where the peers the suite
// compares against are dependencies, so that programs importing nxkv
// never depend on them.

import (
	"context"
	"strings"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/nxkv/nxkv/resp"
)

// TestRedigoPubSubConn: redigo's PubSubConn receives subscriptions,
// messages (from clients and Server.Publish), pattern messages and PING's
// pong in subscribed mode, and unsubscribes.
func TestRedigoPubSubConn(t *testing.T) {
	s := resp.RunT(t)
	c, err := redigo.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pub, err := redigo.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	psc := redigo.PubSubConn{Conn: c}
	if err := psc.Subscribe("jobs"); err != nil {
		t.Fatal(err)
	}
	if err := psc.PSubscribe("lock:*"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []redigo.Subscription{{Kind: "subscribe", Channel: "jobs", Count: 1}, {Kind: "psubscribe", Channel: "lock:*", Count: 2}} {
		if got := psc.Receive(); got != want {
			t.Fatalf("Receive = %#v, want %#v", got, want)
		}
	}
	if n, err := redigo.Int(pub.Do("PUBLISH", "jobs", "j1")); err != nil || n != 1 {
		t.Fatalf("PUBLISH = %d, %v", n, err)
	}
	s.Publish("lock:9", "released")
	if err := psc.Ping("hi"); err != nil {
		t.Fatal(err)
	}
	want := []any{
		redigo.Message{Channel: "jobs", Data: []byte("j1")},
		redigo.Message{Channel: "lock:9", Pattern: "lock:*", Data: []byte("released")},
		redigo.Pong{Data: "hi"},
	}
	for i, w := range want {
		got := psc.Receive()
		if m, ok := got.(redigo.Message); ok {
			wm := w.(redigo.Message)
			if m.Channel != wm.Channel || m.Pattern != wm.Pattern || string(m.Data) != string(wm.Data) {
				t.Fatalf("Receive %d = %#v, want %#v", i, got, w)
			}
			continue
		}
		if got != w {
			t.Fatalf("Receive %d = %#v, want %#v", i, got, w)
		}
	}
	if err := psc.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if got, want := psc.Receive(), (redigo.Subscription{Kind: "unsubscribe", Channel: "jobs", Count: 1}); got != want {
		t.Fatalf("Receive = %#v, want %#v", got, want)
	}
}

// TestRueidisDoCache: rueidis's client-side caching serves a cached read
// until another client writes the key, and the invalidation makes the
// next read fetch the new value; a flush invalidates everything.
func TestRueidisDoCache(t *testing.T) {
	s := resp.RunT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cached, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	writer, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	get := func() (string, bool) {
		t.Helper()
		r := cached.DoCache(ctx, cached.B().Get().Key("price").Cache(), time.Minute)
		v, err := r.ToString()
		if err != nil {
			t.Fatal(err)
		}
		return v, r.IsCacheHit()
	}
	// waitFor reads until the cache serves want from the server again, then
	// from the cache: the invalidation arrives as a push, at its own pace.
	waitFor := func(want string) {
		t.Helper()
		for ctx.Err() == nil {
			if v, hit := get(); v == want && !hit {
				if v, hit := get(); v != want || !hit {
					t.Fatalf("read after a miss = %q (hit %v), want %q from the cache", v, hit, want)
				}
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("the cache never served %q: no invalidation arrived", want)
	}
	if err := writer.Do(ctx, writer.B().Set().Key("price").Value("10").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if v, hit := get(); v != "10" || hit {
		t.Fatalf("first read = %q (hit %v), want 10 from the server", v, hit)
	}
	if v, hit := get(); v != "10" || !hit {
		t.Fatalf("second read = %q (hit %v), want 10 from the cache", v, hit)
	}
	if err := writer.Do(ctx, writer.B().Set().Key("price").Value("11").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitFor("11")
	s.Set("price", "12") // through the engine's Go API: invalidates too
	waitFor("12")
	if err := writer.Do(ctx, writer.B().Flushall().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	s.Set("price", "13")
	waitFor("13")
}

// TestRueidislockWakesOnInvalidation: with its default options (client-side
// caching on), a rueidislock waiter wakes when the holder releases: the
// invalidation of the lock key wakes it (before caching's invalidations
// existed here, it waited until its context ended).
func TestRueidislockWakesOnInvalidation(t *testing.T) {
	s := resp.RunT(t)
	newLocker := func() rueidislock.Locker {
		l, err := rueidislock.NewLocker(rueidislock.LockerOption{
			ClientOption: rueidis.ClientOption{InitAddress: []string{s.Addr()}},
			KeyMajority:  1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	holder, waiter := newLocker(), newLocker()
	defer holder.Close()
	defer waiter.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, release, err := holder.WithContext(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, unlock, err := waiter.WithContext(ctx, "job")
		if err == nil {
			unlock()
		}
		got <- err
	}()
	// Release once the waiter found the lock held: its attempt's script
	// read the key, so the server tracks it for both lockers.
	admin, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	tracked := func() bool {
		info, _ := admin.Do(ctx, admin.B().Info().Section("stats").Build()).ToString()
		return strings.Contains(info, "tracking_total_items:2\r\n")
	}
	for !tracked() {
		if ctx.Err() != nil {
			t.Fatal("the waiter never tried the lock")
		}
		time.Sleep(time.Millisecond)
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the waiter did not wake within 3 s of the release (its lock validity is 5 s)")
	}
}
