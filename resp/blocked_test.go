package resp_test

// Tests of the blocking pops on nxkv alone: a porcupine check of
// concurrent histories (every pushed element to exactly one popper, in
// list order, waiters served in the order they blocked, timeouts only when
// nothing came), timeouts on an injected clock, and waiters whose client
// closes.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// A history of one key's waiters and pushers, in rounds: each round
// registers waiters one after the other (the key empty), then pushes
// elements concurrently, from clients, scripts and MULTI/EXEC, while the
// waiters wait for their results; a round ends with a DEL.
type (
	blockIn struct {
		op     string   // "register", "result", "push", "del"
		waiter int      // register, result
		vals   []string // push
	}
	blockOut struct {
		val string // result: the element, or "" for a timeout
	}
	// blockState is the model's state: the list, the waiters in the order
	// they blocked, and what was handed to each waiter.
	blockState struct {
		list    []string
		waiting []int
		got     map[int]string
	}
)

func (s blockState) clone() blockState {
	c := blockState{list: slices.Clone(s.list), waiting: slices.Clone(s.waiting), got: map[int]string{}}
	for k, v := range s.got {
		c.got[k] = v
	}
	return c
}

// blockModel is the specification: a push hands its elements to the
// waiters in the order they blocked, one each, and appends the rest; a
// waiter's result is what it was handed, or a timeout only while it was
// handed nothing.
var blockModel = porcupine.Model{
	Init: func() any { return blockState{got: map[int]string{}} },
	Step: func(state, input, output any) (bool, any) {
		s := state.(blockState).clone()
		in, out := input.(blockIn), output.(blockOut)
		switch in.op {
		case "register":
			if len(s.list) != 0 {
				return false, s
			}
			s.waiting = append(s.waiting, in.waiter)
			return true, s
		case "push":
			for _, v := range in.vals {
				if len(s.waiting) > 0 {
					s.got[s.waiting[0]] = v
					s.waiting = s.waiting[1:]
				} else {
					s.list = append(s.list, v)
				}
			}
			return true, s
		case "result":
			if v, ok := s.got[in.waiter]; ok {
				delete(s.got, in.waiter)
				return out.val == v, s
			}
			i := slices.Index(s.waiting, in.waiter)
			if out.val != "" || i < 0 {
				return false, s
			}
			s.waiting = slices.Delete(s.waiting, i, i+1)
			return true, s
		case "del":
			s.list = nil
			return true, s
		}
		return false, s
	},
	Equal: func(a, b any) bool { return reflect.DeepEqual(a, b) },
	DescribeOperation: func(input, output any) string {
		in := input.(blockIn)
		return fmt.Sprintf("%s w%d %q -> %q", in.op, in.waiter, in.vals, output.(blockOut).val)
	},
}

// blockHistory runs rounds of waiters and pushers on s, whose clock is mc,
// and returns the history. The waiters wait one second: once a round's
// pushes are done, mc passes it, and the waiters handed nothing time out.
func blockHistory(t *testing.T, s *resp.Server, mc *clock.Mock, rounds, waiters, pushers int, r *rand.Rand) []porcupine.Operation {
	t.Helper()
	start := time.Now()
	now := func() int64 { return time.Since(start).Nanoseconds() }
	var mu sync.Mutex
	var history []porcupine.Operation
	record := func(client int, in blockIn, call int64, out blockOut) {
		mu.Lock()
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: now()})
		mu.Unlock()
	}
	admin := dialRaw(t, s.Addr())
	wconns := make([]*rawConn, waiters)
	for i := range wconns {
		wconns[i] = dialRaw(t, s.Addr())
	}
	pconns := make([]*rawConn, pushers)
	for i := range pconns {
		pconns[i] = dialRaw(t, s.Addr())
	}
	next := 0
	for round := range rounds {
		var wg, pushing sync.WaitGroup
		for i, c := range wconns {
			id := round*waiters + i
			call := now()
			if err := c.Send([]string{"blpop", "q", "1"}); err != nil {
				t.Fatal(err)
			}
			if !waitBlocked(t, admin, i+1) {
				t.Fatalf("round %d: waiter %d never blocked", round, i)
			}
			record(1000+id, blockIn{op: "register", waiter: id}, call, blockOut{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				call := now()
				reply, err := c.Read(10 * time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				out := blockOut{}
				if v, err := parseReply(reply); err == nil && v != nil {
					out.val = v.([]any)[1].(string)
				}
				record(1000+id, blockIn{op: "result", waiter: id}, call, out)
			}()
		}
		for p, c := range pconns {
			n := 1 + r.IntN(3)
			vals := make([]string, n)
			for i := range vals {
				vals[i] = "v" + strconv.Itoa(next)
				next++
			}
			how := r.IntN(3)
			pushing.Add(1)
			go func() {
				defer pushing.Done()
				call := now()
				var err error
				switch how {
				case 0:
					_, err = c.do(append([]string{"rpush", "q"}, vals...))
				case 1:
					_, err = c.do(append([]string{"eval", "return redis.call('rpush', KEYS[1], unpack(ARGV))", "1", "q"}, vals...))
				default:
					_, err = c.do([]string{"multi"})
					for _, v := range vals {
						if err == nil {
							_, err = c.do([]string{"rpush", "q", v})
						}
					}
					if err == nil {
						_, err = c.do([]string{"exec"})
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				record(p, blockIn{op: "push", vals: vals}, call, blockOut{})
			}()
		}
		pushing.Wait()
		mc.Add(2 * time.Second)
		wg.Wait()
		call := now()
		if _, err := admin.do([]string{"del", "q"}); err != nil {
			t.Fatal(err)
		}
		record(999, blockIn{op: "del"}, call, blockOut{})
	}
	return history
}

// TestBlockingPopsLinearizable checks histories of waiters and of pushes
// from clients, scripts and transactions against the model.
func TestBlockingPopsLinearizable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s, mc := mockServer(t)
	h := blockHistory(t, s, mc, 20, 5, 2, r) // 2 to 6 elements for 5 waiters: some time out
	if res := porcupine.CheckOperationsTimeout(blockModel, h, 60*time.Second); res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(h), res)
	}
}

// TestBlockingLinearizabilityCatchesLIFO plants the bug: waiters served
// newest first. The checker must reject the history.
func TestBlockingLinearizabilityCatchesLIFO(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s, mc := mockServer(t)
	resp.PlantLIFOWaiters(s)
	h := blockHistory(t, s, mc, 5, 3, 2, r)
	if res := porcupine.CheckOperationsTimeout(blockModel, h, 60*time.Second); res != porcupine.Illegal {
		t.Fatalf("a history with waiters served newest first passed the check (%v)", res)
	}
}

// mockServer starts a server on a mock clock set to a realistic date.
func mockServer(t *testing.T) (*resp.Server, *clock.Mock) {
	mc := clock.NewMock()
	mc.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	return resp.NewT(t, resp.Options{Clock: mc}), mc
}

// TestBlockingTimeoutOnInjectedClock: a waiter's timeout runs on the
// server's clock, in fractions of a second: it still waits just before,
// and replies nil once the fake clock passes it.
func TestBlockingTimeoutOnInjectedClock(t *testing.T) {
	s, mc := mockServer(t)
	admin, c := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	if err := c.Send([]string{"blpop", "q", "1.5"}); err != nil {
		t.Fatal(err)
	}
	if !waitBlocked(t, admin, 1) {
		t.Fatal("BLPOP did not block")
	}
	mc.Add(1499 * time.Millisecond)
	if r, err := admin.do([]string{"info", "clients"}); err != nil || !bytes.Contains(r, []byte("blocked_clients:1\r\n")) {
		t.Fatalf("the waiter ended before its timeout: %q %v", r, err)
	}
	mc.Add(2 * time.Millisecond)
	r, err := c.Read(10 * time.Second)
	if err != nil || string(r) != "*-1\r\n" {
		t.Fatalf("after the timeout: %q %v, want a null array", r, err)
	}
	// The client reads requests again, and the key is untouched.
	if r, err := c.do([]string{"rpush", "q", "a"}); err != nil || string(r) != ":1\r\n" {
		t.Fatalf("RPUSH after the timeout: %q %v", r, err)
	}
}

// TestClosedWaiterLeavesNothing: a waiter whose client closes is gone: the
// next push stays in the list, and no goroutine is left (goleak, in
// TestMain).
func TestClosedWaiterLeavesNothing(t *testing.T) {
	s := resp.RunT(t)
	admin := dialRaw(t, s.Addr())
	for _, timeout := range []string{"0", "100"} {
		nc := dialNet(t, s.Addr())
		if err := nc.Send([]string{"bzpopmin", "z", "q", timeout}); err != nil {
			t.Fatal(err)
		}
		if !waitBlocked(t, admin, 1) {
			t.Fatal("BZPOPMIN did not block")
		}
		nc.close()
		if !waitBlocked(t, admin, 0) {
			t.Fatal("the closed client's waiter stayed")
		}
	}
	if r, err := admin.do([]string{"zadd", "z", "1", "a"}); err != nil || string(r) != ":1\r\n" {
		t.Fatalf("ZADD: %q %v", r, err)
	}
	if r, err := admin.do([]string{"zcard", "z"}); err != nil || string(r) != ":1\r\n" {
		t.Fatalf("ZCARD after the push: %q %v, want the member kept", r, err)
	}
}

// TestClientUnblock: CLIENT UNBLOCK ends a waiter as a timeout or with
// Redis's error, and reports 0 for a client that is not blocked.
func TestClientUnblock(t *testing.T) {
	s := resp.RunT(t)
	admin, c := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	idr, err := c.do([]string{"client", "id"})
	if err != nil {
		t.Fatal(err)
	}
	id := string(bytes.TrimSpace(idr[1:]))
	for _, tc := range []struct{ how, want string }{
		{"timeout", "*-1\r\n"},
		{"error", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
	} {
		if err := c.Send([]string{"blmove", "a", "b", "left", "right", "0"}); err != nil {
			t.Fatal(err)
		}
		if !waitBlocked(t, admin, 1) {
			t.Fatal("BLMOVE did not block")
		}
		if r, err := admin.do([]string{"client", "unblock", id, tc.how}); err != nil || string(r) != ":1\r\n" {
			t.Fatalf("CLIENT UNBLOCK %s: %q %v", tc.how, r, err)
		}
		if r, err := c.Read(10 * time.Second); err != nil || string(r) != tc.want {
			t.Fatalf("unblocked by %s: %q %v, want %q", tc.how, r, err, tc.want)
		}
	}
	if r, err := admin.do([]string{"client", "unblock", id}); err != nil || string(r) != ":0\r\n" {
		t.Fatalf("CLIENT UNBLOCK of a client not blocked: %q %v", r, err)
	}
}

// netConn is a raw connection the test closes itself.
type netConn struct {
	*rawConn
	nc net.Conn
}

func dialNet(t *testing.T, addr string) *netConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &netConn{&rawConn{redistest.NewConn(nc)}, nc}
}

func (c *netConn) close() { c.nc.Close() }
