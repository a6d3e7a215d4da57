package lockapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// checkFences drives several Backends over one engine (on a fake clock)
// with random acquisitions, releases, expiries, deletes and flushes, and
// checks against a model that an Acquire succeeds exactly when the key is
// free and that every key's fences strictly increase across all of it.
func checkFences(rt *rapid.T, newBackend func(e *engine.Engine) lockapi.Backend) {
	mock := clock.NewMock()
	mock.Set(epoch)
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	backends := []lockapi.Backend{newBackend(e), newBackend(e), newBackend(e)}
	keys := []string{"a", "b"}
	type hold struct {
		value    string
		deadline time.Time
	}
	now := epoch
	held := map[string]hold{} // the model: who holds a key until when
	last := map[string]int64{}
	seq := 0
	ctx := context.Background()
	free := func(k string) bool {
		h, ok := held[k]
		return !ok || now.After(h.deadline)
	}
	rt.Repeat(map[string]func(*rapid.T){
		"Acquire": func(t *rapid.T) {
			b := rapid.SampledFrom(backends).Draw(t, "backend")
			k := rapid.SampledFrom(keys).Draw(t, "key")
			ttl := time.Duration(rapid.IntRange(1, 3000).Draw(t, "ttl_ms")) * time.Millisecond
			seq++
			v := fmt.Sprint("v", seq)
			f, ok, err := b.Acquire(ctx, k, v, ttl)
			if err != nil {
				t.Fatalf("Acquire(%s) = %v", k, err)
			}
			if ok != free(k) {
				t.Fatalf("Acquire(%s) ok = %v, model says free = %v", k, ok, free(k))
			}
			if !ok {
				return
			}
			if f <= last[k] {
				t.Fatalf("Acquire(%s) fence %d after %d: not increasing", k, f, last[k])
			}
			last[k] = f
			held[k] = hold{v, now.Add(ttl)}
		},
		"Release": func(t *rapid.T) {
			k := rapid.SampledFrom(keys).Draw(t, "key")
			h, ok := held[k]
			if !ok || free(k) {
				t.Skip("not held")
			}
			if ok, err := rapid.SampledFrom(backends).Draw(t, "backend").Release(ctx, k, h.value); !ok || err != nil {
				t.Fatalf("Release(%s) = %v, %v, want true", k, ok, err)
			}
			delete(held, k)
		},
		"Advance": func(t *rapid.T) {
			d := time.Duration(rapid.IntRange(0, 2000).Draw(t, "advance_ms")) * time.Millisecond
			mock.Add(d)
			now = now.Add(d)
			if rapid.Bool().Draw(t, "reap") {
				e.Reap()
			}
		},
		"Delete": func(t *rapid.T) {
			k := rapid.SampledFrom(keys).Draw(t, "key")
			e.Del(k)
			delete(held, k)
		},
		"Flush": func(t *rapid.T) {
			e.Flush()
			clear(held)
		},
	})
}

// TestFenceModel checks the in-process backend's fences.
func TestFenceModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		checkFences(rt, func(e *engine.Engine) lockapi.Backend { return inproc.New(e, inproc.Options{}) })
	})
}

// perBackendFences is a planted bug: fences counted per Backend, as a
// counter outside the engine would be; several Backends over one engine
// then hand out repeated fences.
type perBackendFences struct {
	*inproc.Backend
	mu sync.Mutex
	n  map[string]int64
}

func (p *perBackendFences) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	_, ok, err := p.Backend.Acquire(ctx, key, value, ttl)
	if !ok {
		return 0, ok, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n[key]++
	return p.n[key], true, nil
}

// TestFenceModelCatchesPlantedBug shows the fence check fails on fences
// that are not shared by the Backends of one engine.
func TestFenceModelCatchesPlantedBug(t *testing.T) {
	rec := expectRapidFailure(t)
	rapid.Check(rec, func(rt *rapid.T) {
		checkFences(rt, func(e *engine.Engine) lockapi.Backend {
			return &perBackendFences{Backend: inproc.New(e, inproc.Options{}), n: map[string]int64{}}
		})
	})
	if !rec.failed {
		t.Fatal("fence model passed over per-Backend fences")
	}
	t.Logf("caught: %.300s", rec.msg)
}
