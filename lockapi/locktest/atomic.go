package locktest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nxkv/nxkv/lockapi"
)

// The all-or-nothing check of multi-key locks: goroutines take random
// subsets of three keys with ObtainAll (no waiting), release what they got,
// and probe, through the Backend, whether a key holds a given acquisition's
// value. porcupine then searches for a sequential order, consistent with
// real time, in which a model of three keys taken and freed together
// explains every result. A probe that finds the value of an ObtainAll that
// failed, or finds one key of a successful one before the others were
// taken, has no such order.

type atomicOp uint8

const (
	opAcquire atomicOp = iota
	opRelease
	opProbe
)

type atomicInput struct {
	op    atomicOp
	keys  [3]bool // which of the three keys (opAcquire, opRelease)
	key   int     // the probed key (opProbe)
	value string
}

type atomicOutput struct {
	ok bool
}

// atomicState is who holds each of the three keys ("" for nobody).
type atomicState [3]string

func atomicStep(state, input, output any) (bool, any) {
	s, in, ok := state.(atomicState), input.(atomicInput), output.(atomicOutput).ok
	switch in.op {
	case opAcquire:
		free := true
		for k, want := range in.keys {
			if want && s[k] != "" {
				free = false
			}
		}
		if ok != free {
			return false, s
		}
		if ok {
			for k, want := range in.keys {
				if want {
					s[k] = in.value
				}
			}
		}
	case opRelease:
		all := true
		for k, want := range in.keys {
			if want && s[k] != in.value {
				all = false
			}
		}
		if ok != all {
			return false, s
		}
		for k, want := range in.keys {
			if want && s[k] == in.value {
				s[k] = ""
			}
		}
	case opProbe:
		if ok != (s[in.key] == in.value) {
			return false, s
		}
	}
	return true, s
}

var atomicModel = porcupine.Model{
	Init: func() any { return atomicState{} },
	Step: atomicStep,
	DescribeOperation: func(input, output any) string {
		in, ok := input.(atomicInput), output.(atomicOutput).ok
		return fmt.Sprintf("%d %v %d %s -> %v", in.op, in.keys, in.key, in.value, ok)
	},
}

// atomicHistory runs the workload once over c (ObtainAll, Release) and b
// (probes with PTTL) on keys and returns its history.
func atomicHistory(t *testing.T, c *lockapi.Client, b lockapi.Backend, keys [3]string, goroutines, ops int, seed uint64) []porcupine.Operation {
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		values  []string // every acquisition's value, for probes
	)
	record := func(g int, in atomicInput, call int64, ok bool) {
		ret := now()
		mu.Lock()
		history = append(history, porcupine.Operation{ClientId: g, Input: in, Call: call, Output: atomicOutput{ok}, Return: ret})
		mu.Unlock()
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			var held *lockapi.Lock
			var heldIn atomicInput
			for i := range ops {
				switch {
				case held != nil && rng.IntN(2) == 0:
					in := heldIn
					in.op = opRelease
					call := now()
					err := held.Release(ctx)
					if err != nil && !errors.Is(err, lockapi.ErrNotHeld) {
						errs <- err
						return
					}
					record(g, in, call, err == nil)
					held = nil
				case rng.IntN(3) == 0:
					mu.Lock()
					if len(values) == 0 {
						mu.Unlock()
						continue
					}
					v := values[len(values)-1-rng.IntN(min(len(values), 8))]
					mu.Unlock()
					in := atomicInput{op: opProbe, key: rng.IntN(3), value: v}
					call := now()
					_, ok, err := b.PTTL(ctx, keys[in.key], v)
					if err != nil {
						errs <- err
						return
					}
					record(g, in, call, ok)
				case held == nil:
					in := atomicInput{op: opAcquire, value: fmt.Sprintf("g%d-op%d", g, i)}
					var names []string
					for len(names) < 2 {
						names = names[:0]
						for k := range keys {
							in.keys[k] = rng.IntN(3) > 0
							if in.keys[k] {
								names = append(names, keys[k])
							}
						}
					}
					mu.Lock()
					values = append(values, in.value)
					mu.Unlock()
					call := now()
					l, err := c.ObtainAll(ctx, names, time.Hour, &lockapi.ObtainOptions{Token: in.value})
					if err != nil && !errors.Is(err, lockapi.ErrNotObtained) {
						errs <- err
						return
					}
					record(g, in, call, err == nil)
					if err == nil {
						held, heldIn = l, in
					}
				}
			}
			if held != nil {
				in := heldIn
				in.op = opRelease
				call := now()
				err := held.Release(ctx)
				record(g, in, call, err == nil)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("multi-key workload: %v", err)
	}
	return history
}

// testMultiAtomic checks, with porcupine, that concurrent ObtainAll calls
// are all-or-nothing and atomic: see the top of this file.
func testMultiAtomic(t *testing.T, s *suite) {
	s.multiLocks()
	c := s.client()
	ks := s.keys(3)
	keys := [3]string{ks[0], ks[1], ks[2]}
	for round := range 4 {
		h := atomicHistory(t, c, s.env.Backend, keys, 4, 60, uint64(round))
		res, info := porcupine.CheckOperationsVerbose(atomicModel, h, 20*time.Second)
		switch res {
		case porcupine.Illegal:
			t.Fatalf("round %d: %d operations on three keys have no sequential explanation: a multi-key acquisition was not all-or-nothing (%s)",
				round, len(h), describeIllegal(&info))
		case porcupine.Unknown:
			t.Logf("round %d: porcupine timed out on %d operations", round, len(h))
		}
	}
}

// describeIllegal names the longest partial linearization porcupine found.
func describeIllegal(info *porcupine.LinearizationInfo) string {
	parts := info.PartialLinearizationsOperations()
	if len(parts) == 0 || len(parts[0]) == 0 {
		return "no partial order"
	}
	longest := parts[0][0]
	for _, p := range parts[0] {
		if len(p) > len(longest) {
			longest = p
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "longest explained prefix: %d operations, ending", len(longest))
	for _, op := range longest[max(0, len(longest)-3):] {
		fmt.Fprintf(&b, " [%s]", atomicModel.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}
