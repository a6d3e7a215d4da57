package redlock_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/locktest"
	"github.com/nxkv/nxkv/lockapi/redlock"
)

// world is N fake nodes and any number of Redlock clients, each node and
// each client with its own fake clock. advance moves every clock by the
// same amount (true time passing); a test can move one clock alone (a clock
// jump).
type world struct {
	t       *testing.T
	nodes   []*fakeNode
	clients []*client
}

type client struct {
	rl    *redlock.Redlock
	clock *clock.Mock
	links []*link
}

func newWorld(t *testing.T, n int) *world {
	w := &world{t: t}
	for i := 0; i < n; i++ {
		w.nodes = append(w.nodes, newFakeNode(t))
	}
	return w
}

// client adds a Redlock client whose clock starts at the current true time
// (clients' clocks stay in step with the first node's unless a test jumps
// that node). Acquire tries once unless opts say otherwise, so no retry
// waits on the fake clock.
func (w *world) client(opts redlock.Options) *client {
	w.t.Helper()
	c := &client{clock: clock.NewMock()}
	c.clock.Set(locktest.Epoch)
	if len(w.clients) > 0 {
		c.clock.Set(w.clients[0].clock.Now())
	}
	backends := make([]lockapi.Backend, len(w.nodes))
	for i, n := range w.nodes {
		c.links = append(c.links, &link{Backend: n})
		backends[i] = c.links[i]
	}
	opts.Clock = c.clock
	if opts.Tries == 0 {
		opts.Tries = 1
	}
	rl, err := redlock.New(backends, opts)
	if err != nil {
		w.t.Fatalf("redlock.New: %v", err)
	}
	c.rl = rl
	w.clients = append(w.clients, c)
	return c
}

// cut partitions c from the given nodes.
func (c *client) cut(nodes ...int) {
	for _, i := range nodes {
		c.links[i].cut.Store(true)
	}
}

// advance moves every node's and client's clock forward by d.
func (w *world) advance(d time.Duration) {
	for _, n := range w.nodes {
		n.clock.Add(d)
	}
	for _, c := range w.clients {
		c.clock.Add(d)
	}
}

// holders returns the nodes holding value at key.
func (w *world) holders(key, value string) []int {
	var idx []int
	for i, n := range w.nodes {
		if n.value(key) == value {
			idx = append(idx, i)
		}
	}
	return idx
}

func (w *world) acquire(c *client, key, value string, ttl time.Duration) (bool, error) {
	w.t.Helper()
	fence, ok, err := c.rl.Acquire(context.Background(), key, value, ttl)
	if fence != 0 {
		w.t.Fatalf("Acquire fence = %d, want 0: Redlock must not hand out fencing tokens", fence)
	}
	return ok, err
}

const (
	key = "res"
	ttl = 10 * time.Second
)

// TestClockJump: Kleppmann's first example. A holds nodes 0-2 (3 and 4 are
// unreachable for it); node 2's clock jumps forward past the TTL, so A's key
// expires there; B, which reaches only 2-4, acquires them. Redlock cannot
// prevent this: both clients hold a majority within their validity. The
// test asserts that the violation happens, to document it.
func TestClockJump(t *testing.T) {
	w := newWorld(t, 5)
	a, b := w.client(redlock.Options{}), w.client(redlock.Options{})
	a.cut(3, 4)
	b.cut(0, 1)
	if ok, err := w.acquire(a, key, "A", ttl); !ok {
		t.Fatalf("A: Acquire = %v, %v, want ok with nodes 0-2", ok, err)
	}
	aValidUntil := a.clock.Now().Add(ttl - ttl/100 - 2*time.Millisecond)
	w.advance(time.Second)
	w.nodes[2].clock.Add(ttl + time.Second) // the jump
	ok, err := w.acquire(b, key, "B", ttl)
	if !ok {
		t.Fatalf("B: Acquire = %v, %v; the clock jump no longer breaks Redlock? (want the documented violation)", ok, err)
	}
	if !b.clock.Now().Before(aValidUntil) {
		t.Fatalf("B acquired at %v, after A's validity %v: no overlap shown", b.clock.Now(), aValidUntil)
	}
	if got := w.holders(key, "A"); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("nodes holding A = %v, want [0 1]", got)
	}
	if got := w.holders(key, "B"); !slices.Equal(got, []int{2, 3, 4}) {
		t.Errorf("nodes holding B = %v, want [2 3 4]", got)
	}
	t.Logf("demonstrated: A (valid until %v) and B both hold a majority at %v after node 2's clock jumped",
		aValidUntil.Format(time.TimeOnly), b.clock.Now().Format(time.TimeOnly))
	// What A can learn: its next refresh finds only two nodes.
	if ok, err := a.rl.Refresh(context.Background(), key, "A", ttl); ok {
		t.Fatalf("A: Refresh = true, %v; want false, only nodes 0 and 1 hold A", err)
	}
}

// TestClockDrift covers the drift the algorithm does allow for: node 2's
// clock runs fast. Within the allowance (0.9% < 1%), B never acquires while
// A's validity lasts; beyond it (5%), B acquires before A's validity ends.
func TestClockDrift(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rate        float64 // node 2's speed relative to true time
		wantOverlap bool
	}{
		{"within allowance", 1.009, false},
		{"beyond allowance", 1.05, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 5)
			a, b := w.client(redlock.Options{}), w.client(redlock.Options{})
			a.cut(3, 4)
			b.cut(0, 1)
			if ok, err := w.acquire(a, key, "A", ttl); !ok {
				t.Fatalf("A: Acquire = %v, %v", ok, err)
			}
			aValidUntil := a.clock.Now().Add(ttl - ttl/100 - 2*time.Millisecond)
			overlap := false
			for i := 0; i < 60 && !overlap; i++ {
				// Coarse steps first, fine ones near the end of A's
				// validity, where an early expiry on node 2 would show.
				step := time.Second
				if i >= 9 {
					step = 100 * time.Millisecond
				}
				w.advance(step)
				w.nodes[2].clock.Add(time.Duration(float64(step) * (tc.rate - 1)))
				if !b.clock.Now().Before(aValidUntil) {
					break
				}
				ok, err := w.acquire(b, key, "B", ttl)
				if err != nil {
					t.Fatalf("B: Acquire: %v", err)
				}
				overlap = ok
			}
			if overlap != tc.wantOverlap {
				t.Fatalf("B acquired during A's validity = %v, want %v", overlap, tc.wantOverlap)
			}
		})
	}
}

// TestNodeWipe: node 2, one of the three nodes A holds, restarts without
// persistence. Restarting at once lets B take nodes 2-4 while A's validity
// lasts (the documented violation); staying down for at least the TTL makes
// B wait until A's validity is over (guaranteed), and B's failures name the
// node.
func TestNodeWipe(t *testing.T) {
	t.Run("immediate restart: two holders", func(t *testing.T) {
		w := newWorld(t, 5)
		a, b := w.client(redlock.Options{}), w.client(redlock.Options{})
		a.cut(3, 4)
		b.cut(0, 1)
		if ok, err := w.acquire(a, key, "A", ttl); !ok {
			t.Fatalf("A: Acquire = %v, %v", ok, err)
		}
		aValidUntil := a.clock.Now().Add(ttl - ttl/100 - 2*time.Millisecond)
		w.advance(time.Second)
		w.nodes[2].wipe()
		ok, err := w.acquire(b, key, "B", ttl)
		if !ok {
			t.Fatalf("B: Acquire = %v, %v; want the documented violation", ok, err)
		}
		if !b.clock.Now().Before(aValidUntil) {
			t.Fatalf("no overlap shown")
		}
		t.Logf("demonstrated: after node 2 restarted empty, A and B both hold a majority")
	})
	t.Run("restart delayed by the TTL: exclusion holds", func(t *testing.T) {
		w := newWorld(t, 5)
		a, b := w.client(redlock.Options{}), w.client(redlock.Options{})
		a.cut(3, 4)
		b.cut(0, 1)
		if ok, err := w.acquire(a, key, "A", ttl); !ok {
			t.Fatalf("A: Acquire = %v, %v", ok, err)
		}
		aValidUntil := a.clock.Now().Add(ttl - ttl/100 - 2*time.Millisecond)
		w.advance(time.Second)
		w.nodes[2].wipe()
		w.nodes[2].setDown(true)
		upAt := w.nodes[2].clock.Now().Add(ttl) // down for one TTL
		for i := 0; ; i++ {
			if i > 40 {
				t.Fatalf("B never acquired")
			}
			if !w.nodes[2].clock.Now().Before(upAt) {
				w.nodes[2].setDown(false)
			}
			ok, err := w.acquire(b, key, "B", ttl)
			if ok {
				if b.clock.Now().Before(aValidUntil) {
					t.Fatalf("B acquired at %v, before A's validity ended at %v", b.clock.Now(), aValidUntil)
				}
				break
			}
			var rerr *redlock.Error
			if !errors.As(err, &rerr) || !errors.Is(err, redlock.ErrNoQuorum) {
				t.Fatalf("B: Acquire while node 2 is down = %v, want an *Error wrapping ErrNoQuorum", err)
			}
			if got := rerr.FailedNodes(); !slices.Equal(got, []string{"node0", "node1", "node2"}) {
				t.Fatalf("B: failed nodes = %v, want [node0 node1 node2]", got)
			}
			if !errors.Is(err, errNodeDown) || !errors.Is(err, errPartition) {
				t.Fatalf("B: error %v does not wrap the node errors", err)
			}
			w.advance(500 * time.Millisecond)
		}
	})
}

// TestDelayedReplies: replies arrive late on the client's clock.
func TestDelayedReplies(t *testing.T) {
	run := func(t *testing.T, nodeTimeout, delay time.Duration, slow []int) (*world, *client, chan error) {
		w := newWorld(t, 5)
		c := w.client(redlock.Options{NodeTimeout: nodeTimeout})
		// Every node signals: slow ones when they start waiting, fast ones
		// once they answered, so the clock moves only when no node call
		// can still be on its way to a node.
		waiting := make(chan struct{}, len(w.nodes))
		for i := range w.nodes {
			if slices.Contains(slow, i) {
				c.links[i].Backend = &slowReplies{Backend: w.nodes[i], clock: c.clock, delay: delay, waiting: waiting}
			} else {
				c.links[i].Backend = &answered{Backend: w.nodes[i], done: waiting}
			}
		}
		done := make(chan error, 1)
		go func() {
			ok, err := w.acquire(c, key, "A", ttl)
			if ok {
				err = nil
			} else if err == nil {
				err = errors.New("not acquired")
			}
			done <- err
		}()
		for range w.nodes {
			<-waiting
		}
		c.clock.Add(delay)
		return w, c, done
	}
	t.Run("past validity: refused and released everywhere", func(t *testing.T) {
		// A node timeout above the TTL lets replies arrive after the
		// validity: the elapsed-time check must still refuse the lock.
		w, _, done := run(t, 2*ttl, ttl, []int{0, 1, 2, 3, 4})
		err := <-done
		if !errors.Is(err, redlock.ErrValidityExpired) {
			t.Fatalf("Acquire with replies after %v = %v, want ErrValidityExpired", ttl, err)
		}
		if got := w.holders(key, "A"); len(got) != 0 {
			t.Fatalf("nodes still holding A after the failed Acquire = %v, want none", got)
		}
	})
	t.Run("past the node timeout: those nodes fail and are released", func(t *testing.T) {
		w, _, done := run(t, 50*time.Millisecond, time.Second, []int{0, 1, 2})
		err := <-done
		var rerr *redlock.Error
		if !errors.As(err, &rerr) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v, want an *Error wrapping context.DeadlineExceeded", err)
		}
		if got := rerr.FailedNodes(); !slices.Equal(got, []string{"node0", "node1", "node2"}) {
			t.Fatalf("failed nodes = %v, want [node0 node1 node2]", got)
		}
		if got := w.holders(key, "A"); len(got) != 0 {
			t.Fatalf("nodes still holding A = %v, want none (the late writes must be released)", got)
		}
	})
	t.Run("a slow minority costs only its votes", func(t *testing.T) {
		w, c, done := run(t, 50*time.Millisecond, time.Second, []int{3, 4})
		if err := <-done; err != nil {
			t.Fatalf("Acquire with 2 slow nodes of 5 = %v, want ok", err)
		}
		// The validity counts from the start: 50ms went by waiting.
		d, ok, err := c.rl.PTTL(context.Background(), key, "A")
		if !ok || err != nil || d > ttl-50*time.Millisecond || d <= 0 {
			t.Fatalf("PTTL = %v, %v, %v, want (0, ttl-50ms]", d, ok, err)
		}
		_ = w
	})
}

// TestQuorumLoss is the scenario of redsync issue 186: A and B contend at
// once; A wins nodes 0-2, B gets only 3 and 4, fails and releases them; then
// node 2 loses A's key (a crash with failover to a replica that never got
// it) and B's retry takes 2-4. Two holders: the documented violation. What
// Redlock does guarantee: A learns of the loss at its next Refresh, which
// never harms B; and an A holding all five nodes survives the same loss.
func TestQuorumLoss(t *testing.T) {
	contend := func(t *testing.T, bFirst []int) (*world, *client, *client) {
		w := newWorld(t, 5)
		a, b := w.client(redlock.Options{}), w.client(redlock.Options{})
		ctx := context.Background()
		for _, i := range bFirst { // B's requests reached these nodes first
			if _, ok, _ := w.nodes[i].Acquire(ctx, key, "B", ttl); !ok {
				t.Fatalf("node %d refused B", i)
			}
		}
		ok, err := w.acquire(a, key, "A", ttl)
		if !ok {
			t.Fatalf("A: Acquire = %v, %v, want ok", ok, err)
		}
		for _, i := range bFirst { // B had no majority: it releases
			w.nodes[i].Release(ctx, key, "B")
		}
		w.advance(time.Second)
		w.nodes[2].wipe()
		return w, a, b
	}
	t.Run("bare majority: two holders", func(t *testing.T) {
		w, a, b := contend(t, []int{3, 4})
		ok, err := w.acquire(b, key, "B", ttl)
		if !ok {
			t.Fatalf("B: Acquire = %v, %v; want the documented violation", ok, err)
		}
		if got := w.holders(key, "A"); !slices.Equal(got, []int{0, 1}) {
			t.Fatalf("nodes holding A = %v, want [0 1]", got)
		}
		t.Logf("demonstrated: A holds nodes 0,1 within its validity while B holds 2,3,4")
		// A's next refresh reports the loss and leaves B alone.
		if ok, err := a.rl.Refresh(context.Background(), key, "A", ttl); ok || err != nil {
			t.Fatalf("A: Refresh = %v, %v, want false, nil (lost)", ok, err)
		}
		if got := w.holders(key, "B"); !slices.Equal(got, []int{2, 3, 4}) {
			t.Fatalf("nodes holding B after A's refresh = %v, want [2 3 4]", got)
		}
		if got := w.holders(key, "A"); len(got) != 0 {
			t.Fatalf("nodes holding A after its failed refresh = %v, want none", got)
		}
	})
	t.Run("all five: the loss of one node is harmless", func(t *testing.T) {
		w, a, b := contend(t, nil)
		if ok, err := w.acquire(b, key, "B", ttl); ok || err != nil {
			t.Fatalf("B: Acquire = %v, %v, want false, nil (A still holds 4 of 5)", ok, err)
		}
		if ok, err := a.rl.Refresh(context.Background(), key, "A", ttl); !ok || err != nil {
			t.Fatalf("A: Refresh = %v, %v, want true", ok, err)
		}
	})
}

// TestRetryAfterNoQuorum: a try without quorum is retried after a random
// delay in [min, max] on the client's clock.
func TestRetryAfterNoQuorum(t *testing.T) {
	w := newWorld(t, 5)
	c := w.client(redlock.Options{Tries: 3, TryDelayMin: 20 * time.Millisecond, TryDelayMax: 40 * time.Millisecond})
	for _, i := range []int{2, 3, 4} {
		w.nodes[i].setDown(true)
	}
	start := c.clock.Now()
	done := make(chan error, 1)
	go func() {
		ok, err := w.acquire(c, key, "A", ttl)
		if !ok && err == nil {
			err = errors.New("not acquired")
		}
		done <- err
	}()
	// Once the first try has failed (node 0 got A's release), bring the
	// nodes back and let the client's clock run.
	for w.nodes[0].releases.Load() == 0 {
		runtime.Gosched()
	}
	for _, i := range []int{2, 3, 4} {
		w.nodes[i].setDown(false)
	}
	var err error
	for i := 0; ; i++ {
		select {
		case err = <-done:
		default:
			if i == 10 {
				t.Fatalf("Acquire still blocked after 50ms of fake time")
			}
			c.clock.Add(5 * time.Millisecond)
			continue
		}
		break
	}
	if err != nil {
		t.Fatalf("Acquire = %v, want ok on the second try", err)
	}
	// The retry timer may be armed a step late, so only the lower bound is
	// exact.
	if waited := c.clock.Since(start); waited < 20*time.Millisecond || waited > 50*time.Millisecond {
		t.Fatalf("retried after %v of fake time, want within [20ms, 40ms] (+ a 5ms step or two)", waited)
	}
	if n := w.nodes[0].acquires.Load(); n != 2 {
		t.Fatalf("node 0 saw %d acquire calls, want 2 (two tries)", n)
	}
}

func TestMaxExtensions(t *testing.T) {
	w := newWorld(t, 3)
	c := w.client(redlock.Options{MaxExtensions: 2})
	ctx := context.Background()
	if ok, err := w.acquire(c, key, "A", ttl); !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	for i := 0; i < 2; i++ {
		w.advance(time.Second)
		if ok, err := c.rl.Refresh(ctx, key, "A", ttl); !ok || err != nil {
			t.Fatalf("Refresh #%d = %v, %v, want true", i+1, ok, err)
		}
	}
	if ok, err := c.rl.Refresh(ctx, key, "A", ttl); ok || !errors.Is(err, redlock.ErrExtensionLimit) {
		t.Fatalf("third Refresh = %v, %v, want ErrExtensionLimit", ok, err)
	}
	// The lock itself is still held until its validity ends.
	if d, ok, err := c.rl.PTTL(ctx, key, "A"); !ok || err != nil || d > ttl {
		t.Fatalf("PTTL after the cap = %v, %v, %v, want held", d, ok, err)
	}
}

// TestRefreshNeedsValidity: a refresh that starts after the validity ran out
// fails even though the nodes, thanks to the drift margin, still hold the
// key; the value is then released.
func TestRefreshNeedsValidity(t *testing.T) {
	w := newWorld(t, 3)
	c := w.client(redlock.Options{})
	ctx := context.Background()
	if ok, err := w.acquire(c, key, "A", ttl); !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	w.advance(ttl - 50*time.Millisecond) // past ttl - drift (9.898s)
	if got := w.holders(key, "A"); len(got) != 3 {
		t.Fatalf("nodes holding A just after its validity = %v, want all (drift margin)", got)
	}
	if ok, err := c.rl.Refresh(ctx, key, "A", ttl); ok || err != nil {
		t.Fatalf("Refresh after the validity = %v, %v, want false, nil", ok, err)
	}
	if got := w.holders(key, "A"); len(got) != 0 {
		t.Fatalf("nodes holding A after the refused refresh = %v, want none", got)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	n := newFakeNode(t)
	tests := []struct {
		name  string
		nodes []lockapi.Backend
		opts  redlock.Options
	}{
		{"no nodes", nil, redlock.Options{}},
		{"nil node", []lockapi.Backend{n, nil}, redlock.Options{}},
		{"drift factor", []lockapi.Backend{n}, redlock.Options{DriftFactor: 0.5}},
		{"negative drift factor", []lockapi.Backend{n}, redlock.Options{DriftFactor: -0.1}},
		{"negative drift", []lockapi.Backend{n}, redlock.Options{DriftMin: -1}},
		{"negative tries", []lockapi.Backend{n}, redlock.Options{Tries: -1}},
		{"delays", []lockapi.Backend{n}, redlock.Options{Tries: 2, TryDelayMin: time.Second, TryDelayMax: time.Millisecond}},
		{"negative delay", []lockapi.Backend{n}, redlock.Options{TryDelayMin: -1}},
		{"names", []lockapi.Backend{n}, redlock.Options{Names: []string{"a", "b"}}},
		{"timeout", []lockapi.Backend{n}, redlock.Options{NodeTimeout: -1}},
		{"extensions", []lockapi.Backend{n}, redlock.Options{MaxExtensions: -1}},
	}
	for _, tt := range tests {
		if _, err := redlock.New(tt.nodes, tt.opts); !errors.Is(err, redlock.ErrInvalidConfig) {
			t.Errorf("New(%s) = %v, want ErrInvalidConfig", tt.name, err)
		}
	}
	rl, err := redlock.New([]lockapi.Backend{n}, redlock.Options{})
	if err != nil {
		t.Fatalf("New(one node) = %v", err)
	}
	if _, _, err := rl.Acquire(context.Background(), key, "v", 0); !errors.Is(err, lockapi.ErrInvalidTTL) {
		t.Errorf("Acquire(ttl 0) = %v, want lockapi.ErrInvalidTTL", err)
	}
	if n.value(key) != "" {
		t.Errorf("Acquire(ttl 0) stored a value")
	}
}

// TestOpenOutcomes: when failed nodes leave a call's outcome open, Refresh,
// PTTL and Release return an *Error naming them, and the previous validity
// stands, so a retry once the nodes are back succeeds.
func TestOpenOutcomes(t *testing.T) {
	w := newWorld(t, 3)
	c := w.client(redlock.Options{})
	ctx := context.Background()
	if ok, err := w.acquire(c, key, "A", ttl); !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	w.nodes[1].setDown(true)
	w.nodes[2].setDown(true)
	checkOpen := func(call string, ok bool, err error) {
		t.Helper()
		var rerr *redlock.Error
		if ok || !errors.As(err, &rerr) || !errors.Is(err, errNodeDown) {
			t.Fatalf("%s with 2 of 3 nodes down = %v, %v, want an *Error wrapping the node errors", call, ok, err)
		}
		if got := rerr.FailedNodes(); !slices.Equal(got, []string{"node1", "node2"}) {
			t.Fatalf("%s failed nodes = %v, want [node1 node2]", call, got)
		}
	}
	ok, err := c.rl.Refresh(ctx, key, "A", ttl)
	checkOpen("Refresh", ok, err)
	_, ok, err = c.rl.PTTL(ctx, key, "A")
	checkOpen("PTTL", ok, err)
	w.advance(time.Second)
	w.nodes[1].setDown(false)
	w.nodes[2].setDown(false)
	if ok, err := c.rl.Refresh(ctx, key, "A", ttl); !ok || err != nil {
		t.Fatalf("Refresh once the nodes are back = %v, %v, want true", ok, err)
	}
	if d, ok, err := c.rl.PTTL(ctx, key, "A"); !ok || err != nil || d <= ttl-time.Second {
		t.Fatalf("PTTL after the refresh = %v, %v, %v, want about ttl - drift", d, ok, err)
	}
	w.nodes[0].setDown(true)
	w.nodes[1].setDown(true)
	ok, err = c.rl.Release(ctx, key, "A")
	var rerr *redlock.Error
	if ok || !errors.As(err, &rerr) || !slices.Equal(rerr.FailedNodes(), []string{"node0", "node1"}) {
		t.Fatalf("Release with 2 of 3 nodes down = %v, %v, want an *Error naming node0 and node1", ok, err)
	}
	if got := w.holders(key, "A"); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("nodes holding A = %v, want [0 1] (node 2 released)", got)
	}
}
