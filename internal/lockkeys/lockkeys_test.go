package lockkeys_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nxkv/nxkv/internal/lockkeys"
)

// keysOf returns every key the layout derives from name.
func keysOf(name string) []string {
	s, rw := lockkeys.NewSemaphore(name), lockkeys.NewRW(name)
	keys := []string{lockkeys.Fence(name), lockkeys.Hold(name), s.Fence(), rw.Writer(), rw.Queue(), rw.Readers(), rw.Counter(), rw.Reader(1), rw.Reader(12)}
	keys = append(keys, s.Slots(12)[:12]...)
	return keys
}

func names(r *rand.Rand, n int) []string {
	const alphabet = "ab{}#:1"
	out := []string{"orders", "job}x", "{user:1}:lock", "a#1", "a", "a#", "#", "{", "}", "{}", "a#f", "a#w", "12"}
	for range n {
		b := make([]byte, r.IntN(7))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		out = append(out, string(b))
	}
	return out
}

// TestSameSlot: every key derived from a name lies in the name's Redis
// Cluster slot, so one script may touch them all.
func TestSameSlot(t *testing.T) {
	for _, name := range names(rand.New(rand.NewPCG(1, 2)), 500) {
		for _, k := range keysOf(name) {
			if lockkeys.Slot(k) != lockkeys.Slot(name) {
				t.Fatalf("slot(%q) = %d, want name %q's slot %d", k, lockkeys.Slot(k), name, lockkeys.Slot(name))
			}
		}
	}
}

// TestInjective: no two (name, role) pairs share a key, and semaphore slots
// built together equal those built one by one.
func TestInjective(t *testing.T) {
	owner := map[string]string{}
	for _, name := range names(rand.New(rand.NewPCG(3, 4)), 500) {
		for i, k := range keysOf(name) {
			who := name + "/" + string(rune('A'+i))
			if prev, ok := owner[k]; ok && prev != who {
				t.Fatalf("key %q derived for both %q and %q", k, prev, who)
			}
			owner[k] = who
		}
		s := lockkeys.NewSemaphore(name)
		for i, k := range s.Slots(12)[:12] {
			if k != s.Slot(i) {
				t.Fatalf("Slots(12)[%d] = %q, Slot(%d) = %q", i, k, i, s.Slot(i))
			}
		}
	}
}

// TestSlotTags: the tag table covers every slot with a tag free of braces.
func TestSlotTags(t *testing.T) {
	for s := range lockkeys.Slots {
		tag := lockkeys.SlotTag(s)
		if tag == "" || lockkeys.Slot(tag) != s {
			t.Fatalf("SlotTag(%d) = %q (slot %d)", s, tag, lockkeys.Slot(tag))
		}
	}
}

func TestValidHold(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"a", true},
		{"AbZ09-_~!", true},
		{"", false},
		{"a b", false},
		{"a\tb", false},
		{"a\u00a0b", false}, // a space to Go's unicode.IsSpace, not to Lua's %s
		{"a\x7fb", false},
		{"é", false},
	} {
		if got := lockkeys.ValidHold(tc.id); got != tc.want {
			t.Errorf("ValidHold(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
