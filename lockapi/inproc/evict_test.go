package inproc_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// TestLeasesSurviveEviction: over an engine bounded to 64 KiB, two
// goroutines writing twenty times the bound, half with TTLs, never evict a
// lease of any kind, under every evicting policy: each stays held, with
// its Lost channel open. (Under the volatile policies the writes without a
// TTL soon fill the engine and are refused: that is the policy.)
func TestLeasesSurviveEviction(t *testing.T) {
	for p := engine.AllKeysLRU; p <= engine.VolatileRandom; p++ {
		t.Run(p.String(), func(t *testing.T) {
			for _, noFence := range []bool{false, true} {
				e := engine.New(engine.Options{MaxMemory: 64 << 10, Policy: p})
				defer e.Close()
				c := lockapi.New(inproc.New(e, inproc.Options{NoFencing: noFence}), lockapi.Options{})
				leases := obtainEveryKind(t, c, strconv.FormatBool(noFence))
				var wg sync.WaitGroup
				for g := range 2 {
					wg.Go(func() {
						value := string(make([]byte, 100))
						for i := range 20 * (64 << 10) / 200 / 2 { // about 20 times the bound in all
							k := "cache:" + strconv.Itoa(g) + ":" + strconv.Itoa(i)
							var err error
							if i%2 == 0 {
								err = e.Set(k, value)
							} else {
								err = e.SetPX(k, value, time.Hour)
							}
							if err != nil && !errors.Is(err, engine.ErrOOM) {
								t.Errorf("write: %v", err)
								return
							}
						}
					})
				}
				wg.Wait()
				if st := e.MemoryStats(); st.Evicted == 0 || st.Used > st.Max+2*300 {
					t.Fatalf("after the writes: %+v, want evictions and the bound held (one write per writer over)", st)
				}
				for name, l := range leases {
					select {
					case <-l.Lost():
						t.Fatalf("%s lease lost under eviction", name)
					default:
					}
					if d, err := l.TTL(context.Background()); err != nil || d <= 0 {
						t.Fatalf("%s lease TTL = %v, %v, want held", name, d, err)
					}
					if err := l.Release(context.Background()); err != nil {
						t.Fatalf("%s Release = %v", name, err)
					}
				}
				if err := e.Verify(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// obtainEveryKind takes a lease of every kind of lock on names ending in
// suffix.
func obtainEveryKind(t *testing.T, c *lockapi.Client, suffix string) map[string]*lockapi.Lock {
	t.Helper()
	ctx := context.Background()
	const ttl = time.Hour
	leases := map[string]*lockapi.Lock{}
	add := func(name string, l *lockapi.Lock, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		leases[name] = l
	}
	l, err := c.Obtain(ctx, "job"+suffix, ttl, nil)
	add("mutex", l, err)
	l, err = c.Semaphore("pool"+suffix, 2).Obtain(ctx, ttl, nil)
	add("semaphore", l, err)
	l, err = c.RWMutex("doc"+suffix).ObtainRead(ctx, ttl, nil)
	add("reader", l, err)
	l, err = c.RWMutex("page"+suffix).ObtainWrite(ctx, ttl, nil)
	add("writer", l, err)
	l, err = c.ObtainAll(ctx, []string{"a" + suffix, "b" + suffix}, ttl, nil)
	add("multi", l, err)
	l, err = c.Obtain(ctx, "cart"+suffix, ttl, &lockapi.ObtainOptions{Reentrant: true})
	add("reentrant", l, err)
	return leases
}
