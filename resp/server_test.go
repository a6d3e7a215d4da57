package resp_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/resp"
)

// newClient returns a go-redis client over the in-memory dialer.
func newClient(t testing.TB, s *resp.Server, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Dialer: s.Dial, Protocol: proto, DisableIdentity: false})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCloseReleasesEverything: Close returns only after every connection
// goroutine has exited, with clients connected and blocked mid-request.
func TestCloseReleasesEverything(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := resp.New(resp.Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "nxkv.sock")
	if _, err := s.Listen("unix", sock); err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for i := range 20 {
		network, addr := "tcp", s.Addr()
		if i%2 == 1 {
			network, addr = "unix", sock
		}
		c, err := net.Dial(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		// Half send a partial request and leave the server waiting for it.
		if i%4 == 0 {
			_, _ = c.Write([]byte("*2\r\n$3\r\nGET\r\n"))
		} else {
			_, _ = c.Write([]byte("PING\r\n"))
		}
	}
	mc, err := s.Dial(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range append(conns, mc) {
		c.Close()
	}
	if _, err := s.Dial(context.Background(), "", ""); !errors.Is(err, resp.ErrServerClosed) {
		t.Fatalf("Dial after Close = %v, want ErrServerClosed", err)
	}
	if err := s.Start(); !errors.Is(err, resp.ErrServerClosed) {
		t.Fatalf("Start after Close = %v, want ErrServerClosed", err)
	}
}

// TestManyClients runs concurrent clients over TCP, a unix socket and the
// in-memory dialer, each incrementing a shared counter.
func TestManyClients(t *testing.T) {
	s := resp.RunT(t)
	sock := filepath.Join(t.TempDir(), "nxkv.sock")
	if _, err := s.Listen("unix", sock); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	const clients, incrs = 60, 100
	for i := range clients {
		opts := &redis.Options{Addr: s.Addr(), Protocol: 2 + i%2}
		switch i % 3 {
		case 1:
			opts.Network, opts.Addr = "unix", sock
		case 2:
			opts.Dialer = s.Dial
		}
		c := redis.NewClient(opts)
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range incrs {
				if err := c.Incr(ctx, "counter").Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v, _ := s.Get("counter"); v != strconv.Itoa(clients*incrs) {
		t.Fatalf("counter = %q, want %d", v, clients*incrs)
	}
}

// TestInjectedClock: with a mock clock, keys expire the moment the clock
// passes their deadline, TIME reports the clock, and a waiter of the
// in-process lock client sharing the engine wakes when a RESP client's lock
// expires.
func TestInjectedClock(t *testing.T) {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: clk})
	defer e.Close()
	s := resp.NewT(t, resp.Options{Engine: e})
	c := newClient(t, s, 3)
	ctx := context.Background()

	tm, err := c.Time(ctx).Result()
	if err != nil || !tm.Equal(clk.Now()) {
		t.Fatalf("TIME = %v, %v; want %v", tm, err, clk.Now())
	}
	if ok, err := c.SetNX(ctx, "lock", "resp-client", 100*time.Millisecond).Result(); !ok || err != nil {
		t.Fatalf("SET NX PX = %v, %v", ok, err)
	}
	// An in-process waiter on the same engine.
	lc := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	got := make(chan error, 1)
	go func() {
		l, err := lc.Obtain(ctx, "lock", time.Second, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1)})
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	clk.Add(100 * time.Millisecond) // at the deadline: still held
	if v, err := c.Get(ctx, "lock").Result(); v != "resp-client" || err != nil {
		t.Fatalf("GET at the deadline = %q, %v", v, err)
	}
	if d, _ := c.PTTL(ctx, "lock").Result(); d != 0 {
		t.Fatalf("PTTL at the deadline = %v, want 0", d)
	}
	clk.Add(time.Millisecond)
	if err := c.Get(ctx, "lock").Err(); err != redis.Nil {
		t.Fatalf("GET after the deadline = %v, want nil", err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-process waiter did not wake when the RESP client's lock expired")
	}
	if tm, _ := c.Time(ctx).Result(); !tm.Equal(clk.Now()) {
		t.Fatalf("TIME after Add = %v, want %v", tm, clk.Now())
	}
}

// TestWallClockExpiry: with the real clock, keys expire on their own. In a
// synctest bubble the clock is virtual, so no real time passes.
func TestWallClockExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := resp.New(resp.Options{})
		defer s.Close()
		c := redis.NewClient(&redis.Options{Dialer: s.Dial, Protocol: 2, DisableIdentity: true, MaxIdleConns: 0,
			ConnMaxIdleTime: -1, ReadTimeout: -1, WriteTimeout: -1, ContextTimeoutEnabled: false})
		defer c.Close()
		ctx := context.Background()
		if err := c.Set(ctx, "k", "v", 300*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		if v, _ := c.Get(ctx, "k").Result(); v != "v" {
			t.Fatalf("GET after 200 ms = %q, want v", v)
		}
		time.Sleep(200 * time.Millisecond)
		if err := c.Get(ctx, "k").Err(); err != redis.Nil {
			t.Fatalf("GET after 400 ms = %v, want nil", err)
		}
		c.Close()
		s.Close()
	})
}

// TestTestHelpers reads and steers state without a client, and injects
// faults.
func TestTestHelpers(t *testing.T) {
	s := resp.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()

	s.Set("greeting", "hello")
	if v, _ := c.Get(ctx, "greeting").Result(); v != "hello" {
		t.Fatalf("GET of a key set by the test = %q", v)
	}
	if err := s.SetTTL("session", "x", time.Minute); err != nil {
		t.Fatal(err)
	}
	if d, ok := s.TTL("session"); !ok || d <= 0 || d > time.Minute {
		t.Fatalf("TTL = %v, %v", d, ok)
	}
	c.Set(ctx, "from-client", "1", 0)
	if v, ok := s.Get("from-client"); !ok || v != "1" {
		t.Fatalf("Get of a key set by a client = %q, %v", v, ok)
	}
	if keys := s.Keys(); len(keys) != 3 {
		t.Fatalf("Keys = %v, want 3 keys", keys)
	}
	remove := s.InjectFault(resp.Fault{Command: "get", Err: "READONLY You can't write against a read only replica.", Times: 1})
	if err := c.Get(ctx, "greeting").Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Fatalf("GET with a fault = %v", err)
	}
	if v, _ := c.Get(ctx, "greeting").Result(); v != "hello" {
		t.Fatalf("GET after the fault was used up = %q", v)
	}
	remove()
	s.InjectFault(resp.Fault{Command: "set", DropReply: true, Times: 1})
	if err := c.Set(ctx, "dropped", "1", 0).Err(); err == nil {
		t.Fatal("SET whose reply was dropped succeeded")
	}
	if v, _ := s.Get("dropped"); v != "1" {
		t.Fatalf("the SET whose reply was dropped did not run: %q", v)
	}
	s.SetError("ERR server is sad")
	if err := c.Ping(ctx).Err(); err == nil || err.Error() != "ERR server is sad" {
		t.Fatalf("PING with SetError = %v", err)
	}
	s.SetError("")
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.FlushAll()
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("DBSIZE after FlushAll = %d", n)
	}
}

// TestSharedEngine: keys written directly to the engine are seen by RESP
// clients and the other way round; SELECT reaches other databases.
func TestSharedEngine(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	s := resp.NewT(t, resp.Options{Engine: e})
	c := newClient(t, s, 2)
	ctx := context.Background()
	e.Set("direct", "1")
	if v, _ := c.Get(ctx, "direct").Result(); v != "1" {
		t.Fatalf("GET of an engine key = %q", v)
	}
	c.Set(ctx, "viaresp", "2", 0)
	if v, _ := e.Get("viaresp"); v != "2" {
		t.Fatalf("engine Get of a RESP key = %q", v)
	}
	c.Do(ctx, "select", "3")
	c3 := redis.NewClient(&redis.Options{Dialer: s.Dial, DB: 3})
	defer c3.Close()
	c3.Set(ctx, "in3", "x", 0)
	if v, _ := s.DB(3).Get("in3"); v != "x" {
		t.Fatalf("DB(3) Get = %q", v)
	}
	if _, ok := e.Get("in3"); ok {
		t.Fatal("a key of database 3 is in database 0")
	}
	if err := c3.Do(ctx, "move", "in3", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := e.Get("in3"); v != "x" {
		t.Fatalf("after MOVE, database 0 Get = %q", v)
	}
}
