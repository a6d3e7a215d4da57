package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// mutex obtains a plain lock, for the cases that check it beside the
// other primitives.
var mutex = primitive{"mutex", func(lockapi.Backend) bool { return true },
	func(ctx context.Context, c *lockapi.Client, key string, d time.Duration, o *lockapi.ObtainOptions) (*lockapi.Lock, error) {
		return c.Obtain(ctx, key, d, o)
	}}

// testFencesSurviveFlush: on a backend that promises it (Env.Flush), no
// kind of lock hands out a fencing token twice for one name, whatever
// deletes the keys behind it: after a flush of the whole store, with the
// lock released or still held, each key's next token is above all before.
func testFencesSurviveFlush(t *testing.T, s *suite) {
	if !s.env.Fencing || s.env.Flush == nil {
		t.Skip("backend does not promise fences that survive a flush of its store")
	}
	ctx := context.Background()
	c := s.client()
	for _, p := range append([]primitive{mutex}, primitives...) {
		if !p.supported(s.env.Backend) {
			continue
		}
		key := s.key() + ":" + p.name
		var last []int64
		for round, how := range []string{"start", "a release and a flush", "a flush with the lock held", "a flush with the lock held"} {
			l, err := p.obtain(ctx, c, key, ttl, nil)
			if err != nil {
				t.Fatalf("%s Obtain after %s = %v, want a lease", p.name, how, err)
			}
			fs := l.Fences()
			if len(fs) == 0 || (last != nil && len(fs) != len(last)) {
				t.Fatalf("%s Fences() after %s = %v, want one per key (before: %v)", p.name, how, fs, last)
			}
			for i, f := range fs {
				if last != nil && f <= last[i] {
					t.Fatalf("%s fence of key %d after %s = %d, want > %d: a token repeats (all: %v, before: %v)", p.name, i, how, f, last[i], fs, last)
				}
			}
			last = fs
			if round == 0 {
				s.release(l)
			}
			s.env.Flush()
		}
	}
}
