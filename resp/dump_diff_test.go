package resp_test

// DUMP and RESTORE against redis-server: payloads cross both ways.

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// dumpValues builds, on a server, one key of every type in each of its
// encodings (small and large forms).
func dumpValues(ctx context.Context, t *testing.T, c *redis.Client) []string {
	t.Helper()
	long := strings.Repeat("abcdefgh", 40)
	cmds := [][]any{
		{"set", "s:int", "123"}, {"set", "s:neg", "-70000"}, {"set", "s:short", "hello"},
		{"set", "s:long", long}, {"set", "s:bin", "\x00\xff\r\n"}, {"set", "s:empty", ""},
		{"set", "s:bigint", "12345678901"}, {"set", "s:plus", "+1"},
		{"rpush", "l:small", "a", "1", "-3", "300000", "x"},
	}
	big := []any{"rpush", "l:big"}
	hashBig := []any{"hset", "h:big"}
	setInts := []any{"sadd", "set:ints"}
	setBig := []any{"sadd", "set:big"}
	zsetBig := []any{"zadd", "z:big"}
	for i := range 300 {
		big = append(big, fmt.Sprintf("element-%d", i), long[:i%50])
		hashBig = append(hashBig, fmt.Sprintf("f%d", i), strconv.Itoa(i*7))
		setInts = append(setInts, strconv.Itoa(i*1000-70000))
		setBig = append(setBig, fmt.Sprintf("m%d", i))
		zsetBig = append(zsetBig, strconv.FormatFloat(float64(i)/3, 'g', -1, 64), fmt.Sprintf("z%d", i))
	}
	cmds = append(cmds, big, hashBig, setInts, setBig, zsetBig,
		[]any{"hset", "h:small", "f", "v", "n", "12", "e", ""},
		[]any{"sadd", "set:small", "1", "2", "-5"},
		[]any{"sadd", "set:mixed", "1", "a"},
		[]any{"zadd", "z:small", "1.5", "a", "-inf", "b", "+inf", "c", "0", "d"},
		[]any{"rpush", "l:huge", strings.Repeat("x", 10000)}, // a plain quicklist node in Redis
	)
	var keys []string
	for _, cmd := range cmds {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		keys = append(keys, cmd[1].(string))
	}
	return keys
}

// contents reads a key's value in a form both servers give alike.
func contents(ctx context.Context, t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	switch typ {
	case "string":
		v, err = c.Get(ctx, key).Result()
	case "list":
		v, err = c.LRange(ctx, key, 0, -1).Result()
	case "set":
		var m []string
		m, err = c.SMembers(ctx, key).Result()
		slices.Sort(m)
		v = m
	case "zset":
		v, err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
	case "hash":
		var h map[string]string
		h, err = c.HGetAll(ctx, key).Result()
		v = fmt.Sprint(h) // fmt sorts map keys
	default:
		v = typ
	}
	if err != nil {
		t.Fatalf("%s %s: %v", typ, key, err)
	}
	return fmt.Sprintf("%s %q", typ, fmt.Sprint(v))
}

// TestDumpRestoreMatchesRedis: a payload DUMP writes on either server
// restores on the other to the same value (Redis's compact encodings,
// listpacks, intsets and quicklists, read by nxkv; nxkv's plain ones read
// by Redis); a short string's payload has Redis's very bytes; RESTORE's
// options and errors are Redis's, byte for byte.
func TestDumpRestoreMatchesRedis(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	rc, nc := redis.NewClient(&redis.Options{Addr: rs.Addr}), redis.NewClient(&redis.Options{Addr: ns.Addr()})
	defer rc.Close()
	defer nc.Close()
	keys := dumpValues(ctx, t, rc)
	dumpValues(ctx, t, nc)
	for _, k := range keys {
		want := contents(ctx, t, rc, k)
		if got := contents(ctx, t, nc, k); got != want {
			t.Fatalf("%s differs before any DUMP: %s vs %s", k, got, want)
		}
		fromRedis, err := rc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		fromNxkv, err := nc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(k, "s:") && k != "s:long" && fromRedis != fromNxkv {
			t.Errorf("DUMP %s: nxkv %q, redis-server %q", k, fromNxkv, fromRedis)
		}
		if err := nc.Restore(ctx, "from-redis:"+k, 0, fromRedis).Err(); err != nil {
			t.Fatalf("nxkv RESTORE of redis-server's DUMP of %s: %v", k, err)
		}
		if got := contents(ctx, t, nc, "from-redis:"+k); got != want {
			t.Errorf("nxkv restored redis-server's %s as %s, want %s", k, got, want)
		}
		if err := rc.Restore(ctx, "from-nxkv:"+k, 0, fromNxkv).Err(); err != nil {
			t.Fatalf("redis-server RESTORE of nxkv's DUMP of %s: %v", k, err)
		}
		if got := contents(ctx, t, rc, "from-nxkv:"+k); got != want {
			t.Errorf("redis-server restored nxkv's %s as %s, want %s", k, got, want)
		}
	}

	// Options and errors, on both servers.
	payload, _ := rc.Dump(ctx, "s:short").Result()
	bad := []byte(payload)
	bad[len(bad)-1] ^= 1
	newer := []byte(payload[:len(payload)-10])
	newer = binary.LittleEndian.AppendUint16(newer, 11)
	newer = binary.LittleEndian.AppendUint64(newer, jones(newer))
	trailing := []byte(payload[:len(payload)-10] + "x")
	trailing = binary.LittleEndian.AppendUint16(trailing, 10)
	trailing = binary.LittleEndian.AppendUint64(trailing, jones(trailing))
	emptyList := []byte{1, 0}
	emptyList = binary.LittleEndian.AppendUint16(emptyList, 10)
	emptyList = binary.LittleEndian.AppendUint64(emptyList, jones(emptyList))
	steps := [][]string{
		{"restore", "s:short", "0", payload},
		{"restore", "s:short", "0", payload, "replace"},
		{"restore", "k", "-1", payload},
		{"restore", "k", "x", payload},
		{"restore", "k", "0", string(bad)},
		{"restore", "k", "0", "short"},
		{"restore", "k", "0", string(newer)},
		{"restore", "k", "0", string(trailing)},
		{"restore", "k", "0", string(emptyList)},
		{"restore", "k", "0", payload, "idletime", "-1"},
		{"restore", "k", "0", payload, "freq", "256"},
		{"restore", "k", "0", payload, "freq", "1", "idletime", "1"},
		{"restore", "k", "0", payload, "foo"},
		{"restore", "k", "0", payload, "idletime"},
		{"restore", "k", "1", payload, "absttl"},
		{"exists", "k"},
		{"restore", "s:short", "1", payload, "absttl", "replace"},
		{"exists", "s:short"},
		{"restore", "kt", "100000", payload, "freq", "5"},
		{"get", "kt"},
		{"dump", "nokey"},
		{"restore", "l:small", "0", payload, "REPLACE", "IDLETIME", "10"},
		{"type", "l:small"},
	}
	a, b := dialRaw(t, rs.Addr), dialRaw(t, ns.Addr())
	for _, st := range steps {
		ra, err1 := a.Do(st)
		rb, err2 := b.Do(st)
		if err1 != nil || err2 != nil {
			t.Fatalf("%q: %v %v", st, err1, err2)
		}
		if string(ra) != string(rb) {
			t.Errorf("%q: nxkv %q, redis-server %q", st[:2], rb, ra)
		}
	}
	if ttl := nc.PTTL(ctx, "kt").Val(); ttl <= 0 || ttl > 100000*1e6 {
		t.Errorf("PTTL of a key restored with a TTL: %v", ttl)
	}
}

// jones is Redis's CRC-64 (crc64.c), for the payloads the test forges.
func jones(b []byte) uint64 {
	return crc64.Update(math.MaxUint64, crc64.MakeTable(0x95ac9329ac4bc9b5), b) ^ math.MaxUint64
}

// FuzzRestore feeds RESTORE payloads built from valid ones with their
// bytes changed and the checksum made right again: the server must reply
// (OK or an error), never panic, and a restored key must be readable.
func FuzzRestore(f *testing.F) {
	s := resp.New(resp.Options{})
	defer s.Close()
	c := redis.NewClient(&redis.Options{Dialer: s.Dial})
	defer c.Close()
	ctx := context.Background()
	for _, cmd := range [][]any{{"set", "a", "hello world, a string of some length"}, {"rpush", "l", "a", "12", "x"},
		{"hset", "h", "f", "1"}, {"sadd", "s", "1", "2"}, {"zadd", "z", "1", "a"}} {
		c.Do(ctx, cmd...)
		p, _ := c.Dump(ctx, cmd[1].(string)).Result()
		f.Add([]byte(p[:len(p)-10]))
	}
	// Redis's compact encodings: an intset, a listpack hash, a quicklist.
	f.Add([]byte("\x0b\x0c\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00\x02\x00"))
	f.Add([]byte("\x10\x0e\x0e\x00\x00\x00\x02\x00\x81f\x02\x81v\x02\xff"))
	f.Add([]byte("\x12\x01\x02\x0b\x0b\x00\x00\x00\x01\x00\x81a\x02\xff"))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := binary.LittleEndian.AppendUint16(slices.Clone(body), 10)
		p = binary.LittleEndian.AppendUint64(p, jones(p))
		err := c.Restore(ctx, "k", 0, string(p)).Err()
		if err != nil && !strings.Contains(err.Error(), "Bad data format") {
			t.Fatalf("RESTORE: %v", err)
		}
		if err == nil {
			if typ := c.Type(ctx, "k").Val(); typ == "none" {
				t.Fatal("RESTORE said OK and made no key")
			}
			c.Del(ctx, "k")
		}
		if c.Ping(ctx).Err() != nil {
			t.Fatal("the server stopped answering")
		}
	})
}

// ziplist builds a ziplist (the encoding of RDB versions before 10) of
// short strings and small integers.
func ziplist(entries ...string) []byte {
	var body []byte
	prev, tail := 0, 0
	for _, e := range entries {
		tail = 10 + len(body)
		entry := []byte{byte(prev)}
		if n, err := strconv.Atoi(e); err == nil && n >= 0 && n <= 12 {
			entry = append(entry, 0xf1+byte(n))
		} else if err == nil && n >= math.MinInt8 && n <= math.MaxInt8 {
			entry = append(entry, 0xfe, byte(int8(n)))
		} else {
			entry = append(append(entry, byte(len(e))), e...)
		}
		body = append(body, entry...)
		prev = len(entry)
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(10+len(body)+1))
	b = binary.LittleEndian.AppendUint32(b, uint32(tail))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(entries)))
	return append(append(b, body...), 0xff)
}

// TestRestoreZiplists: RESTORE reads the ziplist encodings of Redis 6's
// payloads (RDB version 9): a hash, a sorted set and a quicklist of
// ziplists.
func TestRestoreZiplists(t *testing.T) {
	ctx := context.Background()
	s := resp.NewT(t, resp.Options{})
	c := redis.NewClient(&redis.Options{Dialer: s.Dial})
	defer c.Close()
	payload := func(typ byte, blobs ...[]byte) string {
		p := []byte{typ}
		if typ == 14 {
			p = append(p, byte(len(blobs)))
		}
		for _, b := range blobs {
			p = append(append(p, byte(len(b))), b...)
		}
		p = binary.LittleEndian.AppendUint16(p, 9)
		return string(binary.LittleEndian.AppendUint64(p, jones(p)))
	}
	for _, tc := range []struct {
		payload, want string
	}{
		{payload(13, ziplist("f", "1", "g", "-100")), `hash "map[f:1 g:-100]"`},
		{payload(12, ziplist("a", "1.5", "b", "-3")), `zset "[{-3 b} {1.5 a}]"`},
		{payload(14, ziplist("x", "7"), ziplist("yz")), `list "[x 7 yz]"`},
	} {
		c.Del(ctx, "k")
		if err := c.Restore(ctx, "k", 0, tc.payload).Err(); err != nil {
			t.Fatalf("RESTORE %q: %v", tc.payload, err)
		}
		if got := contents(ctx, t, c, "k"); got != tc.want {
			t.Fatalf("restored %s, want %s", got, tc.want)
		}
	}
}
