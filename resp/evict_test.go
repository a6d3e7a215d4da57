package resp_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/resp"
)

// doOK runs args on c and fails unless the reply is want.
func doWant(t *testing.T, c *rawConn, want string, args ...string) {
	t.Helper()
	r, err := c.do(args)
	if err != nil || string(r) != want {
		t.Fatalf("%q = %q, %v; want %q", args, r, err, want)
	}
}

// TestMaxmemoryAcrossDatabases: the bound covers every database: writes
// to one database of a full server evict keys of another, INFO's
// used_memory stays within one write of the bound and counts what the
// engines count, and evicted_keys counts the evictions.
func TestMaxmemoryAcrossDatabases(t *testing.T) {
	s := resp.RunT(t)
	c := dialRaw(t, s.Addr())
	const max = 200 << 10
	doWant(t, c, "+OK\r\n", "config", "set", "maxmemory-policy", "allkeys-lru")
	doWant(t, c, "+OK\r\n", "config", "set", "maxmemory", "200kb")
	for i := range 3000 {
		doWant(t, c, "+OK\r\n", "set", "db0:"+strconv.Itoa(i), "0123456789")
	}
	db0 := s.DB(0).Len()
	doWant(t, c, "+OK\r\n", "select", "5")
	for i := range 500 {
		doWant(t, c, "+OK\r\n", "set", "db5:"+strconv.Itoa(i), "0123456789")
	}
	mem, stats := info(t, s.Addr(), "memory"), info(t, s.Addr(), "stats")
	used, _ := strconv.ParseInt(mem["used_memory"], 10, 64)
	evicted, _ := strconv.ParseInt(stats["evicted_keys"], 10, 64)
	st := s.Budget().Stats()
	switch {
	case s.DB(0).Len() >= db0:
		t.Fatalf("database 0 held %d keys and holds %d: writes to database 5 evicted none of them", db0, s.DB(0).Len())
	case used > max+200 || used != st.Used:
		t.Fatalf("used_memory %d, budget %d, bound %d", used, st.Used, max)
	case evicted != st.Evicted || evicted != int64(3500-s.DB(0).Len()-s.DB(5).Len()):
		t.Fatalf("evicted_keys %d, budget %d, keys written 3500, held %d+%d", evicted, st.Evicted, s.DB(0).Len(), s.DB(5).Len())
	case mem["maxmemory"] != strconv.Itoa(max) || mem["maxmemory_policy"] != "allkeys-lru" || mem["maxmemory_human"] != "200.00K":
		t.Fatalf("INFO memory %v", mem)
	}
	for _, db := range []int{0, 5} {
		if err := s.DB(db).Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMaxmemoryNeverStopsReadsOrDeletes: far over the bound under
// noeviction, reads and deletes run, in scripts too, while writes and
// everything queued in MULTI are refused.
func TestMaxmemoryNeverStopsReadsOrDeletes(t *testing.T) {
	s := resp.RunT(t)
	c := dialRaw(t, s.Addr())
	for _, k := range []string{"a", "b", "c", "d"} {
		doWant(t, c, "+OK\r\n", "set", k, "v")
	}
	doWant(t, c, "+OK\r\n", "config", "set", "maxmemory", "1")
	const oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
	doWant(t, c, oom, "set", "x", "1")
	doWant(t, c, "$1\r\nv\r\n", "get", "a")
	doWant(t, c, "*2\r\n$1\r\nv\r\n$-1\r\n", "mget", "a", "x")
	doWant(t, c, ":1\r\n", "del", "a")
	doWant(t, c, ":1\r\n", "unlink", "b")
	doWant(t, c, "$1\r\nv\r\n", "getdel", "c")
	doWant(t, c, ":1\r\n", "eval", "return redis.call('del', KEYS[1])", "1", "d")
	doWant(t, c, ":0\r\n", "dbsize")
	doWant(t, c, "+OK\r\n", "flushdb")
	doWant(t, c, "+OK\r\n", "multi")
	doWant(t, c, oom, "get", "a")
	doWant(t, c, "-EXECABORT Transaction discarded because of previous errors.\r\n", "exec")
	if st := s.Budget().Stats(); st.Evicted != 0 || st.Used <= 1 {
		t.Fatalf("budget %+v", st)
	}
}

// TestMaxmemoryVolatileKeepsPersistentKeys: past the bound under each
// volatile policy, keys with a TTL are evicted and keys without one are
// not, however many writes try.
func TestMaxmemoryVolatileKeepsPersistentKeys(t *testing.T) {
	for _, p := range []string{"volatile-lru", "volatile-lfu", "volatile-ttl", "volatile-random"} {
		t.Run(p, func(t *testing.T) {
			s := resp.RunT(t)
			c := dialRaw(t, s.Addr())
			doWant(t, c, "+OK\r\n", "config", "set", "maxmemory-policy", p)
			doWant(t, c, "+OK\r\n", "config", "set", "maxmemory", "64kb")
			for i := range 2000 {
				k := strconv.Itoa(i)
				if i%4 == 0 {
					_, _ = c.do([]string{"set", "keep:" + k, "0123456789"}) // refused once only these are left
				} else {
					_, _ = c.do([]string{"set", "ttl:" + k, "0123456789", "ex", "1000"})
				}
			}
			keep := 0
			for i := 0; i < 2000; i += 4 {
				if r, _ := c.do([]string{"exists", "keep:" + strconv.Itoa(i)}); string(r) == ":1\r\n" {
					keep++
				}
			}
			written := 0
			for _, k := range s.Keys() {
				if strings.HasPrefix(k, "keep:") {
					written++
				}
			}
			if keep != written || s.Budget().Stats().Evicted == 0 {
				t.Fatalf("%d keys without a TTL held of %d written, %d evicted", keep, written, s.Budget().Stats().Evicted)
			}
		})
	}
}

// TestMaxmemoryOptionsBudget: a server over a caller's engine with a budget
// shares it (CONFIG SET changes it, used_memory counts the engine's keys,
// the other databases join it); a different Options.Budget is refused.
func TestMaxmemoryOptionsBudget(t *testing.T) {
	b := engine.NewBudget(0, engine.NoEviction, 0)
	e := engine.New(engine.Options{Budget: b})
	t.Cleanup(func() { e.Close() })
	s := resp.NewT(t, resp.Options{Engine: e})
	if s.Budget() != b {
		t.Fatal("the server does not use its engine's budget")
	}
	c := dialRaw(t, s.Addr())
	doWant(t, c, "+OK\r\n", "config", "set", "maxmemory", "500kb") // under 64 KiB a shard: counted exactly
	doWant(t, c, "+OK\r\n", "config", "set", "maxmemory-policy", "allkeys-lfu")
	doWant(t, c, "+OK\r\n", "config", "set", "maxmemory-samples", "7")
	if st := b.Stats(); st.Max != 500<<10 || st.Policy != engine.AllKeysLFU || st.Samples != 7 {
		t.Fatalf("budget after CONFIG SET: %+v", st)
	}
	before := b.Stats().Used
	_ = e.Set("k", "v")
	doWant(t, c, "+OK\r\n", "select", "3")
	if got := b.Stats().Used; got != before+e.MemoryStats().Used+s.DB(3).MemoryStats().Overhead {
		t.Fatalf("budget Used %d, want %d + the engine's key + database 3's overhead", got, before)
	}
	if mem := info(t, s.Addr(), "memory"); mem["used_memory"] != strconv.FormatInt(b.Stats().Used, 10) {
		t.Fatalf("used_memory %s, budget %d", mem["used_memory"], b.Stats().Used)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("New with an engine's budget and a different Options.Budget did not panic")
			}
		}()
		resp.New(resp.Options{Engine: e, Budget: engine.NewBudget(0, engine.NoEviction, 0)})
	}()
}

// TestConfigSetMemoryDirect: Server.ConfigSet applies the maxmemory
// parameters and returns CONFIG SET's errors.
func TestConfigSetMemoryDirect(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	if err := s.ConfigSet("maxmemory", "2mb"); err != nil || s.Budget().Stats().Max != 2<<20 {
		t.Fatalf("ConfigSet(maxmemory, 2mb) = %v, bound %d", err, s.Budget().Stats().Max)
	}
	err := s.ConfigSet("maxmemory-policy", "lru")
	if err == nil || !strings.Contains(err.Error(), "argument(s) must be one of the following") {
		t.Fatalf("ConfigSet(maxmemory-policy, lru) = %v", err)
	}
	if err := s.ConfigSet("MAXMEMORY-SAMPLES", "3"); err != nil || s.Budget().Stats().Samples != 3 {
		t.Fatalf("ConfigSet(MAXMEMORY-SAMPLES, 3) = %v", err)
	}
}

// TestMaxmemoryCountsTypedValues: a hash, list, set or sorted set counts
// its elements against maxmemory, as Redis's used_memory does: one key
// grown by a write at a time reaches a bound of 100kb and is then refused
// under noeviction, or evicted under allkeys-lru; used_memory grows with
// the value and comes back when the key is deleted.
func TestMaxmemoryCountsTypedValues(t *testing.T) {
	const oom = "-OOM command not allowed when used memory > 'maxmemory'."
	value := strings.Repeat("v", 1000)
	grow := map[string]func(i int) []string{
		"hash": func(i int) []string { return []string{"hset", "k", "f" + strconv.Itoa(i), value} },
		"list": func(i int) []string { return []string{"rpush", "k", value} },
		"set":  func(i int) []string { return []string{"sadd", "k", value + strconv.Itoa(i)} },
		"zset": func(i int) []string { return []string{"zadd", "k", strconv.Itoa(i), value + strconv.Itoa(i)} },
	}
	for typ, cmd := range grow {
		for _, policy := range []string{"noeviction", "allkeys-lru"} {
			t.Run(typ+"/"+policy, func(t *testing.T) {
				s := resp.RunT(t)
				c := dialRaw(t, s.Addr())
				used := func() int64 {
					n, _ := strconv.ParseInt(info(t, s.Addr(), "memory")["used_memory"], 10, 64)
					return n
				}
				empty := used()
				doWant(t, c, "+OK\r\n", "config", "set", "maxmemory-policy", policy)
				doWant(t, c, "+OK\r\n", "config", "set", "maxmemory", "100kb")
				refused := -1
				for i := range 200 {
					r, err := c.do(cmd(i))
					if err != nil {
						t.Fatal(err)
					}
					if strings.HasPrefix(string(r), "-") {
						if string(r) != oom+"\r\n" {
							t.Fatalf("%q = %q", cmd(i), r)
						}
						refused = i
						break
					}
				}
				switch policy {
				case "noeviction":
					if refused < 0 {
						t.Fatalf("200 writes of 1000 bytes to one %s were all admitted under maxmemory 100kb", typ)
					}
					if u := used(); u < 100<<10 || u > 100<<10+4<<10 {
						t.Fatalf("used_memory %d at the refusal, bound %d", u, 100<<10)
					}
					doWant(t, c, ":1\r\n", "del", "k")
					if u := used(); u != empty {
						t.Fatalf("used_memory %d after DEL, %d before the key", u, empty)
					}
				default:
					if refused >= 0 {
						t.Fatalf("allkeys-lru refused write %d", refused)
					}
					if n, _ := strconv.Atoi(info(t, s.Addr(), "stats")["evicted_keys"]); n == 0 {
						t.Fatalf("200 KB written to one %s under maxmemory 100kb: nothing evicted", typ)
					}
				}
				if err := s.DB(0).Verify(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
