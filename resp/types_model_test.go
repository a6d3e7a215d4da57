package resp_test

// Model tests of the typed values: rapid state machines, one per type,
// send random commands to a server and check every reply against a plain
// Go model of the keyspace (maps and slices), WRONGTYPE included, as the
// engine's model test checks the string commands.

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// keyspace is the model: each key holds one value of one type.
type keyspace map[string]any // string, map[string]string, []string, map[string]bool, map[string]float64

var errWrongType = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")

// typedModel drives one server against the model.
type typedModel struct {
	c  *rawConn
	ks keyspace
}

// check sends args and compares the reply with want (nil: a nil reply;
// an error: its text; []string compared in order unless unordered).
func (m *typedModel) check(t *rapid.T, want any, unordered bool, args ...string) {
	r, err := m.c.do(args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	got, err := parseReply(r)
	if err != nil {
		t.Fatalf("%q: parsing %q: %v", args, r, err)
	}
	if e, ok := got.(error); ok {
		got = e.Error()
	}
	if e, ok := want.(error); ok {
		want = e.Error()
	}
	if ws, ok := want.([]string); ok {
		var gs []string
		arr, _ := got.([]any)
		for _, x := range arr {
			s, _ := x.(string)
			gs = append(gs, s)
		}
		if gs == nil && arr != nil {
			gs = []string{}
		}
		if ws == nil {
			ws = []string{}
		}
		if unordered {
			sort.Strings(ws)
			sort.Strings(gs)
		}
		if !slices.Equal(ws, gs) || arr == nil {
			t.Fatalf("%q: got %q, want %q", args, r, ws)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %q (%#v), want %#v", args, r, got, want)
	}
}

// typeOf names the model's value of k as TYPE does.
func (m *typedModel) typeOf(k string) string {
	switch m.ks[k].(type) {
	case nil:
		return "none"
	case string:
		return "string"
	case map[string]string:
		return "hash"
	case []string:
		return "list"
	case map[string]bool:
		return "set"
	}
	return "zset"
}

// wrong reports whether k holds a value of another type than typ.
func (m *typedModel) wrong(k, typ string) bool {
	t := m.typeOf(k)
	return t != "none" && t != typ
}

// generic are the actions every type's machine shares: a string write, a
// delete, TYPE and GET (WRONGTYPE on typed keys).
func (m *typedModel) generic(t *rapid.T, k string) {
	switch rapid.IntRange(0, 3).Draw(t, "generic") {
	case 0:
		m.check(t, "OK", false, "set", k, "s")
		m.ks[k] = "s"
	case 1:
		want := int64(0)
		if m.ks[k] != nil {
			want = 1
		}
		m.check(t, want, false, "del", k)
		delete(m.ks, k)
	case 2:
		m.check(t, m.typeOf(k), false, "type", k)
	default:
		switch v := m.ks[k].(type) {
		case nil:
			m.check(t, nil, false, "get", k)
		case string:
			m.check(t, v, false, "get", k)
		default:
			m.check(t, errWrongType, false, "get", k)
		}
	}
}

func (m *typedModel) hashStep(t *rapid.T) {
	k := rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "key")
	f := rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, "field")
	h, _ := m.ks[k].(map[string]string)
	wrong := m.wrong(k, "hash")
	switch rapid.IntRange(0, 6).Draw(t, "op") {
	case 0:
		v := rapid.SampledFrom([]string{"1", "x", "", "22"}).Draw(t, "value")
		if wrong {
			m.check(t, errWrongType, false, "hset", k, f, v)
			return
		}
		if h == nil {
			h = map[string]string{}
			m.ks[k] = h
		}
		_, had := h[f]
		h[f] = v
		m.check(t, map[bool]int64{false: 1, true: 0}[had], false, "hset", k, f, v)
	case 1:
		if wrong {
			m.check(t, errWrongType, false, "hdel", k, f)
			return
		}
		_, had := h[f]
		delete(h, f)
		if h != nil && len(h) == 0 {
			delete(m.ks, k)
		}
		m.check(t, map[bool]int64{false: 0, true: 1}[had], false, "hdel", k, f)
	case 2:
		v, had := h[f]
		switch {
		case wrong:
			m.check(t, errWrongType, false, "hget", k, f)
		case had:
			m.check(t, v, false, "hget", k, f)
		default:
			m.check(t, nil, false, "hget", k, f)
		}
	case 3:
		if wrong {
			m.check(t, errWrongType, false, "hlen", k)
			return
		}
		m.check(t, int64(len(h)), false, "hlen", k)
	case 4:
		if wrong {
			m.check(t, errWrongType, false, "hgetall", k)
			return
		}
		var want []string
		for f, v := range h {
			want = append(want, f+"="+v)
		}
		r, _ := m.c.do([]string{"hgetall", k})
		got, _ := parseReply(r)
		var gs []string
		arr, _ := got.([]any)
		for i := 0; i+1 < len(arr); i += 2 {
			gs = append(gs, fmt.Sprint(arr[i])+"="+fmt.Sprint(arr[i+1]))
		}
		sort.Strings(want)
		sort.Strings(gs)
		if !slices.Equal(want, gs) {
			t.Fatalf("hgetall %s: got %q, want %q", k, gs, want)
		}
	case 5:
		if wrong {
			m.check(t, errWrongType, false, "hincrby", k, f, "2")
			return
		}
		cur, err := strconv.ParseInt(h[f], 10, 64)
		if _, had := h[f]; had && (err != nil || h[f] != strconv.FormatInt(cur, 10)) {
			m.check(t, errors.New("ERR hash value is not an integer"), false, "hincrby", k, f, "2")
			return
		}
		if h == nil {
			h = map[string]string{}
			m.ks[k] = h
		}
		h[f] = strconv.FormatInt(cur+2, 10)
		m.check(t, cur+2, false, "hincrby", k, f, "2")
	default:
		m.generic(t, k)
	}
}

func (m *typedModel) listStep(t *rapid.T) {
	k := rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "key")
	v := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "value")
	l, _ := m.ks[k].([]string)
	wrong := m.wrong(k, "list")
	set := func(l []string) {
		if len(l) == 0 {
			delete(m.ks, k)
		} else {
			m.ks[k] = l
		}
	}
	switch rapid.IntRange(0, 8).Draw(t, "op") {
	case 0, 1:
		cmd := rapid.SampledFrom([]string{"lpush", "rpush"}).Draw(t, "push")
		if wrong {
			m.check(t, errWrongType, false, cmd, k, v)
			return
		}
		if cmd == "lpush" {
			l = append([]string{v}, l...)
		} else {
			l = append(slices.Clone(l), v)
		}
		set(l)
		m.check(t, int64(len(l)), false, cmd, k, v)
	case 2:
		cmd := rapid.SampledFrom([]string{"lpop", "rpop"}).Draw(t, "pop")
		switch {
		case wrong:
			m.check(t, errWrongType, false, cmd, k)
		case len(l) == 0:
			m.check(t, nil, false, cmd, k)
		case cmd == "lpop":
			m.check(t, l[0], false, cmd, k)
			set(l[1:])
		default:
			m.check(t, l[len(l)-1], false, cmd, k)
			set(l[:len(l)-1])
		}
	case 3:
		if wrong {
			m.check(t, errWrongType, false, "lrange", k, "0", "-1")
			return
		}
		m.check(t, slices.Clone(l), false, "lrange", k, "0", "-1")
	case 4:
		i := rapid.IntRange(-4, 4).Draw(t, "index")
		j := i
		if j < 0 {
			j += len(l)
		}
		switch {
		case wrong:
			m.check(t, errWrongType, false, "lindex", k, strconv.Itoa(i))
		case j >= 0 && j < len(l):
			m.check(t, l[j], false, "lindex", k, strconv.Itoa(i))
		default:
			m.check(t, nil, false, "lindex", k, strconv.Itoa(i))
		}
	case 5:
		n := rapid.IntRange(-2, 2).Draw(t, "count")
		if wrong {
			m.check(t, errWrongType, false, "lrem", k, strconv.Itoa(n), v)
			return
		}
		out, removed := slices.Clone(l), 0
		limit := n
		if limit < 0 {
			limit = -limit
		}
		for step := range len(l) {
			i := step
			if n < 0 {
				i = len(l) - 1 - step
			}
			if l[i] == v && (limit == 0 || removed < limit) {
				out[i] = "\x00gone"
				removed++
			}
		}
		out = slices.DeleteFunc(out, func(s string) bool { return s == "\x00gone" })
		set(out)
		m.check(t, int64(removed), false, "lrem", k, strconv.Itoa(n), v)
	case 6:
		dst := rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "dst")
		switch {
		case wrong:
			m.check(t, errWrongType, false, "rpoplpush", k, dst)
		case len(l) == 0:
			m.check(t, nil, false, "rpoplpush", k, dst)
		case m.wrong(dst, "list"):
			m.check(t, errWrongType, false, "rpoplpush", k, dst)
		default:
			e := l[len(l)-1]
			set(l[:len(l)-1])
			d, _ := m.ks[dst].([]string)
			m.ks[dst] = append([]string{e}, d...)
			m.check(t, e, false, "rpoplpush", k, dst)
		}
	case 7:
		if wrong {
			m.check(t, errWrongType, false, "llen", k)
			return
		}
		m.check(t, int64(len(l)), false, "llen", k)
	default:
		m.generic(t, k)
	}
}

func (m *typedModel) setStep(t *rapid.T) {
	k := rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "key")
	v := rapid.SampledFrom([]string{"1", "2", "10", "a", "b"}).Draw(t, "member")
	s, _ := m.ks[k].(map[string]bool)
	wrong := m.wrong(k, "set")
	switch rapid.IntRange(0, 6).Draw(t, "op") {
	case 0, 1:
		if wrong {
			m.check(t, errWrongType, false, "sadd", k, v)
			return
		}
		if s == nil {
			s = map[string]bool{}
			m.ks[k] = s
		}
		had := s[v]
		s[v] = true
		m.check(t, map[bool]int64{false: 1, true: 0}[had], false, "sadd", k, v)
	case 2:
		if wrong {
			m.check(t, errWrongType, false, "srem", k, v)
			return
		}
		had := s[v]
		delete(s, v)
		if s != nil && len(s) == 0 {
			delete(m.ks, k)
		}
		m.check(t, map[bool]int64{false: 0, true: 1}[had], false, "srem", k, v)
	case 3:
		if wrong {
			m.check(t, errWrongType, false, "sismember", k, v)
			return
		}
		m.check(t, map[bool]int64{false: 0, true: 1}[s[v]], false, "sismember", k, v)
	case 4:
		if wrong {
			m.check(t, errWrongType, false, "smembers", k)
			return
		}
		var want []string
		for x := range s {
			want = append(want, x)
		}
		m.check(t, want, true, "smembers", k)
	case 5:
		k2 := rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "key2")
		if wrong || m.wrong(k2, "set") {
			m.check(t, errWrongType, false, "sinter", k, k2)
			return
		}
		s2, _ := m.ks[k2].(map[string]bool)
		var want []string
		for x := range s {
			if s2[x] {
				want = append(want, x)
			}
		}
		m.check(t, want, true, "sinter", k, k2)
	default:
		m.generic(t, k)
	}
}

func (m *typedModel) zsetStep(t *rapid.T) {
	k := rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "key")
	v := rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, "member")
	z, _ := m.ks[k].(map[string]float64)
	wrong := m.wrong(k, "zset")
	sorted := func() []string {
		var es []string
		for x := range z {
			es = append(es, x)
		}
		sort.Slice(es, func(i, j int) bool {
			return z[es[i]] < z[es[j]] || z[es[i]] == z[es[j]] && es[i] < es[j]
		})
		return es
	}
	switch rapid.IntRange(0, 7).Draw(t, "op") {
	case 0, 1:
		sc := rapid.SampledFrom([]float64{1, 2, 2.5, -1, 0, math.Inf(1)}).Draw(t, "score")
		arg := strconv.FormatFloat(sc, 'g', -1, 64)
		if wrong {
			m.check(t, errWrongType, false, "zadd", k, arg, v)
			return
		}
		if z == nil {
			z = map[string]float64{}
			m.ks[k] = z
		}
		_, had := z[v]
		z[v] = sc
		m.check(t, map[bool]int64{false: 1, true: 0}[had], false, "zadd", k, arg, v)
	case 2:
		if wrong {
			m.check(t, errWrongType, false, "zrem", k, v)
			return
		}
		_, had := z[v]
		delete(z, v)
		if z != nil && len(z) == 0 {
			delete(m.ks, k)
		}
		m.check(t, map[bool]int64{false: 0, true: 1}[had], false, "zrem", k, v)
	case 3:
		if wrong {
			m.check(t, errWrongType, false, "zrange", k, "0", "-1")
			return
		}
		m.check(t, sorted(), false, "zrange", k, "0", "-1")
	case 4:
		if wrong {
			m.check(t, errWrongType, false, "zrank", k, v)
			return
		}
		if i := slices.Index(sorted(), v); i >= 0 {
			m.check(t, int64(i), false, "zrank", k, v)
		} else {
			m.check(t, nil, false, "zrank", k, v)
		}
	case 5:
		if wrong {
			m.check(t, errWrongType, false, "zrangebyscore", k, "(0", "2")
			return
		}
		var want []string
		for _, x := range sorted() {
			if z[x] > 0 && z[x] <= 2 {
				want = append(want, x)
			}
		}
		m.check(t, want, false, "zrangebyscore", k, "(0", "2")
	case 6:
		es := sorted()
		switch {
		case wrong:
			m.check(t, errWrongType, false, "zpopmin", k)
		case len(es) == 0:
			m.check(t, []string{}, false, "zpopmin", k)
		default:
			e := es[0]
			sc := strconv.FormatFloat(z[e], 'g', 17, 64)
			if math.IsInf(z[e], 1) {
				sc = "inf"
			}
			delete(z, e)
			if len(z) == 0 {
				delete(m.ks, k)
			}
			m.check(t, []string{e, sc}, false, "zpopmin", k)
		}
	default:
		m.generic(t, k)
	}
}

// typedProp returns the property of type typ's machine, against a server
// with the given fault (none when Command is empty).
func typedProp(typ string, fault resp.Fault) func(*rapid.T) {
	return func(t *rapid.T) {
		s := resp.New(resp.Options{})
		defer s.Close()
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		if fault.Command != "" {
			s.InjectFault(fault)
		}
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		m := &typedModel{c: &rawConn{redistest.NewConn(nc)}, ks: keyspace{}}
		step := map[string]func(*rapid.T){"hash": m.hashStep, "list": m.listStep, "set": m.setStep, "zset": m.zsetStep}[typ]
		for range rapid.IntRange(1, 120).Draw(t, "steps") {
			step(t)
		}
	}
}

func TestModelHash(t *testing.T) { rapid.Check(t, typedProp("hash", resp.Fault{})) }
func TestModelList(t *testing.T) { rapid.Check(t, typedProp("list", resp.Fault{})) }
func TestModelSet(t *testing.T)  { rapid.Check(t, typedProp("set", resp.Fault{})) }
func TestModelZset(t *testing.T) { rapid.Check(t, typedProp("zset", resp.Fault{})) }

// plantedTypeEnv selects the type whose machine TestTypedModelChild runs
// against a planted bug.
const plantedTypeEnv = "NXKV_PLANTED_TYPE"

// plantedTypeFaults are the planted bugs: a command of each type that
// replies an error once in a while.
var plantedTypeFaults = map[string]resp.Fault{
	"hash": {Command: "hdel", Err: "ERR planted"},
	"list": {Command: "rpoplpush", Err: "ERR planted"},
	"set":  {Command: "srem", Err: "ERR planted"},
	"zset": {Command: "zrank", Err: "ERR planted"},
}

// TestTypedModelChild runs one type's machine against its planted bug; it
// runs only as a child of TestTypedModelCatchesPlantedBugs.
func TestTypedModelChild(t *testing.T) {
	typ := os.Getenv(plantedTypeEnv)
	if typ == "" {
		t.Skip("runs only as a child of TestTypedModelCatchesPlantedBugs")
	}
	rapid.Check(t, typedProp(typ, plantedTypeFaults[typ]))
}

// TestTypedModelCatchesPlantedBugs shows each type's machine fails on its
// planted bug.
func TestTypedModelCatchesPlantedBugs(t *testing.T) {
	for typ := range plantedTypeFaults {
		t.Run(typ, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestTypedModelChild$", "-test.count=1",
				"-rapid.checks=200", "-rapid.nofailfile")
			cmd.Env = append(os.Environ(), plantedTypeEnv+"="+typ)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !strings.Contains(string(out), "[rapid] failed") {
				t.Fatalf("planted %s bug not caught: err = %v; output:\n%s", typ, err, out)
			}
		})
	}
}
