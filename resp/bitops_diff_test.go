package resp_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nxkv/nxkv/resp"
)

// bitStream returns n steps dense in bitmap commands over five keys, with
// string writes (SET, APPEND, SETRANGE) and typed values mixed in, and
// MULTI blocks.
func (g *gen) bitStream(n int) []step {
	var out []step
	for len(out) < n {
		k := g.key()
		var st step
		switch r := g.r.IntN(20); {
		case r < 13:
			st = g.bitStep(k)
		case r == 13:
			st = step{args: []string{"set", k, g.pick("", "a", "\xff\xf0", "foobar", "\x00\x00\x01", "12345")}}
		case r == 14:
			st = step{args: []string{"append", k, g.pick("\xff", "\x00", "ab")}}
		case r == 15:
			st = step{args: []string{"setrange", k, g.pick("0", "3", "9"), g.pick("\xaa", "zz")}}
		case r == 16:
			st = step{args: []string{"get", k}}
		case r == 17:
			st = step{args: []string{g.pick("rpush", "sadd", "hset"), k, "f", "v"}}
		case r == 18:
			st = step{args: []string{"del", k}}
		default:
			out = append(out, step{args: []string{"multi"}}, g.bitStep(k), g.bitStep(g.key()), step{args: []string{"exec"}})
			continue
		}
		out = append(out, st)
	}
	return out
}

// TestBitmapsMatchRedis compares, byte for byte in RESP2 and RESP3, random
// streams of SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
// BITFIELD_RO, with the options and errors of each, on values written
// as strings too.
func TestBitmapsMatchRedis(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	seed, streams, _ := diffStreams(30, 6)
	for _, i := range streams {
		g := &gen{r: rand.New(rand.NewPCG(seed, uint64(i))), now: time.Now()}
		if d := diff(t, redisAddr, nxkvAddr, g.bitStream(200), i%2 == 1); d != "" {
			t.Fatalf("stream %d (seed %d, resp3 %v; rerun with NXKV_DIFF_SEED=%d): %s", i, seed, i%2 == 1, seed, d)
		}
		flushBoth(t, redisAddr, nxkvAddr)
	}
}
