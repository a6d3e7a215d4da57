package engine

import (
	"github.com/nxkv/nxkv/shard"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestInvariantsRandom drives random operations, clock advances and reaps,
// and checks the internal invariants after every step.
func TestInvariantsRandom(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			e, mc := newTestEngine(t)
			rng := rand.New(rand.NewPCG(seed, 7))
			key := func() string { return "k" + strconv.Itoa(rng.IntN(8)) }
			ttl := func() time.Duration { return time.Duration(rng.IntN(20)-2) * time.Millisecond }
			var stops []func()
			ops := []func(){
				func() { e.Get(key()) },
				func() { e.Set(key(), "v") },
				func() { e.SetPX(key(), "v", ttl()) },
				func() { e.SetNX(key(), "v") },
				func() { e.SetNXPX(key(), "v", ttl()) },
				func() {
					e.SetWith(key(), "w", SetArgs{Cond: Condition(rng.IntN(5)), Match: "v", TTL: ttl() * time.Duration(rng.IntN(2))})
				},
				func() { e.SetWith(key(), "w", SetArgs{At: mc.Now().Add(ttl())}) },
				func() { e.SetWith(key(), "w", SetArgs{KeepTTL: true}) },
				func() { e.GetSet(key(), "v") },
				func() { e.GetDel(key()) },
				func() { e.CompareAndDelete(key(), "v") },
				func() { e.CompareAndSwap(key(), "v", "w") },
				func() { e.CompareAndPExpire(key(), "v", ttl()) },
				func() { e.Del(key(), key(), key()) },
				func() { e.PExpire(key(), ttl()) },
				func() { e.PExpireCond(key(), ttl(), ExpireCond(rng.IntN(5))) },
				func() { e.PExpireAt(key(), mc.Now().Add(ttl())) },
				func() { e.PTTL(key()) },
				func() { e.Persist(key()) },
				func() { e.IncrBy(key(), 1) },
				func() { e.Reap() },
				func() { mc.Add(time.Duration(rng.IntN(3000)) * time.Microsecond) },
				func() { _, stop := e.Watch(key()); stops = append(stops, stop) },
				func() {
					if len(stops) > 0 {
						i := rng.IntN(len(stops))
						stops[i]()
						stops = append(stops[:i], stops[i+1:]...)
					}
				},
			}
			for step := range 2000 {
				op := rng.IntN(len(ops))
				ops[op]()
				if err := e.verify(); err != nil {
					t.Fatalf("step %d (op %d): %v", step, op, err)
				}
			}
			for _, stop := range stops {
				stop()
			}
		})
	}
}

// TestVerifyCatchesCorruption shows the checker can fail: each planted
// corruption of the internal state is reported.
func TestVerifyCatchesCorruption(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry)
	}{
		{"DeadlineNotScheduled", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			s.Aux.wheel.Cancel(hd)
		}},
		{"ScheduledWithoutDeadline", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			ent.Exp = noDeadline
		}},
		{"WrongKey", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			ent.Key = "other"
		}},
		{"WrongWheelDeadline", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			s.Aux.wheel.Schedule(hd, ent.Exp)
		}},
		{"DirtyFreeEntry", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			h := e.m.Hash("gone")
			s.InsertLocked(h, "gone", "v", noDeadline)
			ghd, pos, _ := s.FindLocked(h, "gone")
			s.DeleteLocked(ghd, pos)
			s.EntryLocked(ghd).Value = "x"
		}},
		{"LostFromIndex", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			h := e.m.Hash(ent.Key)
			_, pos, _ := s.FindLocked(h, ent.Key)
			s.DeleteLocked(hd, pos)
			*ent = shard.Entry{Key: "k", Value: "v", Exp: ent.Exp} // in the wheel, not the index
		}},
		{"StaleWatcher", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			observe(s).watchers = map[string][]*watcher{"k": {{done: true}}}
		}},
		{"IdleObservers", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			observe(s) // kept with no watcher and no listener: every change pays for it
		}},
		{"StrayFeed", func(e *Engine, s *shardT, hd shard.Handle, ent *shard.Entry) {
			observe(s).feed = &feed{} // a shard delivering where the engine has no listener
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			e.SetPX("k", "v", time.Hour)
			if err := e.verify(); err != nil {
				t.Fatalf("verify() before corruption = %v", err)
			}
			h := e.m.Hash("k")
			s, _ := e.m.Shard(h)
			s.Lock()
			hd, _, _ := s.FindLocked(h, "k")
			tt.corrupt(e, s, hd, s.EntryLocked(hd))
			s.Unlock()
			if err := e.verify(); err == nil {
				t.Fatalf("verify() after %s = nil, want an error", tt.name)
			} else {
				t.Logf("caught: %v", err)
			}
		})
	}
}

// TestInvariantsConcurrent races writers, readers, watchers, Reap and the
// reaper (the clock advanced by one goroutine) over a few keys, checking the
// invariants while they run and after. Run it under -race.
func TestInvariantsConcurrent(t *testing.T) {
	e, mc := newTestEngine(t)
	const workers, steps = 4, 20000
	done := make(chan struct{})
	errs := make(chan error, workers+2)
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for range steps {
				k := "k" + strconv.Itoa(rng.IntN(16))
				ttl := time.Duration(rng.IntN(4000)+1) * time.Microsecond
				switch rng.IntN(9) {
				case 0:
					e.SetNXPX(k, "v", ttl)
				case 1:
					e.CompareAndDelete(k, "v")
				case 2:
					e.CompareAndPExpire(k, "v", ttl)
				case 3:
					e.Set(k, "v")
				case 4:
					e.Get(k)
				case 5:
					e.Del(k, "k"+strconv.Itoa(rng.IntN(16)))
				case 6:
					_, stop := e.Watch(k)
					if rng.IntN(2) == 0 {
						stop()
					}
				case 7:
					e.Persist(k)
				case 8:
					e.Reap()
				}
			}
		}()
	}
	stopClock := make(chan struct{})
	clockDone := make(chan struct{})
	go func() { // the one clock advancer
		defer close(clockDone)
		for {
			select {
			case <-stopClock:
				return
			default:
				mc.Add(500 * time.Microsecond)
				if err := e.verify(); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	for range workers {
		<-done
	}
	close(stopClock)
	<-clockDone
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mc.Add(time.Second)
	e.Reap()
	if err := e.verify(); err != nil {
		t.Fatal(err)
	}
}
