package engine

import (
	"errors"
	"unsafe"

	"github.com/nxkv/nxkv/shard"
)

// This file holds typed values: keys whose value is not a string but an
// Object (a server's hash, list, set or sorted set). The engine knows
// nothing of those types. It keeps such a key as it keeps every key, in an
// entry with its deadline, so expiry (lazy and by the reaper), Watch, the
// change feed, Del, Flush and iteration treat every type alike; only the
// value differs.
//
// A key holding an object stores, as its entry's value, the marker: a
// private string that no caller can hold, told apart from every caller's
// string by its length and then its data pointer (its bytes live in a
// variable of this package, never handed out). The object itself is in
// its shard's objects map, keyed by the entry's own key string. The marker
// never leaves the engine: every string operation checks for it.
//
// A memory bound (Options.MaxMemory) counts such a key as a key whose
// value is the marker, plus, for an Object that is a Sizer, the estimate
// it gave when last stored or changed (SetObject, Notify), kept beside it
// so that the same bytes are given back when the key goes.
//
// Invariant, under the shard lock: a stored entry's value is the marker
// iff its shard's objects map holds an object for its key. Whatever
// replaces or removes such an entry (an overwrite, a delete, an expiry,
// Flush) drops the object from the map in the same critical section.

// Object is a value of a type other than string, stored by a server that
// implements the type (package resp keeps its hashes, lists, sets and
// sorted sets as Objects). The engine stores it and hands it back inside
// Update sections only; it never copies, inspects or changes it, and the
// caller changes it only inside a section holding its key.
type Object interface {
	// Type names the object's type as Redis's TYPE command does ("hash",
	// "list", "set", "zset").
	Type() string
}

// ErrWrongType is returned by a string operation that returns an error
// (IncrBy, SetWith with IfEqual or IfNotEqual) on a key that holds an
// Object, as Redis replies WRONGTYPE. Nothing changes.
var ErrWrongType = errors.New("engine: operation against a key holding the wrong kind of value")

// The type names Type reports besides an Object's.
const (
	TypeNone   = "none"
	TypeString = "string"
)

// markerBytes backs the marker. It is a variable, not a string literal, so
// that no string of the program can share its address.
var markerBytes = [24]byte{0, 'n', 'x', 'k', 'v', ' ', 'o', 'b', 'j', 'e', 'c', 't', ' ', 'm', 'a', 'r', 'k', 'e', 'r', 0, 0xff, 0xfe, 0xfd, 0}

// marker is the value stored in the entry of a key holding an Object.
var marker = unsafe.String(&markerBytes[0], len(markerBytes))

// isObject reports whether a stored value is the marker: a length compare
// for nearly every string, a pointer compare for the rest.
func isObject(v string) bool {
	return len(v) == len(markerBytes) && unsafe.StringData(v) == &markerBytes[0]
}

// Sizer is an Object that estimates the bytes it holds besides its key's
// entry, for a memory bound (see "Memory bound" in the package doc). Size
// is called inside the section that stores or changes the object
// (SetObject, and Notify of its key), and only on an engine with a bound;
// it must be cheap, as it runs on each write of the key: an estimate from
// a few sampled elements, as Redis's MEMORY USAGE makes one, is enough.
type Sizer interface {
	Object
	Size() int64
}

// objSlot is a shard's record of an Object.
type objSlot struct {
	obj Object
	// bytes is what the memory bound was charged for obj (its Size when
	// last stored or changed); 0 without a bound or a Sizer.
	bytes int64
}

// dropObjectLocked forgets the object of key, whose entry held the marker
// and is being overwritten or removed, and gives back what it was charged.
func (e *Engine) dropObjectLocked(s *shardT, key string) {
	if b := s.Aux.objects[key].bytes; b != 0 {
		e.accountLocked(s, -b)
	}
	delete(s.Aux.objects, key)
	if len(s.Aux.objects) == 0 {
		s.Aux.objects = nil // a map never shrinks: release it with its last object
	}
}

// Type returns the type of key's value, as Redis TYPE: TypeNone if key is
// absent or expired, TypeString for a string, otherwise its Object's Type.
// It is safe for concurrent use; it takes no lock for an absent key or a
// string (unless the key has expired or a writer is busy on its shard).
func (e *Engine) Type(key string) string {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	var p shard.Probe
	st, v := e.peek(s, h, key, &c, false, &p)
	switch {
	case st == peekAbsent:
		return TypeNone
	case st == peekLive && !isObject(p.Value):
		return TypeString
	}
	known := e.lockAfter(s, st, v, &c)
	t := e.typeLocked(s, h, key, &p, known, &c)
	s.Unlock()
	return t
}

func (e *Engine) typeLocked(s *shardT, h uint64, key string, p *shard.Probe, known bool, c *opState) string {
	switch {
	case !e.liveLocked(s, h, key, p, known, c):
		return TypeNone
	case isObject(p.Value):
		return s.Aux.objects[key].obj.Type()
	}
	return TypeString
}

// Type is Engine.Type inside the section.
func (tx *Tx) Type(key string) string {
	s, h := tx.shard(key)
	return tx.e.typeLocked(s, h, key, new(shard.Probe), false, &tx.c)
}

// Object returns the Object key holds: found reports whether key exists
// (and has not expired), and obj is nil when it holds a string. The
// caller may read and change obj only inside this section, and reports
// each change with Notify (which wakes the key's watchers and tells the
// listeners, as Redis's commands name theirs: "hset", "lpush", ...). An
// object left empty should be deleted with Del, as Redis deletes an empty
// hash, list, set or sorted set.
func (tx *Tx) Object(key string) (obj Object, found bool) {
	s, h := tx.shard(key)
	var p shard.Probe
	if !tx.e.liveLocked(s, h, key, &p, false, &tx.c) {
		return nil, false
	}
	if isObject(p.Value) {
		return s.Aux.objects[key].obj, true
	}
	return nil, true
}

// SetObject stores obj under key, replacing any value of any type and
// clearing any TTL, as Redis's commands that store a new value (SUNIONSTORE,
// ZRANGESTORE, ...) do, and reports kind: after KindNew if it creates the
// key (after KindExpired if it replaces an expired one), as Redis's
// commands report "new" then their own event. obj must not be nil, and the
// engine keeps it until the key is overwritten, deleted, expires or is
// flushed. Unlike the string writes, it stores even in a section a memory
// bound did not admit (see "Memory bound"): a server that bounds its
// memory refuses such a command before it runs.
func (tx *Tx) SetObject(key string, obj Object, kind Kind) {
	if obj == nil {
		panic("engine: SetObject of a nil Object")
	}
	s, h := tx.shard(key)
	c := &tx.c
	var p shard.Probe
	if tx.e.liveLocked(s, h, key, &p, false, c) {
		tx.e.updateLocked(s, &p, marker, noDeadline)
		key = s.EntryLocked(p.Hd).Key // file the object under the entry's own string
	} else {
		tx.e.insertLocked(s, h, key, marker, noDeadline, p.Pos, c)
	}
	if s.Aux.objects == nil {
		s.Aux.objects = make(map[string]objSlot)
	}
	s.Aux.objects[key] = objSlot{obj: obj}
	if tx.e.mem != nil {
		tx.e.chargeObjectLocked(s, key)
	}
	tx.e.eventLocked(s, key, kind, c)
}

// chargeObjectLocked charges the memory bound the change of the Size of
// key's Object, if key holds a Sizer. e.mem is set.
func (e *Engine) chargeObjectLocked(s *shardT, key string) {
	sl, ok := s.Aux.objects[key]
	if !ok {
		return
	}
	z, ok := sl.obj.(Sizer)
	if !ok {
		return
	}
	if b := max(z.Size(), 0); b != sl.bytes {
		e.accountLocked(s, b-sl.bytes)
		sl.bytes = b
		s.Aux.objects[key] = sl
	}
}
