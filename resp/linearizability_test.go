package resp_test

// A porcupine check of concurrent histories that mix Lua scripts, MULTI/EXEC
// transactions, single-key commands and direct engine calls on two keys:
// every history must be linearizable against a model where each script and
// each transaction is one atomic step. A server whose scripts are not atomic
// is caught.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/resp"
)

// pairIn is an operation on the keys "a" and "b".
type pairIn struct {
	op string // "move" (script), "tx" (MULTI INCR a DECR b EXEC), "incr" (INCR a), "getb" (GET b), "direct" (engine IncrBy on b)
}

// pairOut is what an operation returned: the values it reports.
type pairOut struct {
	a, b int64
	err  bool
}

// pairModel is the sequential specification: a and b start at 0; move
// decrements a and increments b, tx increments a and decrements b (both
// report both), incr increments a (reports a), getb and direct read or
// increment b (report b).
var pairModel = porcupine.Model{
	Init: func() any { return [2]int64{} },
	Step: func(state, input, output any) (bool, any) {
		s := state.([2]int64)
		in, out := input.(pairIn), output.(pairOut)
		if out.err {
			return false, s
		}
		switch in.op {
		case "move":
			s[0]--
			s[1]++
			return out.a == s[0] && out.b == s[1], s
		case "tx":
			s[0]++
			s[1]--
			return out.a == s[0] && out.b == s[1], s
		case "incr":
			s[0]++
			return out.a == s[0], s
		case "getb":
			return out.b == s[1], s
		case "direct":
			s[1]++
			return out.b == s[1], s
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%s -> %+v", input.(pairIn).op, output.(pairOut))
	},
}

// moveScript reads both keys, then writes both: atomic only if the server
// runs the whole script in one section.
const moveScript = `
local a = tonumber(redis.call('get', 'a') or '0')
local b = tonumber(redis.call('get', 'b') or '0')
redis.call('set', 'a', a - 1)
redis.call('set', 'b', b + 1)
return {a - 1, b + 1}`

// pairHistory runs workers concurrent clients doing random operations and
// returns the history.
func pairHistory(t *testing.T, s *resp.Server, workers, ops int) []porcupine.Operation {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var history []porcupine.Operation
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 1, MaxRetries: -1})
			defer c.Close()
			for i := range ops {
				in := pairIn{op: []string{"move", "tx", "incr", "getb", "direct", "move"}[(w+i*7)%6]}
				call := time.Since(start).Nanoseconds()
				var out pairOut
				switch in.op {
				case "move":
					v, err := c.Eval(ctx, moveScript, nil).Int64Slice()
					out.err = err != nil || len(v) != 2
					if !out.err {
						out.a, out.b = v[0], v[1]
					}
				case "tx":
					var ia, db *redis.IntCmd
					_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
						ia = p.Incr(ctx, "a")
						db = p.Decr(ctx, "b")
						return nil
					})
					out.err = err != nil
					if !out.err {
						out.a, out.b = ia.Val(), db.Val()
					}
				case "incr":
					v, err := c.Incr(ctx, "a").Result()
					out.a, out.err = v, err != nil
				case "getb":
					v, err := c.Get(ctx, "b").Result()
					if err == redis.Nil {
						v, err = "0", nil
					}
					n, perr := strconv.ParseInt(v, 10, 64)
					out.b, out.err = n, err != nil || perr != nil
				case "direct":
					v, err := s.Engine().IncrBy("b", 1)
					out.b, out.err = v, err != nil
				}
				ret := time.Since(start).Nanoseconds()
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: w, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return history
}

// TestScriptsAndTransactionsLinearizable checks histories of scripts,
// transactions, single-key commands and direct engine calls.
func TestScriptsAndTransactionsLinearizable(t *testing.T) {
	for round := range 3 {
		s := resp.RunT(t)
		h := pairHistory(t, s, 6, 150)
		if res := porcupine.CheckOperationsTimeout(pairModel, h, 60*time.Second); res != porcupine.Ok {
			t.Fatalf("round %d: history of %d operations is not linearizable (%v)", round, len(h), res)
		}
	}
}

// TestLinearizabilityCatchesUnlockedScripts plants the bug: scripts run
// without their atomic section. The checker must reject some history.
func TestLinearizabilityCatchesUnlockedScripts(t *testing.T) {
	for round := range 20 {
		s := resp.RunT(t)
		resp.PlantUnlockedScripts(s)
		h := pairHistory(t, s, 6, 150)
		if res := porcupine.CheckOperationsTimeout(pairModel, h, 60*time.Second); res == porcupine.Illegal {
			t.Logf("caught in round %d", round)
			return
		}
	}
	t.Fatal("20 histories with non-atomic scripts all passed the check")
}
