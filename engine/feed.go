package engine

import "slices"

// This file holds the change feed: every change of a key passes through
// eventLocked, which wakes the key's watchers (watch.go) and calls the
// engine's listeners, inside the critical section that made the change.

// Kind names a change of a key as Redis names its keyspace event ("set",
// "del", "expired", ...), so that a server can publish it as
// __keyevent@<db>__:<kind> unchanged. The engine emits the kinds below; a
// section that names its own changes (Tx.Notify) may use any name, such as
// a typed value's "hset" or "lpush".
type Kind string

// The kinds of the engine's own operations, and those of Redis's string and
// keyspace commands that a server composes from them and names with
// Tx.Notify. Each is Redis's event name.
const (
	// KindNew is a key's creation, reported before the event of the write
	// that created it (Redis's "new", which dbAdd emits): Set on an absent
	// key reports KindNew then KindSet.
	KindNew Kind = "new"
	// KindSet is a string write: Set, SetPX, SetNX, SetNXPX, SetNXPXFenced,
	// SetWith, GetSet and CompareAndSwap when they write.
	KindSet Kind = "set"
	// KindExpire is a new deadline: PExpire and its variants,
	// CompareAndPExpire, and the writes that set one (after KindSet).
	KindExpire Kind = "expire"
	// KindPersist is a deadline removed by Persist.
	KindPersist Kind = "persist"
	// KindDel is a delete by Del, GetDel or CompareAndDelete, or by an
	// expire command given a deadline at or before now.
	KindDel Kind = "del"
	// KindExpired is the reclamation of a key whose deadline passed: by
	// the reaper, Reap, or the first operation to find it expired. It is
	// reported when the key is removed, which may be after its deadline.
	KindExpired Kind = "expired"
	// KindEvicted is a key evicted to keep a bounded engine under
	// Options.MaxMemory (see "Memory bound" in the package doc), reported
	// by the write whose admission evicted it, before that write's own
	// events.
	KindEvicted Kind = "evicted"
	// KindIncrBy is an IncrBy (Redis's INCR, DECR, INCRBY and DECRBY).
	KindIncrBy Kind = "incrby"
	// KindFlush is Flush: every key of the engine deleted at once,
	// reported as one event whose Key is empty, not one event per key.
	// It is not a Redis keyspace event (FLUSHDB publishes none).
	KindFlush Kind = "flush"

	// KindIncrByFloat, KindAppend, KindSetRange and KindSetBit name the
	// string commands a server builds from Get and Set in a section.
	KindIncrByFloat Kind = "incrbyfloat"
	KindAppend      Kind = "append"
	KindSetRange    Kind = "setrange"
	KindSetBit      Kind = "setbit"
	// KindRenameFrom and KindRenameTo are RENAME's two events, on the
	// source key then on the destination; KindCopyTo is COPY's, on the
	// destination; KindMoveFrom and KindMoveTo are MOVE's, in the source
	// database then the destination.
	KindRenameFrom Kind = "rename_from"
	KindRenameTo   Kind = "rename_to"
	KindCopyTo     Kind = "copy_to"
	KindMoveFrom   Kind = "move_from"
	KindMoveTo     Kind = "move_to"
)

// Event is one change of one key, as a listener receives it. It says
// nothing of values or deadlines: a listener that needs them reads the key
// afterwards, outside the listener.
type Event struct {
	// Key is the key that changed: the engine's own string, not a copy,
	// so keeping it keeps its memory. It is empty for KindFlush; the empty
	// string is also a valid key, so tell a flush by its Kind.
	Key string
	// Kind names the change.
	Kind Kind
	// Tag is the tag of the section that made the change (Tx.SetTag), so
	// that a listener can tell who made it; nil for changes made outside a
	// section, and for the reaper's and Reap's expiries. A key a section
	// finds expired and reclaims is reported with the section's tag.
	Tag any
}

// listener is one Listen registration; its identity is the registration.
type listener struct{ fn func(Event) }

// feed is the immutable list of listeners a shard delivers to; a new list
// replaces it under every shard's lock at each Listen and stop.
type feed struct{ ls []*listener }

// observers is who observes a shard's changes, guarded by the shard lock.
// A shard holds one only while someone does (watchers or feed non-nil), so
// that an unobserved change costs one nil check (see eventLocked).
type observers struct {
	// watchers holds the pending watchers of each watched key (watch.go);
	// nil when nothing is watched.
	watchers map[string][]*watcher
	// feed is the engine's listeners; nil when no one listens.
	feed *feed
}

// observe returns s's observers, creating them.
func observe(s *shardT) *observers {
	if s.Aux.obs == nil {
		s.Aux.obs = &observers{}
	}
	return s.Aux.obs
}

// releaseLocked drops s's observers once no one observes.
func releaseLocked(s *shardT) {
	if o := s.Aux.obs; o != nil && o.watchers == nil && o.feed == nil {
		s.Aux.obs = nil
	}
}

// listened reports whether o delivers to listeners (o may be nil).
func (o *observers) listened() bool { return o != nil && o.feed != nil }

// deliver calls every listener with ev, in order of registration.
func (f *feed) deliver(ev Event) {
	for _, l := range f.ls {
		l.fn(ev)
	}
}

// Listen registers fn to receive every change of every key, from the
// moment Listen returns until stop returns: each write, delete, expiry
// (active or lazy) and flush, named as Redis names its keyspace events (see
// Kind), including the changes made by Tx methods inside Update. Reads and
// failed conditional writes change nothing and report nothing.
//
// fn is called synchronously, on the goroutine that made the change, inside
// the critical section that made it (the shard's lock is held). Hence:
//
//   - A key's events reach fn in the order its changes took effect, which
//     is the linearization order of the operations on it, and an
//     operation's events are delivered before it returns: a listener never
//     sees a key's events out of order or late.
//   - Events of one shard are delivered one at a time, in the shard's
//     order. Events of different shards may be delivered concurrently from
//     different goroutines, so fn must be safe for concurrent use; they are
//     ordered only when their operations are (one returned before the
//     other began, or both ran in one Update section, which delivers its
//     events in program order).
//   - fn must be quick and must not block: every operation on the shard
//     waits for it. It must not call the Engine or a Tx (the shard lock is
//     held: that deadlocks), nor stop, and must not panic. A listener
//     that has slow work to do copies the event into its own queue.
//
// Cost: while no listener is registered (and no Watch is pending on the
// shard), a change costs one nil check, which watchers needed before the
// feed existed; with listeners, each change costs one call of each fn,
// O(1) per change per listener, and allocates nothing.
// Listen and stop hold every shard's lock at once (as Flush does), so that
// the set of listeners changes atomically for every operation.
//
// stop unregisters fn; after it returns fn is never called again. It is
// idempotent. Listen and stop are safe for concurrent use.
func (e *Engine) Listen(fn func(Event)) (stop func()) {
	l := &listener{fn: fn}
	e.listenMu.Lock()
	e.listeners = append(slices.Clip(e.listeners), l)
	e.installFeed()
	e.listenMu.Unlock()
	return func() {
		e.listenMu.Lock()
		defer e.listenMu.Unlock()
		i := slices.Index(e.listeners, l)
		if i < 0 {
			return
		}
		e.listeners = slices.Delete(slices.Clone(e.listeners), i, i+1)
		e.installFeed()
	}
}

// installFeed gives every shard the current list of listeners, with all
// shards locked at once so that no operation sees two lists. listenMu must
// be held.
func (e *Engine) installFeed() {
	var f *feed
	if len(e.listeners) != 0 {
		f = &feed{ls: e.listeners}
	}
	e.listening.Store(f != nil)
	for _, i := range e.lockShards(nil, nil) {
		s := e.m.ShardAt(i)
		if f != nil {
			observe(s).feed = f
		} else if s.Aux.obs != nil {
			s.Aux.obs.feed = nil
			releaseLocked(s)
		}
		s.Unlock()
	}
}

// eventLocked is the one place every change of a key passes, called with
// s locked right after the change made by operation c (nil: an operation
// outside a section): it wakes key's watchers and calls the listeners with
// (key, kind), unless c is a quiet section's and kind is not KindExpired.
// It is inlined, and costs one load and branch while no one observes s.
func (e *Engine) eventLocked(s *shardT, key string, kind Kind, c *opState) {
	if s.Aux.obs != nil {
		e.observedLocked(s, key, kind, c)
	}
}

// observedLocked is eventLocked's work when someone watches or listens;
// kept out of line so that eventLocked stays small enough to inline.
//
//go:noinline
func (e *Engine) observedLocked(s *shardT, key string, kind Kind, c *opState) {
	o := s.Aux.obs // notifyLocked may release it from s
	if o.watchers != nil {
		e.notifyLocked(s, key)
	}
	if o.feed != nil && (c == nil || !c.quiet || kind == KindExpired) {
		ev := Event{Key: key, Kind: kind}
		if c != nil {
			ev.Tag = c.tag
		}
		o.feed.deliver(ev)
	}
}

// Notify reports a change of key named kind, made by this section, to the
// key's watchers and the engine's listeners, in order with the section's
// other events. A section uses it with Quiet to name its changes as a
// server's command does (APPEND, built from Get and Set, is "append", not
// "set"; RENAME is "rename_from" then "rename_to"), or to report the
// change of a value the engine does not store. Every change a quiet
// section makes must be named, or listeners miss it. key must be one the
// section holds (Notify panics otherwise, as every Tx method does); it
// need not exist. Under a memory bound, Notify of a key holding a Sizer
// charges the change of its Size (see "Memory bound").
func (tx *Tx) Notify(key string, kind Kind) {
	s, _ := tx.shard(key)
	if tx.e.mem != nil && s.Aux.objects != nil {
		tx.e.chargeObjectLocked(s, key)
	}
	c := opState{tag: tx.c.tag} // never quiet
	tx.e.eventLocked(s, key, kind, &c)
}

// SetTag sets the tag that the section's events carry from now on
// (Event.Tag), until the section ends or SetTag is called again: a server
// tags the section running a client's command with the client, so that its
// listener can tell the client's own changes (Redis's current client) from
// everyone else's. Keys the section finds expired are reported with the
// tag too. It costs nothing while no one listens, and the tag is only
// copied into events.
func (tx *Tx) SetTag(tag any) {
	tx.check()
	tx.c.tag = tag
}

// Quiet sets whether the section's own calls report their events to
// listeners, and returns the previous setting: while quiet, Tx methods
// change keys without telling listeners, and the section names each
// change itself with Notify. KindExpired is reported regardless (a key
// found expired is reclaimed whoever finds it), and watchers are woken by
// every change regardless. A section starts not quiet; the setting ends
// with the section. The idiom:
//
//	defer tx.Quiet(tx.Quiet(true))
func (tx *Tx) Quiet(quiet bool) (was bool) {
	tx.check()
	was, tx.c.quiet = tx.c.quiet, quiet
	return was
}
