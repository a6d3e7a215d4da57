package engine_test

import (
	"testing"
)

// maxFuzzOps bounds one input's op sequence so each exec stays fast (a clock
// advance costs the mock ~1 ms of real time).
const maxFuzzOps = 200

// decodeOps turns bytes into ops with the same builder rapid uses: every
// choice consumes one byte (0 once the input is exhausted), so any input
// decodes to a valid sequence.
func decodeOps(data []byte) []op {
	var ops []op
	i := 0
	pick := func(n int) int {
		if i >= len(data) {
			return 0
		}
		b := data[i]
		i++
		return int(b) % n
	}
	for i < len(data) && len(ops) < maxFuzzOps {
		ops = append(ops, buildOp(pick))
	}
	return ops
}

// FuzzOps runs decoded op sequences on the engine and the reference model
// of model_test.go, comparing every result and the invariants after every
// step. Plain go test runs the seeds below.
func FuzzOps(f *testing.F) {
	kind := func(k opKind) byte {
		for i, w := range opWeights {
			if w == k {
				return byte(i)
			}
		}
		panic("kind missing from opWeights")
	}
	// SetPX("a", "x", 1s), advance to the deadline exactly, then 1ns past.
	f.Add([]byte{kind(opSetPX), 0, 0, 0, kind(opAdvanceToDeadline), 0, kind(opGet), 0, kind(opAdvanceToDeadline), 2, kind(opGet), 0})
	// SetNXPX with ttl 0 and MaxInt64 (errors), then SetNX on an expired key.
	f.Add([]byte{kind(opSetNXPX), 1, 0, 5, kind(opSetNXPX), 1, 0, 11, kind(opSetNXPX), 1, 0, 2, kind(opAdvance), 2, kind(opAdvance), 2, kind(opSetNX), 1, 1, kind(opLen), kind(opReap)})
	// IncrBy on integers, non-integers and overflow.
	f.Add([]byte{kind(opSet), 0, 10, kind(opIncrBy), 0, 5, kind(opIncrBy), 0, 4, kind(opSet), 0, 5, kind(opIncrBy), 0, 1, kind(opIncrBy), 0, 2})
	// SetWith: every condition, KEEPTTL, At in the past, conflicting args.
	f.Add([]byte{kind(opSetPX), 2, 1, 4, kind(opSetWith), 2, 0, 3, 0, 1, 3, kind(opSetWith), 2, 1, 4, 1, 0, 2, 4, kind(opSetWith), 2, 0, 0, 0, 0, 4, 3, kind(opPTTL), 2})
	// PExpireCond NX/XX/GT/LT on keys with and without TTL, PExpireAt, Persist.
	f.Add([]byte{kind(opSet), 3, 0, kind(opPExpireCond), 3, 0, 3, kind(opPExpireCond), 3, 0, 4, kind(opPExpireCond), 3, 1, 1, kind(opPExpireCond), 3, 4, 2, kind(opPersist), 3, kind(opPExpireAt), 3, 2, kind(opPTTL), 3})
	// Compare-and-* on the current value, Del of several keys.
	f.Add([]byte{kind(opSetNXPX), 0, 0, 0, kind(opCompareAndPExpire), 0, 0, 1, 4, kind(opCompareAndSwap), 0, 0, 1, 1, kind(opCompareAndDelete), 0, 0, 1, kind(opDel), 3, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, closeEngine := newHarness(nil)
		defer closeEngine()
		h.check(t)
		for _, o := range decodeOps(data) {
			h.exec(t, o)
		}
	})
}
