package resp_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/resp"
)

// fillToOOM writes keys to e until its bound refuses one.
func fillToOOM(t *testing.T, e *engine.Engine, prefix string) {
	t.Helper()
	for i := 0; ; i++ {
		err := e.Set(prefix+strconv.Itoa(i), "0123456789")
		if errors.Is(err, engine.ErrOOM) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMovesKeepValuesWhenFull: database 0 is the caller's engine, bounded
// with NoEviction and at its bound. RENAME, MOVE and SWAPDB, which Redis
// runs whatever the memory (they are not deny-oom), move every value
// whole, and COPY, which is deny-oom, is refused and changes nothing: a
// full server never deletes a key it then fails to write.
func TestMovesKeepValuesWhenFull(t *testing.T) {
	e := engine.New(engine.Options{MaxMemory: 1 << 20})
	defer e.Close()
	s := resp.NewT(t, resp.Options{Engine: e})
	c := dialRaw(t, s.Addr())
	doWant(t, c, "+OK\r\n", "set", "src", "precious")
	doWant(t, c, "+OK\r\n", "select", "1")
	doWant(t, c, "+OK\r\n", "set", "k1", "from-db1")
	doWant(t, c, "+OK\r\n", "set", "back", "to-db0")
	doWant(t, c, "+OK\r\n", "select", "0")
	fillToOOM(t, e, "fill")

	doWant(t, c, "+OK\r\n", "rename", "src", "dst")
	if v, ok := e.Get("dst"); !ok || v != "precious" || e.Exists("src") {
		t.Fatalf("after RENAME when full: dst = %q, %v; src exists %v", v, ok, e.Exists("src"))
	}
	doWant(t, c, "-OOM command not allowed when used memory > 'maxmemory'.\r\n", "copy", "dst", "dst2")
	doWant(t, c, ":1\r\n", "move", "dst", "1")
	if v, ok := s.DB(1).Get("dst"); !ok || v != "precious" || e.Exists("dst") {
		t.Fatalf("after MOVE when full: db1 dst = %q, %v", v, ok)
	}
	doWant(t, c, "+OK\r\n", "select", "1")
	doWant(t, c, ":1\r\n", "move", "back", "0") // into the full database
	if v, ok := e.Get("back"); !ok || v != "to-db0" {
		t.Fatalf("after MOVE into the full database: back = %q, %v", v, ok)
	}
	n0, n1 := e.LenAll(), s.DB(1).LenAll()
	doWant(t, c, "+OK\r\n", "swapdb", "0", "1")
	if v, ok := e.Get("k1"); !ok || v != "from-db1" || e.LenAll() != n1 || s.DB(1).LenAll() != n0 {
		t.Fatalf("after SWAPDB when full: db0 k1 = %q, %v; sizes %d, %d, want %d, %d", v, ok, e.LenAll(), s.DB(1).LenAll(), n1, n0)
	}
	for _, db := range []*engine.Engine{e, s.DB(1)} {
		if err := db.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSwapDBKeepsLocksHeld: a lock taken with SetNXPXFenced in the
// caller's bounded engine (database 0) is never evicted, in whichever
// database SWAPDB puts it: SWAPDB 0 1 twice leaves the keyspace as it was,
// and the lock is still a held lock, which the writes that follow do not
// evict (it came back written as a plain value, and was evicted).
func TestSwapDBKeepsLocksHeld(t *testing.T) {
	e := engine.New(engine.Options{MaxMemory: 1 << 20, Policy: engine.AllKeysLRU})
	defer e.Close()
	if _, ok, err := e.SetNXPXFenced("lock", "token", 3600e9); !ok || err != nil {
		t.Fatal(ok, err)
	}
	s := resp.NewT(t, resp.Options{Engine: e})
	c := dialRaw(t, s.Addr())
	for swaps := range 2 {
		doWant(t, c, "+OK\r\n", "swapdb", "0", "1")
		held := s.DB(1)
		if swaps == 1 {
			held = e
		}
		for i := range 40000 {
			_ = held.Set("cache"+strconv.Itoa(i), "0123456789012345678901234567890123456789")
		}
		if v, ok := held.Get("lock"); !ok || v != "token" {
			t.Fatalf("after %d SWAPDB: the held lock was evicted (evicted %d)", swaps+1, s.Budget().Stats().Evicted)
		}
	}
}
