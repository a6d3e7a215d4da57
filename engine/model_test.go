package engine_test

// Model-based checking: every engine method is driven with random operations
// and compared, step by step, with a plain reference model written from
// Redis's documented rules (not from the implementation): results, Watch,
// and the events the change feed reports, which the model derives from
// Redis's keyspace events for each command. The same op
// representation, model and comparison run under rapid (TestModel) and under
// go test -fuzz (FuzzOps in fuzz_test.go).

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"github.com/nxkv/nxkv/engine"
)

// epoch is the fake clock's start: a realistic date, so deadline overflow
// checks see a "now" of the right magnitude.
var epoch = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// kv is the surface the model checker drives: every engine method. The
// planted-bug wrappers in planted_test.go implement it too.
type kv interface {
	Get(key string) (string, bool)
	Set(key, value string) error
	SetPX(key, value string, ttl time.Duration) error
	SetNX(key, value string) (bool, error)
	SetNXPX(key, value string, ttl time.Duration) (bool, error)
	SetWith(key, value string, args engine.SetArgs) (engine.SetResult, error)
	GetSet(key, value string) (string, bool, error)
	GetDel(key string) (string, bool)
	CompareAndDelete(key, value string) bool
	CompareAndSwap(key, old, value string) (bool, error)
	CompareAndPExpire(key, value string, ttl time.Duration) (bool, error)
	Del(keys ...string) int
	Exists(key string) bool
	PExpire(key string, ttl time.Duration) (bool, error)
	PExpireCond(key string, ttl time.Duration, cond engine.ExpireCond) (bool, error)
	PExpireAt(key string, at time.Time) (bool, error)
	PTTL(key string) (time.Duration, bool)
	Persist(key string) bool
	IncrBy(key string, n int64) (int64, error)
	SetNXPXFenced(key, value string, ttl time.Duration) (int64, bool, error)
	ExpireTime(key string) (time.Time, bool)
	Flush()
	FlushAll()
	Range(fn func(key string) bool)
	RangeAll(fn func(key string) bool)
	Len() int
	LenAll() int
	Reap() int
	Watch(key string) (<-chan struct{}, func())
	Close() error
}

var _ kv = (*engine.Engine)(nil)

// ---------------------------------------------------------------------------
// The reference model.

// entry is one key of the model. deadline is in Unix nanoseconds and only
// meaningful when hasTTL.
type entry struct {
	val      string
	hasTTL   bool
	deadline int64
}

// model is Redis string semantics over a plain map. Expired entries stay in
// the map until a write replaces them, an explicit delete removes them, or
// Reap purges them: len(keys) is therefore an upper bound of what the engine
// may still hold, and the live entries are a lower bound.
type model struct {
	keys map[string]entry
	// ev is the change feed's events the current step must report, in
	// order, and prior the entries the step changed as they were before
	// it (see harness.checkFeed).
	ev    []engine.Event
	prior map[string]priorEntry
	// fences is the last fencing token SetNXPXFenced returned per key: the
	// next one must be larger, whatever happened to the key meanwhile.
	fences map[string]int64
	// counters is the largest value IncrBy gave each reserved key: an
	// IncrBy of the key once absent must start at or above it.
	counters map[string]int64
	// gone says why a key left keys (for failure messages only).
	gone map[string]string
}

func newModel() *model {
	return &model{keys: map[string]entry{}, gone: map[string]string{}, fences: map[string]int64{}, counters: map[string]int64{}}
}

// priorEntry is a key's entry before the current step changed it.
type priorEntry struct {
	e    entry
	held bool
}

func (m *model) put(key string, e entry) {
	m.remember(key)
	m.keys[key] = e
	delete(m.gone, key)
}

func (m *model) remove(key, why string) {
	m.remember(key)
	delete(m.keys, key)
	m.gone[key] = why
}

// remember records key's entry before the step's first change of it.
func (m *model) remember(key string) {
	if m.prior == nil {
		m.prior = map[string]priorEntry{}
	}
	if _, ok := m.prior[key]; !ok {
		e, held := m.keys[key]
		m.prior[key] = priorEntry{e, held}
	}
}

// beginStep starts a step: no events expected, nothing changed yet.
func (m *model) beginStep() {
	m.ev = nil
	clear(m.prior)
}

// before returns key's entry as it was when the step began.
func (m *model) before(key string) (entry, bool) {
	if p, ok := m.prior[key]; ok {
		return p.e, p.held
	}
	e, ok := m.keys[key]
	return e, ok
}

// emit records an event the current step must report.
func (m *model) emit(kind engine.Kind, key string) {
	m.ev = append(m.ev, engine.Event{Key: key, Kind: kind})
}

// reclaim is the lookup of an operation that deletes key if it finds it
// expired, as the engine does on every access: the model then expects
// KindExpired before the operation's own events.
func (m *model) reclaim(key string, now int64) {
	if e, ok := m.keys[key]; ok && e.hasTTL && now > e.deadline {
		m.emit(engine.KindExpired, key)
		m.remove(key, "expired and reclaimed on access")
	}
}

// expiredHeld returns the keys the model holds whose deadline passed at now:
// those the engine may reclaim at any moment, reporting KindExpired.
func (m *model) expiredHeld(now int64) map[string]bool {
	held := map[string]bool{}
	for k, e := range m.keys {
		if e.hasTTL && now > e.deadline {
			held[k] = true
		}
	}
	return held
}

// created emits KindNew if key is not alive (it is being created).
func (m *model) created(key string, now int64) {
	if _, ok := m.alive(key, now); !ok {
		m.emit(engine.KindNew, key)
	}
}

// alive returns key's entry if it exists at now: a key with deadline D is
// alive while now <= D.
func (m *model) alive(key string, now int64) (entry, bool) {
	e, ok := m.keys[key]
	if !ok || (e.hasTTL && now > e.deadline) {
		return entry{}, false
	}
	return e, true
}

// counts returns the number of live keys and of keys held (live plus expired
// but not known to be reclaimed), reserved keys only if all.
func (m *model) counts(now int64, all bool) (live, held int) {
	for k := range m.keys {
		if !all && engine.Reserved(k) {
			continue
		}
		held++
		if _, ok := m.alive(k, now); ok {
			live++
		}
	}
	return live, held
}

// deadlineAfter returns now+ttl, and false if that overflows int64
// nanoseconds (Redis: "invalid expire time").
func deadlineAfter(now int64, ttl time.Duration) (int64, bool) {
	if ttl > 0 && now > math.MaxInt64-int64(ttl) {
		return 0, false
	}
	if ttl < 0 && now < math.MinInt64-int64(ttl) {
		return 0, false
	}
	return now + int64(ttl), true
}

func (m *model) get(key string, now int64) (string, bool) {
	e, ok := m.alive(key, now)
	return e.val, ok
}

func (m *model) set(key, val string, now int64) {
	m.reclaim(key, now)
	m.created(key, now)
	m.emit(engine.KindSet, key)
	m.put(key, entry{val: val})
}

func (m *model) setPX(key, val string, ttl time.Duration, now int64) error {
	d, ok := deadlineAfter(now, ttl)
	if ttl <= 0 || !ok {
		return engine.ErrInvalidTTL
	}
	m.reclaim(key, now)
	m.created(key, now)
	m.emit(engine.KindSet, key)
	m.emit(engine.KindExpire, key)
	m.put(key, entry{val: val, hasTTL: true, deadline: d})
	return nil
}

func (m *model) setNX(key, val string, now int64) bool {
	m.reclaim(key, now)
	if _, ok := m.alive(key, now); ok {
		return false
	}
	m.emit(engine.KindNew, key)
	m.emit(engine.KindSet, key)
	m.put(key, entry{val: val})
	return true
}

func (m *model) setNXPX(key, val string, ttl time.Duration, now int64) (bool, error) {
	d, ok := deadlineAfter(now, ttl)
	if ttl <= 0 || !ok { // checked before the condition, as Redis
		return false, engine.ErrInvalidTTL
	}
	m.reclaim(key, now)
	if _, ok := m.alive(key, now); ok {
		return false, nil
	}
	m.emit(engine.KindNew, key)
	m.emit(engine.KindSet, key)
	m.emit(engine.KindExpire, key)
	m.put(key, entry{val: val, hasTTL: true, deadline: d})
	return true, nil
}

func (m *model) setWith(key, val string, a engine.SetArgs, now int64) (engine.SetResult, error) {
	if a.Cond > engine.IfNotEqual {
		return engine.SetResult{}, engine.ErrSyntax
	}
	// Redis parses the whole command (syntax errors) before it validates
	// the expire value, and validates it before looking at the condition.
	hasAt := !a.At.IsZero()
	if (a.TTL != 0 && hasAt) || (a.KeepTTL && (a.TTL != 0 || hasAt)) {
		return engine.SetResult{}, engine.ErrSyntax
	}
	var d int64
	switch {
	case a.TTL < 0:
		return engine.SetResult{}, engine.ErrInvalidTTL
	case a.TTL > 0:
		var ok bool
		if d, ok = deadlineAfter(now, a.TTL); !ok {
			return engine.SetResult{}, engine.ErrInvalidTTL
		}
	case hasAt:
		// Redis rejects PXAT <= 0; deadlines are int64 Unix ns, so a time
		// after 2262 cannot be stored either.
		if a.At.After(lastUnixNano) || a.At.UnixNano() <= 0 {
			return engine.SetResult{}, engine.ErrInvalidTTL
		}
		d = a.At.UnixNano()
	}
	m.reclaim(key, now)
	cur, found := m.alive(key, now)
	res := engine.SetResult{Old: cur.val, HadOld: found}
	var write bool
	switch a.Cond {
	case engine.Always:
		write = true
	case engine.IfAbsent:
		write = !found
	case engine.IfPresent:
		write = found
	case engine.IfEqual:
		write = found && cur.val == a.Match
	case engine.IfNotEqual:
		write = !found || cur.val != a.Match
	}
	if !write {
		return res, nil
	}
	e := entry{val: val}
	switch {
	case a.KeepTTL && found:
		e.hasTTL, e.deadline = cur.hasTTL, cur.deadline
	case a.TTL > 0 || hasAt:
		e.hasTTL, e.deadline = true, d
	}
	res.Written = true
	if !found {
		m.emit(engine.KindNew, key)
	}
	m.emit(engine.KindSet, key)
	if a.TTL > 0 || hasAt {
		m.emit(engine.KindExpire, key)
	}
	if hasAt && d < now {
		// A deadline already passed: Redis stores the key and reclaims it
		// at its next access; the engine reclaims it at once.
		m.emit(engine.KindExpired, key)
		m.remove(key, "expired at once: written with a deadline in the past")
		return res, nil
	}
	m.put(key, e)
	return res, nil
}

func (m *model) getSet(key, val string, now int64) (string, bool) {
	m.reclaim(key, now)
	old, ok := m.alive(key, now)
	m.created(key, now)
	m.emit(engine.KindSet, key)
	m.put(key, entry{val: val})
	return old.val, ok
}

func (m *model) getDel(key string, now int64) (string, bool) {
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	if ok {
		m.emit(engine.KindDel, key)
		m.remove(key, "deleted")
	}
	return e.val, ok
}

func (m *model) compareAndDelete(key, val string, now int64) bool {
	if e, held := m.keys[key]; held && e.val == val {
		// A match is decided under the lock, which reclaims an expired
		// key; another value may fail without looking at the deadline.
		m.reclaim(key, now)
	}
	e, ok := m.alive(key, now)
	if !ok || e.val != val {
		return false
	}
	m.emit(engine.KindDel, key)
	m.remove(key, "deleted")
	return true
}

func (m *model) compareAndSwap(key, old, val string, now int64) bool {
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	if !ok || e.val != old {
		return false
	}
	m.emit(engine.KindSet, key)
	e.val = val
	m.put(key, e)
	return true
}

func (m *model) compareAndPExpire(key, val string, ttl time.Duration, now int64) (bool, error) {
	d, ok := deadlineAfter(now, ttl)
	if ttl <= 0 || !ok {
		return false, engine.ErrInvalidTTL
	}
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	if !ok || e.val != val {
		return false, nil
	}
	m.emit(engine.KindExpire, key)
	e.hasTTL, e.deadline = true, d
	m.put(key, e)
	return true, nil
}

func (m *model) del(keys []string, now int64) int {
	n := 0
	for _, k := range keys {
		m.reclaim(k, now)
		if _, ok := m.alive(k, now); ok {
			m.emit(engine.KindDel, k)
			m.remove(k, "deleted")
			n++
		}
	}
	return n
}

// expireAt applies a new deadline to a live key: a deadline at or before now
// deletes the key at once (Redis checkAlreadyExpired: when <= now), which
// Redis reports as a delete.
func (m *model) expireAt(key string, e entry, d, now int64) {
	if d <= now {
		m.emit(engine.KindDel, key)
		m.remove(key, "expired at once: an expire command set deadline <= now")
		return
	}
	m.emit(engine.KindExpire, key)
	e.hasTTL, e.deadline = true, d
	m.put(key, e)
}

func (m *model) pexpire(key string, ttl time.Duration, now int64) (bool, error) {
	return m.pexpireCond(key, ttl, engine.ExpireAlways, now)
}

func (m *model) pexpireCond(key string, ttl time.Duration, c engine.ExpireCond, now int64) (bool, error) {
	if c > engine.ExpireLT {
		return false, engine.ErrSyntax
	}
	d, ok := deadlineAfter(now, ttl)
	if !ok { // Redis checks overflow before looking the key up
		return false, engine.ErrInvalidTTL
	}
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	if !ok {
		return false, nil
	}
	switch c {
	case engine.ExpireNX:
		ok = !e.hasTTL
	case engine.ExpireXX:
		ok = e.hasTTL
	case engine.ExpireGT: // no TTL counts as infinite
		ok = e.hasTTL && d > e.deadline
	case engine.ExpireLT:
		ok = !e.hasTTL || d < e.deadline
	}
	if !ok {
		return false, nil
	}
	m.expireAt(key, e, d, now)
	return true, nil
}

// lastUnixNano is the latest time whose UnixNano is defined (year 2262).
var lastUnixNano = time.Unix(0, math.MaxInt64)

func (m *model) pexpireAt(key string, at time.Time, now int64) (bool, error) {
	if at.After(lastUnixNano) {
		return false, engine.ErrInvalidTTL // beyond int64 ns: changes nothing
	}
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	if !ok {
		return false, nil
	}
	m.expireAt(key, e, at.UnixNano(), now)
	return true, nil
}

func (m *model) pttl(key string, now int64) (time.Duration, bool) {
	e, ok := m.alive(key, now)
	switch {
	case !ok:
		return 0, false
	case !e.hasTTL:
		return engine.NoExpiry, true
	default:
		return time.Duration(e.deadline - now), true
	}
}

func (m *model) persist(key string, now int64) bool {
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	if !ok || !e.hasTTL {
		return false
	}
	m.emit(engine.KindPersist, key)
	e.hasTTL, e.deadline = false, 0
	m.put(key, e)
	return true
}

func (m *model) incrBy(key string, n int64, now int64) (int64, error) {
	m.reclaim(key, now)
	e, ok := m.alive(key, now)
	var cur int64
	if ok {
		var valid bool
		if cur, valid = redisParseInt(e.val); !valid {
			return 0, engine.ErrNotInteger
		}
	} else {
		e = entry{} // a missing or expired key counts as 0 and gets no TTL
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) {
		return 0, engine.ErrOverflow
	}
	if !ok {
		m.emit(engine.KindNew, key)
	}
	m.emit(engine.KindIncrBy, key)
	e.val = strconv.FormatInt(cur+n, 10)
	m.put(key, e)
	return cur + n, nil
}

// redisParseInt is Redis's string2ll: an optional '-', then digits without
// leading zeros (except "0" itself), nothing else, within int64.
func redisParseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// reap purges expired entries, as Engine.Reap does at now, and returns how
// many there were.
// reservedLive returns the number of live reserved keys.
func (m *model) reservedLive(now int64) int {
	n := 0
	for k := range m.keys {
		if _, ok := m.alive(k, now); ok && engine.Reserved(k) {
			n++
		}
	}
	return n
}

func (m *model) reap(now int64) int {
	n := 0
	for k := range m.keys {
		if _, ok := m.alive(k, now); !ok {
			m.emit(engine.KindExpired, k)
			m.remove(k, "expired and reaped")
			n++
		}
	}
	return n
}

// nextDeadline returns the earliest deadline >= now, if any.
func (m *model) nextDeadline(now int64) (int64, bool) {
	best, found := int64(0), false
	for _, e := range m.keys {
		if e.hasTTL && e.deadline >= now && (!found || e.deadline < best) {
			best, found = e.deadline, true
		}
	}
	return best, found
}

// ---------------------------------------------------------------------------
// Operations, built from a stream of choices so rapid and the fuzzer share
// one generator.

type opKind uint8

const (
	opGet opKind = iota
	opSet
	opSetPX
	opSetNX
	opSetNXPX
	opSetWith
	opGetSet
	opGetDel
	opCompareAndDelete
	opCompareAndSwap
	opCompareAndPExpire
	opDel
	opExists
	opPExpire
	opPExpireCond
	opPExpireAt
	opPTTL
	opPersist
	opIncrBy
	opLen
	opReap
	opAdvance
	opAdvanceToDeadline
	opClose
	opSetNXPXFenced
	opExpireTime
	opFlush
	opRange
	opStepBack
	opFlushAll
	opRangeAll
)

// opWeights lists kinds with repetition as weights; index 0 is the
// simplest op, which is what shrinking moves towards.
var opWeights = []opKind{
	opGet, opSet, opSetPX, opSetPX, opSetNX, opSetNXPX, opSetNXPX,
	opSetWith, opSetWith, opSetWith, opGetSet, opGetDel,
	opCompareAndDelete, opCompareAndDelete, opCompareAndSwap, opCompareAndPExpire,
	opDel, opExists, opPExpire, opPExpire, opPExpireCond, opPExpireCond, opPExpireAt,
	opPTTL, opPersist, opIncrBy, opIncrBy, opLen, opReap,
	opAdvance, opAdvance, opAdvance, opAdvanceToDeadline, opAdvanceToDeadline, opAdvanceToDeadline,
	opClose, opSetNXPXFenced, opSetNXPXFenced, opSetNXPXFenced, opExpireTime, opFlush, opRange, opStepBack,
	opFlushAll, opRangeAll,
}

// counterKey is a reserved key (engine.ReservedPrefix): IncrBy never
// repeats its values, whatever deletes it.
const counterKey = engine.ReservedPrefix + "n"

var (
	alphabet = []string{"a", "b", "", "c"}
	// modelKeys are the keys the model draws: the alphabet, which the
	// differential test against Redis shares, and a reserved key.
	modelKeys = append(alphabet[:len(alphabet):len(alphabet)], counterKey)
	values    = []string{"x", "y", "1", "", "-7", "01", "+5", " 2", "-0", "9223372036854775807", "-9223372036854775808", "v"}
	ttls      = []time.Duration{
		time.Second, time.Millisecond, time.Nanosecond, 10 * time.Millisecond, time.Hour, 0, -time.Millisecond,
		engine.NoExpiry, time.Microsecond, 24 * time.Hour, math.MaxInt64 / 2, math.MaxInt64, math.MinInt64,
	}
	atOffsets = []time.Duration{
		time.Hour, 0, -time.Nanosecond, time.Nanosecond, -time.Hour, time.Millisecond, -time.Millisecond, 100 * 365 * 24 * time.Hour,
		-60 * 365 * 24 * time.Hour, // before 1970: SET PXAT <= 0 is invalid, PEXPIREAT deletes
		250 * 365 * 24 * time.Hour, // after 2262: not representable in int64 ns
	}
	advances = []time.Duration{
		time.Millisecond, 0, time.Nanosecond, time.Microsecond, 10 * time.Millisecond, time.Second, time.Hour, 30 * time.Hour,
	}
	deadlineDeltas = []time.Duration{0, -time.Nanosecond, time.Nanosecond}
	stepBacks      = []time.Duration{time.Millisecond, time.Second, time.Hour, time.Nanosecond}
	increments     = []int64{1, 0, -1, 7, math.MaxInt64, math.MinInt64}
	conditions     = []engine.Condition{engine.Always, engine.IfAbsent, engine.IfPresent, engine.IfEqual, engine.IfNotEqual, 9}
	expireConds    = []engine.ExpireCond{engine.ExpireAlways, engine.ExpireNX, engine.ExpireXX, engine.ExpireGT, engine.ExpireLT, 9}
)

// op is one step: an engine call with its arguments, or a clock advance.
// Time-relative arguments (atOff, matchCur, advance to deadline) are resolved
// against the model when the op runs, so an op is a static value.
type op struct {
	kind     opKind
	key      string
	keys     []string // Del
	val      string
	match    string // CompareAndDelete/CompareAndSwap/CompareAndPExpire value, SetArgs.Match
	matchCur bool   // use the model's stored value (even if expired) as match
	ttl      time.Duration
	atOff    time.Duration // PExpireAt, SetArgs.At: relative to now
	hasAt    bool          // SetArgs.At set
	cond     engine.Condition
	keepTTL  bool
	econd    engine.ExpireCond
	n        int64
	adv      time.Duration // opAdvance amount, opAdvanceToDeadline delta
}

// buildOp makes an op from choices: pick(n) returns a number in [0, n).
func buildOp(pick func(n int) int) op {
	from := func(s []string) string { return s[pick(len(s))] }
	o := op{kind: opWeights[pick(len(opWeights))]}
	switch o.kind {
	case opAdvance:
		o.adv = advances[pick(len(advances))]
		return o
	case opAdvanceToDeadline:
		o.adv = deadlineDeltas[pick(len(deadlineDeltas))]
		return o
	case opStepBack:
		o.adv = stepBacks[pick(len(stepBacks))]
		return o
	case opLen, opReap, opClose, opFlush, opRange, opFlushAll, opRangeAll:
		return o
	case opDel:
		for n := pick(4); n > 0; n-- {
			o.keys = append(o.keys, from(modelKeys))
		}
		return o
	}
	o.key = from(modelKeys)
	switch o.kind {
	case opSet, opSetNX, opGetSet:
		o.val = from(values)
	case opSetPX, opSetNXPX, opSetNXPXFenced:
		o.val = from(values)
		o.ttl = ttls[pick(len(ttls))]
	case opSetWith:
		o.val = from(values)
		o.cond = conditions[pick(len(conditions))]
		o.match = from(values)
		o.matchCur = pick(2) == 1
		switch pick(6) {
		case 0: // no expiry argument
		case 1:
			o.ttl = ttls[pick(len(ttls))]
		case 2:
			o.hasAt, o.atOff = true, atOffsets[pick(len(atOffsets))]
		case 3:
			o.keepTTL = true
		case 4: // conflicting expiry arguments: a syntax error
			o.ttl, o.keepTTL = ttls[pick(len(ttls))], true
		case 5:
			o.ttl, o.hasAt, o.atOff = ttls[pick(len(ttls))], true, atOffsets[pick(len(atOffsets))]
		}
	case opCompareAndDelete:
		o.match, o.matchCur = from(values), pick(4) != 0
	case opCompareAndSwap:
		o.match, o.matchCur, o.val = from(values), pick(4) != 0, from(values)
	case opCompareAndPExpire:
		o.match, o.matchCur, o.ttl = from(values), pick(4) != 0, ttls[pick(len(ttls))]
	case opPExpire:
		o.ttl = ttls[pick(len(ttls))]
	case opPExpireCond:
		o.ttl = ttls[pick(len(ttls))]
		o.econd = expireConds[pick(len(expireConds))]
	case opPExpireAt:
		o.atOff = atOffsets[pick(len(atOffsets))]
	case opIncrBy:
		o.n = increments[pick(len(increments))]
	}
	return o
}

// GoString makes rapid's draw log read like a call sequence.
func (o op) GoString() string {
	m := strconv.Quote(o.match)
	if o.matchCur {
		m = "<current value>"
	}
	switch o.kind {
	case opGet:
		return fmt.Sprintf("Get(%q)", o.key)
	case opSet:
		return fmt.Sprintf("Set(%q, %q)", o.key, o.val)
	case opSetPX:
		return fmt.Sprintf("SetPX(%q, %q, %v)", o.key, o.val, o.ttl)
	case opSetNX:
		return fmt.Sprintf("SetNX(%q, %q)", o.key, o.val)
	case opSetNXPX:
		return fmt.Sprintf("SetNXPX(%q, %q, %v)", o.key, o.val, o.ttl)
	case opSetWith:
		at := "none"
		if o.hasAt {
			at = "now" + fmtOffset(o.atOff)
		}
		return fmt.Sprintf("SetWith(%q, %q, {Cond:%d Match:%s TTL:%v At:%s KeepTTL:%v})", o.key, o.val, o.cond, m, o.ttl, at, o.keepTTL)
	case opGetSet:
		return fmt.Sprintf("GetSet(%q, %q)", o.key, o.val)
	case opGetDel:
		return fmt.Sprintf("GetDel(%q)", o.key)
	case opCompareAndDelete:
		return fmt.Sprintf("CompareAndDelete(%q, %s)", o.key, m)
	case opCompareAndSwap:
		return fmt.Sprintf("CompareAndSwap(%q, %s, %q)", o.key, m, o.val)
	case opCompareAndPExpire:
		return fmt.Sprintf("CompareAndPExpire(%q, %s, %v)", o.key, m, o.ttl)
	case opDel:
		return fmt.Sprintf("Del(%q)", o.keys)
	case opExists:
		return fmt.Sprintf("Exists(%q)", o.key)
	case opPExpire:
		return fmt.Sprintf("PExpire(%q, %v)", o.key, o.ttl)
	case opPExpireCond:
		return fmt.Sprintf("PExpireCond(%q, %v, %d)", o.key, o.ttl, o.econd)
	case opPExpireAt:
		return fmt.Sprintf("PExpireAt(%q, now%s)", o.key, fmtOffset(o.atOff))
	case opPTTL:
		return fmt.Sprintf("PTTL(%q)", o.key)
	case opPersist:
		return fmt.Sprintf("Persist(%q)", o.key)
	case opIncrBy:
		return fmt.Sprintf("IncrBy(%q, %d)", o.key, o.n)
	case opLen:
		return "Len()"
	case opReap:
		return "Reap()"
	case opClose:
		return "Close()"
	case opAdvance:
		return fmt.Sprintf("clock.Add(%v)", o.adv)
	case opAdvanceToDeadline:
		return fmt.Sprintf("clock.Add(to next deadline%s)", fmtOffset(o.adv))
	case opSetNXPXFenced:
		return fmt.Sprintf("SetNXPXFenced(%q, %q, %v)", o.key, o.val, o.ttl)
	case opExpireTime:
		return fmt.Sprintf("ExpireTime(%q)", o.key)
	case opFlush:
		return "Flush()"
	case opFlushAll:
		return "FlushAll()"
	case opRange:
		return "Range()"
	case opRangeAll:
		return "RangeAll()"
	case opStepBack:
		return fmt.Sprintf("clock.Set(now-%v)", o.adv)
	}
	return fmt.Sprintf("op(%d)", o.kind)
}

func fmtOffset(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

// ---------------------------------------------------------------------------
// The harness: runs an op on the system under test and on the model,
// compares, then checks the invariants.

// tester is what the harness needs from *testing.T and *rapid.T.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
}

type harness struct {
	last int64 // the engine time the harness last saw
	sut  kv
	eng  *engine.Engine // the engine under sut, for engine.Verify
	clk  *clock.Mock
	m    *model
	// rec receives the engine's change feed.
	rec *recorder
	// watches holds one pending Watch per model key, renewed after it
	// fires: a watch must fire exactly when the model saw the key change.
	watches map[string]*watchState
}

// watchState is a pending Watch and what the model expects of it.
type watchState struct {
	ch   <-chan struct{}
	stop func()
	// mustFire is set once the model records a change of the key: a
	// successful write or delete, or the deadline the key had when
	// watched passing (expiry).
	mustFire    bool
	because     string
	hasDeadline bool
	deadline    int64
}

// changed records that the last op changed key.
func (h *harness) changed(key, because string) {
	if w := h.watches[key]; w != nil && !w.mustFire {
		w.mustFire, w.because = true, because
	}
}

// stopWatches releases every pending watch.
func (h *harness) stopWatches() {
	for k, w := range h.watches {
		w.stop()
		delete(h.watches, k)
	}
}

// now returns the engine's time, checking the clock rule on the way: it
// never decreases, and it is never behind the clock.
func (h *harness) now() int64 {
	n := h.eng.Now().UnixNano()
	if n < h.last {
		panic(fmt.Sprintf("engine time went backwards: %s after %s", fmtNow(n), fmtNow(h.last)))
	}
	if c := h.clk.Now().UnixNano(); n < c {
		panic(fmt.Sprintf("engine time %s is behind the clock %s", fmtNow(n), fmtNow(c)))
	}
	h.last = n
	return n
}

// sameErr reports whether got is want (nil for no error).
func sameErr(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

// exec runs o on both sides, fails t on the first difference, then checks
// the invariants.
func (h *harness) exec(t tester, o op) {
	t.Helper()
	h.apply(t, o)
	h.check(t)
}

// apply runs o on both sides and fails t on the first difference, in its
// results or in the events the change feed reported.
func (h *harness) apply(t tester, o op) {
	t.Helper()
	h.drainIdle(t, "before "+o.GoString())
	h.m.beginStep()
	h.applyOp(t, o)
	h.checkFeed(t, o.GoString())
}

// drainIdle takes the events reported since the last step, when no
// operation ran: only the reaper can have made them, or the reads of
// check, so each must be the reclamation of a key the model holds
// expired. The model forgets those keys.
func (h *harness) drainIdle(t tester, when string) {
	t.Helper()
	now := h.now()
	held := h.m.expiredHeld(now)
	for _, ev := range h.rec.takeEvents() {
		if ev.Kind != engine.KindExpired || !held[ev.Key] {
			t.Fatalf("%s: change feed reported %q %q, which no operation made (now %s)", when, ev.Kind, ev.Key, fmtNow(now))
		}
		delete(held, ev.Key)
		h.m.remove(ev.Key, "expired and reclaimed")
	}
}

// checkFeed compares the events the change feed reported during the step
// (call) with those the model expects (h.m.ev). Events other than
// KindExpired must be the model's, in the model's order. Per key, the
// events must be the model's, except that a key the model held expired
// may be reclaimed (KindExpired first) by the concurrent reaper, or by a
// lookup the model does not count on, when the model expects no
// reclamation by the step itself.
func (h *harness) checkFeed(t tester, call string) {
	t.Helper()
	now := h.now()
	got, want := h.rec.takeEvents(), h.m.ev
	notExpired := func(evs []engine.Event) []engine.Event {
		return slices.DeleteFunc(slices.Clone(evs), func(ev engine.Event) bool { return ev.Kind == engine.KindExpired })
	}
	fail := func(what string) {
		t.Helper()
		t.Fatalf("%s: change feed reported %q, want %q: %s (now %s)", call, eventStrings(got), eventStrings(want), what, fmtNow(now))
	}
	if !slices.Equal(notExpired(got), notExpired(want)) {
		fail("wrong events")
	}
	byKey := func(evs []engine.Event) map[string][]engine.Event {
		m := map[string][]engine.Event{}
		for _, ev := range evs {
			m[ev.Key] = append(m[ev.Key], ev)
		}
		return m
	}
	gotBy, wantBy := byKey(got), byKey(want)
	for k, g := range gotBy {
		w := wantBy[k]
		if slices.Equal(g, w) {
			continue
		}
		e, held := h.m.before(k)
		mayExpire := held && e.hasTTL && now > e.deadline
		if mayExpire && g[0].Kind == engine.KindExpired && slices.Equal(g[1:], w) && (len(w) == 0 || w[0].Kind != engine.KindExpired) {
			if cur, ok := h.m.keys[k]; ok && cur == e {
				h.m.remove(k, "expired and reclaimed")
			}
			continue
		}
		fail(fmt.Sprintf("events of key %q out of order, missing or extra", k))
	}
	for k := range wantBy {
		if _, ok := gotBy[k]; !ok {
			fail(fmt.Sprintf("no event for key %q", k))
		}
	}
}

// applyOp runs o on both sides and fails t on the first difference.
func (h *harness) applyOp(t tester, o op) {
	t.Helper()
	now := h.now()
	if o.matchCur {
		if e, ok := h.m.keys[o.key]; ok {
			o.match = e.val
		}
	}
	call := o.GoString()
	if o.matchCur {
		call = strings.ReplaceAll(call, "<current value>", strconv.Quote(o.match))
	}
	at := time.Unix(0, now).Add(o.atOff).UTC()
	mismatch := func(got, want any) {
		t.Helper()
		t.Fatalf("%s = %v, want %v (now %s)", call, got, want, fmtNow(now))
	}
	switch o.kind {
	case opGet:
		got, gok := h.sut.Get(o.key)
		want, wok := h.m.get(o.key, now)
		h.m.reclaim(o.key, now)
		if got != want || gok != wok {
			mismatch(pair(got, gok), pair(want, wok))
		}
	case opSet:
		if err := h.sut.Set(o.key, o.val); err != nil {
			mismatch(err, nil)
		}
		h.m.set(o.key, o.val, now)
		h.changed(o.key, call)
	case opSetPX:
		got := h.sut.SetPX(o.key, o.val, o.ttl)
		want := h.m.setPX(o.key, o.val, o.ttl, now)
		if !sameErr(got, want) {
			mismatch(got, want)
		}
		if want == nil {
			h.changed(o.key, call)
		}
	case opSetNX:
		got, gerr := h.sut.SetNX(o.key, o.val)
		want := h.m.setNX(o.key, o.val, now)
		if got != want || gerr != nil {
			mismatch(pair(got, gerr), pair(want, nil))
		}
		if want {
			h.changed(o.key, call)
		}
	case opSetNXPX:
		got, gerr := h.sut.SetNXPX(o.key, o.val, o.ttl)
		want, werr := h.m.setNXPX(o.key, o.val, o.ttl, now)
		if got != want || !sameErr(gerr, werr) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if want {
			h.changed(o.key, call)
		}
	case opSetWith:
		args := engine.SetArgs{Cond: o.cond, Match: o.match, TTL: o.ttl, KeepTTL: o.keepTTL}
		if o.hasAt {
			args.At = at
		}
		got, gerr := h.sut.SetWith(o.key, o.val, args)
		want, werr := h.m.setWith(o.key, o.val, args, now)
		if !sameErr(gerr, werr) || (werr == nil && got != want) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if want.Written {
			h.changed(o.key, call)
		}
	case opGetSet:
		got, gok, gerr := h.sut.GetSet(o.key, o.val)
		want, wok := h.m.getSet(o.key, o.val, now)
		if got != want || gok != wok || gerr != nil {
			mismatch(fmt.Sprint(got, gok, gerr), pair(want, wok))
		}
		h.changed(o.key, call)
	case opGetDel:
		got, gok := h.sut.GetDel(o.key)
		want, wok := h.m.getDel(o.key, now)
		if got != want || gok != wok {
			mismatch(pair(got, gok), pair(want, wok))
		}
		if wok {
			h.changed(o.key, call)
		}
	case opCompareAndDelete:
		got, want := h.sut.CompareAndDelete(o.key, o.match), h.m.compareAndDelete(o.key, o.match, now)
		if got != want {
			mismatch(got, want)
		}
		if want {
			h.changed(o.key, call)
		}
	case opCompareAndSwap:
		got, gerr := h.sut.CompareAndSwap(o.key, o.match, o.val)
		want := h.m.compareAndSwap(o.key, o.match, o.val, now)
		if got != want || gerr != nil {
			mismatch(pair(got, gerr), pair(want, nil))
		}
		if want {
			h.changed(o.key, call)
		}
	case opCompareAndPExpire:
		got, gerr := h.sut.CompareAndPExpire(o.key, o.match, o.ttl)
		want, werr := h.m.compareAndPExpire(o.key, o.match, o.ttl, now)
		if got != want || !sameErr(gerr, werr) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if want {
			h.changed(o.key, call)
		}
	case opDel:
		for _, k := range o.keys {
			if _, ok := h.m.alive(k, now); ok {
				h.changed(k, call)
			}
		}
		got, want := h.sut.Del(o.keys...), h.m.del(o.keys, now)
		if got != want {
			mismatch(got, want)
		}
	case opExists:
		got := h.sut.Exists(o.key)
		_, want := h.m.alive(o.key, now)
		h.m.reclaim(o.key, now)
		if got != want {
			mismatch(got, want)
		}
	case opPExpire:
		got, gerr := h.sut.PExpire(o.key, o.ttl)
		want, werr := h.m.pexpire(o.key, o.ttl, now)
		if got != want || !sameErr(gerr, werr) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if want {
			h.changed(o.key, call)
		}
	case opPExpireCond:
		got, gerr := h.sut.PExpireCond(o.key, o.ttl, o.econd)
		want, werr := h.m.pexpireCond(o.key, o.ttl, o.econd, now)
		if got != want || !sameErr(gerr, werr) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if want {
			h.changed(o.key, call)
		}
	case opPExpireAt:
		got, gerr := h.sut.PExpireAt(o.key, at)
		want, werr := h.m.pexpireAt(o.key, at, now)
		if got != want || !sameErr(gerr, werr) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if want {
			h.changed(o.key, call)
		}
	case opPTTL:
		got, gok := h.sut.PTTL(o.key)
		want, wok := h.m.pttl(o.key, now)
		h.m.reclaim(o.key, now)
		if gok != wok || (wok && got != want) {
			mismatch(pair(got, gok), pair(want, wok))
		}
	case opPersist:
		got, want := h.sut.Persist(o.key), h.m.persist(o.key, now)
		if got != want {
			mismatch(got, want)
		}
		if want {
			h.changed(o.key, call)
		}
	case opIncrBy:
		if _, ok := h.m.alive(o.key, now); !ok && engine.Reserved(o.key) {
			h.incrAbsentCounter(t, o, call, now)
			return
		}
		got, gerr := h.sut.IncrBy(o.key, o.n)
		want, werr := h.m.incrBy(o.key, o.n, now)
		if !sameErr(gerr, werr) || (werr == nil && got != want) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		if werr == nil {
			h.changed(o.key, call)
			if engine.Reserved(o.key) {
				h.m.counters[o.key] = max(h.m.counters[o.key], want)
			}
		}
	case opLen:
		// checked by invariants below
	case opClose:
		// Close stops the reaper; the engine keeps serving every call
		// (lazy expiry and Reap only), and a second Close is harmless.
		if err := h.sut.Close(); err != nil {
			t.Fatalf("Close() = %v, want nil", err)
		}
	case opReap:
		live, held := h.m.counts(now, true)
		got := h.sut.Reap()
		// The background reaper may have reclaimed some already, so only
		// the upper bound is exact.
		if got < 0 || got > held-live {
			t.Fatalf("%s = %d, want in [0, %d] (expired keys held; now %s)", call, got, held-live, fmtNow(now))
		}
		h.m.reap(now)
		if n := h.sut.LenAll(); n != live {
			t.Fatalf("LenAll() after Reap() = %d, want %d live keys (now %s)", n, live, fmtNow(now))
		}
		if n, want := h.sut.Len(), live-h.m.reservedLive(now); n != want {
			t.Fatalf("Len() after Reap() = %d, want %d live keys outside the reserved prefix (now %s)", n, want, fmtNow(now))
		}
	case opSetNXPXFenced:
		fence, got, gerr := h.sut.SetNXPXFenced(o.key, o.val, o.ttl)
		want, werr := h.m.setNXPX(o.key, o.val, o.ttl, now)
		if got != want || !sameErr(gerr, werr) {
			mismatch(pair(got, gerr), pair(want, werr))
		}
		switch last := h.m.fences[o.key]; {
		case !got && fence != 0:
			t.Fatalf("%s = fence %d with ok false, want 0 (now %s)", call, fence, fmtNow(now))
		case got && fence <= last:
			t.Fatalf("%s = fence %d, want > %d, the key's previous fence (now %s)", call, fence, last, fmtNow(now))
		case got:
			h.m.fences[o.key] = fence
			h.changed(o.key, call)
		}
	case opExpireTime:
		got, gok := h.sut.ExpireTime(o.key)
		e, wok := h.m.alive(o.key, now)
		h.m.reclaim(o.key, now)
		var want time.Time
		if wok && e.hasTTL {
			want = time.Unix(0, e.deadline)
		}
		if gok != wok || !got.Equal(want) {
			mismatch(pair(got, gok), pair(want, wok))
		}
	case opFlush, opFlushAll:
		// Flush keeps the reserved keys, FlushAll deletes them too.
		// Expired keys the engine may still hold fire their watchers too,
		// but those watches are already due (their deadline passed).
		all := o.kind == opFlushAll
		for k := range h.m.keys {
			if _, ok := h.m.alive(k, now); ok && (all || !engine.Reserved(k)) {
				h.changed(k, call)
			}
		}
		if all {
			h.sut.FlushAll()
		} else {
			h.sut.Flush()
		}
		for k := range h.m.keys {
			if all || !engine.Reserved(k) {
				h.m.remove(k, "flushed")
			}
		}
		h.m.emit(engine.KindFlush, "")
		if n := h.sut.Len(); n != 0 {
			t.Fatalf("Len() after %s = %d, want 0", call, n)
		}
	case opRange, opRangeAll:
		all := o.kind == opRangeAll
		iter := h.sut.Range
		if all {
			iter = h.sut.RangeAll
		}
		got := map[string]bool{}
		iter(func(k string) bool {
			if got[k] {
				t.Fatalf("Range() visited %q twice (now %s)", k, fmtNow(now))
			}
			got[k] = true
			return true
		})
		for k := range h.m.keys {
			_, ok := h.m.alive(k, now)
			if ok = ok && (all || !engine.Reserved(k)); ok != got[k] {
				t.Fatalf("%s visited %q: %v, want %v (now %s)", call, k, got[k], ok, fmtNow(now))
			}
			delete(got, k)
		}
		for k := range got {
			t.Fatalf("Range() visited %q, which the model does not hold (now %s)", k, fmtNow(now))
		}
		for k := range h.m.expiredHeld(now) {
			h.m.reclaim(k, now)
		}
	case opStepBack:
		// The engine holds its time at the latest reading until the clock
		// passes it again (checked by now); nothing else changes.
		h.clk.Set(h.clk.Now().Add(-o.adv))
	case opAdvance:
		h.clk.Add(o.adv)
	case opAdvanceToDeadline:
		// Deadlines decades ahead (TTL MaxInt64/2) are not jumped to: the
		// clock stays near realistic dates.
		// After a step back the clock is behind the engine's time: move
		// it to the deadline itself, not by the distance from now.
		d, ok := h.m.nextDeadline(now)
		step := time.Duration(d-now) + o.adv
		if !ok || step < 0 || step > 48*time.Hour {
			h.clk.Add(time.Millisecond)
		} else {
			h.clk.Set(time.Unix(0, now).Add(step))
		}
	default:
		t.Fatalf("unknown op %d", o.kind)
	}
}

// incrAbsentCounter runs IncrBy of a reserved key the model holds absent:
// it starts from its shard's fencing counter, which the model does not
// know but which is at least 0 and every value the key had, so the result
// is checked against that bound and then learnt. ErrOverflow is accepted
// for n > 0: the shard's counter may be that high.
func (h *harness) incrAbsentCounter(t tester, o op, call string, now int64) {
	t.Helper()
	h.m.reclaim(o.key, now)
	got, err := h.sut.IncrBy(o.key, o.n)
	low := h.m.counters[o.key]
	switch {
	case errors.Is(err, engine.ErrOverflow) && o.n > 0:
		return
	case err != nil:
		t.Fatalf("%s = %v, want a value (now %s)", call, err, fmtNow(now))
	case got-o.n < low:
		t.Fatalf("%s = %d: the counter resumed from %d, below %d, a value it had (now %s)", call, got, got-o.n, low, fmtNow(now))
	}
	h.m.emit(engine.KindNew, o.key)
	h.m.emit(engine.KindIncrBy, o.key)
	h.m.put(o.key, entry{val: strconv.FormatInt(got, 10)})
	h.m.counters[o.key] = max(low, got)
	h.changed(o.key, call)
}

// check verifies the invariants at the clock's current time: every key of
// the alphabet reads exactly as the model says (so no expired key is
// visible and no live key is lost), and live <= Len <= held.
func (h *harness) check(t tester) {
	t.Helper()
	now := h.now()
	for _, k := range modelKeys {
		e, held := h.m.keys[k]
		want, wok := h.m.get(k, now)
		got, gok := h.sut.Get(k)
		switch {
		case gok && !wok && held:
			t.Fatalf("Get(%q) = %q, want absent: expired key visible (now-deadline = %v, now %s)", k, got, time.Duration(now-e.deadline), fmtNow(now))
		case gok && !wok:
			why := h.m.gone[k]
			if why == "" {
				why = "never set"
			}
			t.Fatalf("Get(%q) = %q, want absent: %s (now %s)", k, got, why, fmtNow(now))
		case !gok && wok:
			t.Fatalf("Get(%q) = absent, want present %q (now-deadline = %v, hasTTL %v, now %s)", k, want, time.Duration(now-e.deadline), e.hasTTL, fmtNow(now))
		case got != want:
			t.Fatalf("Get(%q) = %q, want %q (now %s)", k, got, want, fmtNow(now))
		}
		gttl, gok := h.sut.PTTL(k)
		wttl, wok := h.m.pttl(k, now)
		if gok != wok || (wok && gttl != wttl) {
			t.Fatalf("PTTL(%q) = %v, %v; want %v, %v (now %s)", k, gttl, gok, wttl, wok, fmtNow(now))
		}
		if got := h.sut.Exists(k); got != wok {
			t.Fatalf("Exists(%q) = %v, want %v (now %s)", k, got, wok, fmtNow(now))
		}
	}
	// Every key was just read, so every expired one was reclaimed, and
	// the change feed must have said so.
	h.drainIdle(t, "after reading every key")
	for _, k := range modelKeys {
		if e, ok := h.m.keys[k]; ok && e.hasTTL && now > e.deadline {
			t.Fatalf("Get(%q) found the key expired (deadline %s) and the change feed never reported it expired (now %s)", k, fmtNow(e.deadline), fmtNow(now))
		}
	}
	h.checkLen(t, now)
	h.checkWatches(t, now)
	h.verifyInternals(t)
}

// checkLen checks that Len (keys outside the reserved prefix) and LenAll
// (every key) lie between the live keys and the keys held.
func (h *harness) checkLen(t tester, now int64) {
	t.Helper()
	live, held := h.m.counts(now, false)
	if n := h.sut.Len(); n < live || n > held {
		t.Fatalf("Len() = %d, want in [%d live, %d held] outside the reserved prefix (now %s)", n, live, held, fmtNow(now))
	}
	live, held = h.m.counts(now, true)
	if n := h.sut.LenAll(); n < live || n > held {
		t.Fatalf("LenAll() = %d, want in [%d live, %d held] (now %s)", n, live, held, fmtNow(now))
	}
}

// verifyInternals runs the engine's own invariant checker (map, timer
// wheel, recycler, watchers; engine.Verify from export_test.go).
func (h *harness) verifyInternals(t tester) {
	t.Helper()
	if err := engine.Verify(h.eng); err != nil {
		t.Fatalf("engine.Verify = %v, want nil (now %s)", err, fmtNow(h.now()))
	}
}

// checkWatches verifies that each pending watch fired exactly if its key
// changed, then renews the fired ones. Expired keys were just read by
// check, which deletes them lazily, so an expiry must have fired by now.
func (h *harness) checkWatches(t tester, now int64) {
	t.Helper()
	if h.watches == nil {
		h.watches = map[string]*watchState{}
	}
	for _, k := range modelKeys {
		w := h.watches[k]
		if w == nil {
			continue
		}
		if w.hasDeadline && now > w.deadline && !w.mustFire {
			w.mustFire, w.because = true, fmt.Sprintf("expiry (deadline %s passed)", fmtNow(w.deadline))
		}
		fired := false
		select {
		case <-w.ch:
			fired = true
		default:
		}
		switch {
		case fired && !w.mustFire:
			t.Fatalf("Watch(%q) fired, want pending: the key did not change (now %s)", k, fmtNow(now))
		case !fired && w.mustFire:
			t.Fatalf("Watch(%q) pending, want fired: the key changed by %s (now %s)", k, w.because, fmtNow(now))
		}
		if fired {
			w.stop()
			delete(h.watches, k)
		}
	}
	for _, k := range modelKeys {
		if h.watches[k] != nil {
			continue
		}
		ch, stop := h.sut.Watch(k)
		w := &watchState{ch: ch, stop: stop}
		if e, ok := h.m.alive(k, now); ok && e.hasTTL {
			w.hasDeadline, w.deadline = true, e.deadline
		}
		h.watches[k] = w
	}
}

func fmtNow(now int64) string { return time.Unix(0, now).UTC().Format(time.RFC3339Nano) }

func pair(a, b any) string { return fmt.Sprintf("(%v, %v)", a, b) }

// newHarness starts an engine on a mock clock at epoch and registers its
// Close with cleanup.
func newHarness(wrap func(*engine.Engine, *clock.Mock) kv) (*harness, func()) {
	clk := clock.NewMock()
	clk.Set(epoch)
	e := engine.New(engine.Options{Clock: clk, Shards: 4})
	var sut kv = e
	if wrap != nil {
		sut = wrap(e, clk)
	}
	h := &harness{sut: sut, eng: e, clk: clk, m: newModel(), rec: &recorder{}}
	stopFeed := e.Listen(h.rec.listen)
	return h, func() {
		stopFeed()
		h.stopWatches()
		_ = e.Close()
	}
}

// modelProp is the rapid property: a random op sequence on the engine
// (optionally wrapped by a planted bug) agrees with the model at every step.
func modelProp(wrap func(*engine.Engine, *clock.Mock) kv) func(*rapid.T) {
	return func(t *rapid.T) {
		h, closeEngine := newHarness(wrap)
		defer closeEngine()
		h.check(t)
		opGen := rapid.Custom(func(t *rapid.T) op {
			return buildOp(func(n int) int { return rapid.IntRange(0, n-1).Draw(t, "choice") })
		})
		// An explicit loop rather than t.Repeat: sequences of up to 200
		// ops (Repeat averages 30) reach states such as a key expiring,
		// being rewritten and expiring again.
		for n := rapid.IntRange(1, 200).Draw(t, "steps"); n > 0; n-- {
			h.exec(t, opGen.Draw(t, "op"))
		}
	}
}

// TestModel runs the engine against the model with rapid.
func TestModel(t *testing.T) {
	rapid.Check(t, modelProp(nil))
}

// TestModelSmoke runs a fixed sequence covering every op kind, so a broken
// harness shows up even if rapid never draws some kind.
func TestModelSmoke(t *testing.T) {
	h, closeEngine := newHarness(nil)
	defer closeEngine()
	seen := map[opKind]bool{}
	for i := 0; i < 1500; i++ {
		r := uint32(i)*2654435761 + 12345
		o := buildOp(func(n int) int {
			r = r*1664525 + 1013904223
			return int(r>>8) % n
		})
		seen[o.kind] = true
		h.exec(t, o)
	}
	for _, k := range opWeights {
		if !seen[k] {
			t.Errorf("op kind %d never generated", k)
		}
	}
}

// verifyKeys compares every given key with the model and checks the Len
// bounds.
func (h *harness) verifyKeys(t tester, keys []string) {
	t.Helper()
	now := h.now()
	for _, k := range keys {
		want, wok := h.m.get(k, now)
		if got, gok := h.sut.Get(k); got != want || gok != wok {
			t.Fatalf("Get(%q) = %q, %v; want %q, %v (now %s)", k, got, gok, want, wok, fmtNow(now))
		}
		wttl, wok := h.m.pttl(k, now)
		if gttl, gok := h.sut.PTTL(k); gok != wok || (wok && gttl != wttl) {
			t.Fatalf("PTTL(%q) = %v, %v; want %v, %v (now %s)", k, gttl, gok, wttl, wok, fmtNow(now))
		}
	}
	h.checkLen(t, now)
	h.verifyInternals(t)
}

// TestModelBulk runs the model over thousands of keys, enough for shards to
// pass the shard package's shrink thresholds (a peak of 1024 per shard) and
// for the reaper to work in batches, with waves of writes, expiries,
// deletes and Reap, comparing every key after each wave.
func TestModelBulk(t *testing.T) {
	h, closeEngine := newHarness(nil)
	defer closeEngine()
	rng := rand.New(rand.NewPCG(7, 11))
	keys := make([]string, 6000)
	for i := range keys {
		keys[i] = fmt.Sprintf("bulk-%d", i)
	}
	ttlsBulk := []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, time.Second, 0}
	for wave := 0; wave < 4; wave++ {
		for i, k := range keys {
			o := op{kind: opSetPX, key: k, val: strconv.Itoa(i + wave), ttl: ttlsBulk[rng.IntN(len(ttlsBulk))]}
			if o.ttl == 0 {
				o.kind = opSet
			}
			h.apply(t, o)
		}
		h.verifyKeys(t, keys)
		// Expire most keys, reclaimed by the reaper or lazily.
		h.apply(t, op{kind: opAdvance, adv: time.Duration(1+rng.IntN(6)) * time.Millisecond})
		h.verifyKeys(t, keys) // reads delete expired keys lazily
		// Delete a random share of the rest, one by one and in batches.
		for _, k := range keys {
			switch rng.IntN(4) {
			case 0:
				h.apply(t, op{kind: opDel, keys: []string{k}})
			case 1:
				h.apply(t, op{kind: opGetDel, key: k})
			case 2:
				h.apply(t, op{kind: opDel, keys: []string{k, keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]}})
			}
		}
		h.verifyKeys(t, keys)
		h.apply(t, op{kind: opAdvance, adv: 2 * time.Second})
		h.apply(t, op{kind: opReap})
		h.verifyKeys(t, keys)
		h.check(t)
	}
}
