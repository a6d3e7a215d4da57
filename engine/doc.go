// Package engine is an in-process key-value engine with Redis string and TTL
// semantics, built for locks: SET NX PX, compare-and-delete and
// compare-and-pexpire are single calls that cost tens of nanoseconds.
//
// # Model
//
// Keys are spread over a power-of-two number of shards by one seeded hash
// per operation (the Go runtime's map hash with a random seed per engine, so
// no one can pick keys that collide), which also places the key in its shard's table (package
// shard): an open-addressing index of 8-slot groups with a 7-bit tag per
// slot, pointing at entries (key, value, deadline) kept in one array per shard.
// The key and value strings are the caller's own, never copied.
//
// Each shard has one writer lock, a sequence word that is odd while a
// writer holds it. Writes lock the shard: every write is one critical
// section on one shard, which reads the clock if it needs the time, looks
// the key up, decides, writes and unlocks. Reads take no lock and write
// nothing shared: Get, Exists, PTTL, and the failing outcomes of SetNX,
// SetNXPX and CompareAndDelete (the key is held, or holds another value)
// read the sequence word, the entry, and the sequence word again, and retry
// or lock if a writer intervened. A read is thus a consistent snapshot of
// one instant, so every single-key operation is linearizable; cores reading
// the same keys share cache lines instead of passing a lock's line back and
// forth, and operations on keys in different shards run in parallel. That
// is on x86; on arm64 and other weakly ordered processors reads take the
// shard's lock too (see package shard's LockFreeReads), with the same
// results. (With a memory bound and an LRU or LFU policy, a read also
// stamps the key it reads; see "Memory bound".)
//
// Update runs a function over several keys atomically: it locks their
// shards in shard order (every shard when no keys are named) and gives the
// function a Tx with the engine's commands and one frozen time, as Redis
// runs MULTI/EXEC and scripts. A multi-key Del and Flush are such sections.
// Len, Range and Scan visit the shards one at a time and are not atomic
// snapshots.
//
// # Costs
//
// Per key: a 40-byte entry, the index's 5 bytes per slot at a load between
// 7/16 and 7/8 (6 to 11 bytes a key), and for a key with a deadline a
// 16-byte link in its shard's timer wheel; plus the caller's strings. With
// 1M keys of 10 bytes, 16-byte values and a TTL each, the live heap grows by
// about 101 bytes a key, strings included; a map[string]string behind a
// mutex takes about 116 without TTLs (BenchmarkMemory).
//
// Per operation: one hash; a lock-free read costs two atomic loads of the
// shard's sequence word, a probe of one group (eight tags compared in a few
// word operations) and a copy of one entry; a write adds one compare-and-
// swap for the lock (on x86 the unlock is a plain store). Deadlines cost O(1) wheel link
// updates, and a clock read where the time is needed. Inserts reuse freed
// entries, so a lock's acquire/release cycle allocates nothing. A shard
// doubles its index when it is 7/8 full, and rebuilds index and entries at
// the right size when it drains to a quarter (and to at most 4,096 live
// entries, so that rebuild is short), which returns memory after a mass
// delete or expiry. Doubling rehashes the shard's index under its lock, in
// time proportional to the keys in the shard: more shards (Options.Shards)
// shorten that pause for very large key sets.
//
// Writes on several cores are where a sharded engine pays: when the cores'
// keys share shards, each write finds the shard's lock word, index group
// and entry last written by another core and waits for those cache lines.
// So a writer that finds its shard held spins only briefly and then sleeps
// until the holder unlocks (see package shard): the winner keeps writing
// with its lines local, as the holder of one mutex-guarded map does. On two
// cores overwriting 1,024 hot keys each, the engine then takes 25 ns per
// overwrite in all against 18 ns on one core, where it took 46 ns when
// both cores kept spinning; two goroutines' lock cycles take 146 ns each in
// all against 137 ns on one, where they took 311 ns (medians of 6 runs,
// BenchmarkParallelSet and BenchmarkParallelLockCycle). With each core's
// keys in shards of their own, the engine writes twice as fast on two cores
// as on one (BenchmarkParallelSetOwnShards). Reads and failed lock attempts
// do not pay this: they write nothing.
//
// # Semantics
//
// The rules are Redis's, with Go
// types: durations instead of milliseconds (nanosecond precision), (value,
// ok) instead of nil replies, sentinel errors instead of error replies. A key
// with deadline D is alive while now <= D and gone once now > D: PTTL is 0
// at now == D. An expired key is absent for every operation, reads and writes
// alike, whether or not it has been reclaimed yet. Empty keys and values are
// valid. Invalid arguments return ErrInvalidTTL or ErrSyntax and change
// nothing. The engine keeps the key and value strings a write stores (never
// copying them); calls that only read or delete (Get, Exists, PTTL, Del,
// GetDel, CompareAndDelete and the like) keep nothing they are given, and
// Watch keeps its key only until the watch ends.
//
// # Clock
//
// Each operation reads the clock at most once and only when it needs the
// time: Get, SetNX, GetSet, CompareAndDelete and the like need it only for
// keys that have a deadline, Set only when it overwrites a key with a
// deadline while a listener is registered (to tell it whether the key had
// expired), and the operations that compute a deadline (SetPX, SetNXPX,
// PExpire...) always do. (A lock-free read
// overtaken by a writer after it read the time reads it again; that is the
// only exception.)
//
// The time an operation uses lies inside its critical section: read under
// the lock, or, for a lock-free read, between its two loads of the shard's
// sequence word. So along any one key's history the times used never
// decrease, whatever the interleaving.
//
// With Options.Clock nil the engine uses a fast real clock: it records
// time.Now() at New and afterwards adds the monotonic time elapsed since,
// which costs one monotonic clock read instead of time.Now's wall and
// monotonic reads, and is immune to wall-clock steps after New. Deadlines
// are Unix nanoseconds on that time line. It works unchanged inside a
// testing/synctest bubble, where time is virtual: code using the engine
// with no clock injected can be tested in fake time with no change (see
// the example in synctest_test.go, run by go test). Contended writers wait
// on nothing tied to a bubble, so goroutines inside and outside one may
// share an Engine, and a writer waiting for a holder outside the bubble
// does not let the bubble's clock jump.
//
// An injected clock (package clock: anything with Now and After, such as a
// github.com/benbjohnson/clock Mock) is never called while a shard lock is
// held, so a fake clock that fires its timers under its own mutex can never
// deadlock with the engine: an operation that may need the time reads it
// before locking, and where it uses the time takes the later of that
// reading and the latest time any operation used. The reaper sleeps on
// one-shot timers of the same clock, so advancing a Mock fires them.
//
// If the clock steps backwards (a Mock Set to an earlier time, an NTP step
// of an injected wall clock), the engine's time stands still at the latest
// time used until the clock passes it again: a key seen expired stays
// expired, a lock's lease never grows back, and a key written meanwhile
// expires its TTL after the held time. Now reports the engine's time.
//
// # Fencing
//
// SetNXPXFenced is SET NX PX that also returns a fencing token: a counter
// of the key's shard, incremented in the acquisition's critical section. A
// key's tokens strictly increase for the engine's lifetime, across
// releases, expiries, deletes, Flush and re-creations; the counters cost no
// key and no memory per key, and any number of lock clients over one engine
// share them.
//
// Some fences must live in keys: a semaphore's or a read-write lock's
// counter, and every counter a client keeps over the Redis protocol
// (package resp), are INCRs of a key, so that a lease's token is the same
// whichever way it was taken. Such counters lie under ReservedPrefix, and
// IncrBy of a reserved key never gives a value twice: a reserved key that
// is absent (never written, or deleted by Del, Flush or FLUSHALL, or
// expired) counts not as 0 but as the largest value IncrBy ever gave a
// reserved key of its shard (a second per-shard counter). So a reserved
// counter deleted and incremented again resumes above every value it ever
// had: its values strictly increase for the engine's lifetime, though not
// always by one. Writing a reserved key by other means (Set, or an IncrBy
// with n <= 0) is the caller's own choice of value, which the engine does
// not check; a reserved key set near math.MaxInt64 and incremented makes
// the IncrBy of absent reserved keys of its shard fail with ErrOverflow.
//
// # Reserved keys
//
// Keys under ReservedPrefix ("nxkv:") are the lock clients' bookkeeping:
// fencing counters, semaphore slots, read-write locks' readers and writers,
// reentrant holds (package lockapi/inproc, and clients over the Redis
// protocol). The calls that cover the whole keyspace leave them alone, so
// that an engine used both as a cache and for locks can count, list and
// clear its cache without touching lock state: Len does not count them,
// Range and Scan do not visit them, and Flush does not delete them. Their
// ...All forms (LenAll, RangeAll, ScanAll, FlushAll, and the same on Tx)
// include them, for callers that mean every key; the Redis-protocol server
// uses those, so DBSIZE, KEYS, SCAN and FLUSHALL see every key as Redis
// would. A call that names a reserved key (Get, Del, IncrBy...) reaches it
// like any other. The keys of plain locks are the caller's own (a lock on
// "job" is the key "job"): they are counted, listed and flushed with the
// caller's keys.
//
// # Expiry and reclamation
//
// Expiry is lazy and active. Lazy: every access checks the key's deadline,
// and one that finds the key expired locks and deletes it. Active: each
// shard has a hierarchical timer wheel (package ttl), guarded by the shard
// lock, holding every key with a deadline by its entry's handle; one reaper
// goroutine per engine sleeps on a timer of the engine's clock until the
// earliest deadline of any wheel (an idle engine burns no CPU), then
// advances the wheels and deletes the keys that fired, at most a bounded
// batch per lock hold so that no shard lock is held for long. Keys are
// reclaimed within about two wheel ticks of their deadline, with work
// proportional to the number of keys expiring, not to the number held.
// Reap does the same synchronously, for tests with a mock clock.
//
// # Change feed
//
// Every change of a key passes through one place, inside the critical
// section that makes it, and is reported there as an Event: the key and a
// Kind named as Redis names its keyspace events. An operation reports what
// Redis's command of the same meaning publishes, in the same order: Set on
// an absent key reports "new" then "set"; SetPX "set" then "expire"; Del
// "del" per key that existed; a key found expired by any operation, the
// reaper or Reap is reported "expired" when it is removed; Flush reports
// one "flush" event, not one per key. Reads and failed conditional writes
// report nothing. Writes through the Go API and through a server over the
// same engine thus report the same events. An event carries no value,
// deadline or time, so it costs no copy and leaks no data.
//
// Listen registers a listener: a function called synchronously with each
// event, under the key's shard lock, so a key's events arrive in the
// linearization order of its operations and before each operation returns.
// It must be quick, must not block and must not call the engine. With no
// listener registered the feed costs each change one nil check; with
// listeners, one call per change each. Watch is a consumer of the same
// feed.
//
// Inside Update, a section may name its changes itself: Quiet withholds the
// events of its Tx calls from listeners and Notify reports events of any
// Kind, in the section's order. A server builds APPEND from Get and Set
// and reports "append", RENAME from Get, Del and Set and reports
// "rename_from" then "rename_to"; a value type kept outside the engine's
// strings reports "hset" or "lpush" the same way. A section may also tag
// its events (SetTag): a server tags the section running a client's
// command with the client, so that its listener can tell the client's own
// changes from others' (Redis's client-side caching skips or defers the
// invalidations of a client's own writes).
//
// # Typed values
//
// A key may hold an Object instead of a string: a value of a type the
// engine knows nothing of, such as package resp's hashes, lists, sets and
// sorted sets. Such a key is stored as every key is, in an entry with its
// deadline, so expiry (lazy and active), Watch, the change feed, Del,
// Flush, Len, Range and Scan treat every type alike. The entry's value is
// then a marker, a private string no caller can hold (it is told from every
// caller's string by its length and then its data pointer), and the Object
// sits in a map of its shard keyed by the entry's key. Costs: no byte per
// string key (the entry stays 40 bytes; a shard without objects holds a nil
// map), one length compare on the reads and deletes that could meet a
// marker; per object, one map entry (about 48 bytes: the key, the Object
// and the bytes it was charged) besides the entry and whatever the Object
// holds. A memory bound (see "Memory bound") counts such a key as a key
// whose value is the marker, plus the Object's own estimate of its bytes if
// it gives one (Sizer). Objects are reached only inside Update (Tx.Object,
// Tx.SetObject, Tx.Type), where the caller reads and changes them and names
// each change with Notify; anything that overwrites or removes the key
// drops its Object. The string operations never return the marker: on a key
// holding an Object, those that return an error return ErrWrongType
// (IncrBy, SetWith with IfEqual or IfNotEqual), and the others behave as
// documented on each (Get finds no string, Set replaces the Object, the
// compare-and-... operations never match it).
//
// # Watch
//
// Watch gives a channel closed at the next change of a key: any write
// (including a TTL change), a delete, or an expiry (active or lazy). A lock
// client uses it to wake waiters the instant a lock is released or expires.
// It is one consumer of the change feed: a change wakes the key's watchers
// whether or not a quiet section withholds its event from listeners.
//
// # Memory bound
//
// Options.MaxMemory bounds the bytes the engine holds, as Redis's
// maxmemory does, and Options.Policy says what happens at the bound (the
// eight policies of Redis's maxmemory-policy). The engine counts, per key,
// its key and value as their lengths rounded up to 8 bytes, plus 64 bytes
// for the key's entry (40), its slot in the index, its eviction metadata
// (8) and the arrays' slack, plus 16 bytes for a deadline's link in the
// timer wheel: about what the key costs the Go heap, when the strings are
// the engine's alone (it keeps the caller's strings, never copying them,
// so a value that shares a larger buffer holds all of it). A key holding
// an Object counts as one whose value is the 24-byte marker, plus, if the
// Object is a Sizer, its Size: read when it is stored (SetObject) and
// again at each Notify of its key, which is how a server reports each
// change of a value it keeps, and kept beside the object so that the same
// bytes are given back when the key is overwritten, deleted, expires or is
// evicted. Redis counts a hash's or a list's memory in used_memory, and so
// a bound that did not would let one growing value take the process past
// it; an estimate is charged rather than a measure because measuring a
// value of n elements costs O(n) on every write (package resp's types
// estimate from eight sampled elements, in O(1)). A change made without
// Notify is counted at the key's next Notify. Memory a shard
// needs whatever it holds (its first index and entries, about 3 KB) is not
// counted. MemoryStats reports the count, and that memory as Overhead.
//
// As Redis admits a command, the engine admits a write before it runs: a
// call that may add memory (Set, SetPX, SetNX, SetNXPX, SetNXPXFenced,
// SetWith, GetSet, IncrBy, CompareAndSwap, GetOrLoad's store), or an
// Update section as a whole, first checks the count; if it is over the
// bound, the write evicts keys by the policy until it is not, taking one
// shard's lock at a time, and if it cannot (NoEviction, or no key left
// that the policy may evict) the write fails with ErrOOM and changes
// nothing. So the engine never holds more than the bound by more than the
// last admitted write (with several writers at once, one write each; an
// Update section counts as one write). Reads and deletes are never
// refused. Nor are the deadline setters (PExpire, PExpireCond, PExpireAt,
// PExpireAtCond, CompareAndPExpire), as Redis runs EXPIRE whatever the
// memory, though setting a deadline adds its link (16 bytes): they evict
// first as a write does, so with an evicting policy the bound holds as
// above, and under NoEviction each may add its 16 bytes past the bound
// (Persist gives them back). Over 64 KiB a shard, each shard adds its changes to the
// budget's total only once they reach 1/256 of its share, and the engine
// evicts down to the bound less what the shards may be holding back (at
// most 1/256 of the bound), so a write costs no atomic operation.
//
// Eviction chooses among Options.Samples keys (DefaultSamples, 5) of a
// random shard, as Redis chooses among maxmemory-samples keys: the least
// recently used (LRU), the least frequently used (LFU: Redis's logarithmic
// counter, decaying by one for every 4,096 writes of the key's shard, where
// Redis decays it by the minute), the nearest deadline (volatile-ttl), or
// any (random). Recency is measured in the shard's own writes: a read
// stamps the key with the number of write sections its shard has run, the
// count a lock-free read already loads, so reads pay no clock; keys read
// between the same two writes of their shard tie. An expired key met while
// sampling is reclaimed first, with no eviction. Only a bounded engine
// makes reads write: the key's stamp (once per write of its shard, for a
// hot key), and under an LFU policy its counter; it stamps under every
// policy, so that a policy set later finds the keys' recency.
//
// Eviction never takes the lock bookkeeping (keys under ReservedPrefix)
// nor a held lock: a key written by SetNXPXFenced (how package
// lockapi/inproc takes every lock) is marked a lock until it is deleted,
// expires or is overwritten by another write (a refresh by
// CompareAndPExpire keeps the mark); Tx.Held reports the mark and Tx.Hold
// sets it, for a server that moves a lock from one engine to another. The volatile policies also pass over
// keys without a TTL. A sample counts only keys the policy may evict:
// from a random slot on, the shard's keys are looked at until Samples such
// keys are found (so a volatile policy compares Samples keys with a TTL,
// as Redis samples its expires dict, at a cost that grows as such keys get
// rarer; a shard with no deadline is passed over at once), and a write
// fails with ErrOOM only if no shard holds a key the policy may evict. An eviction is a change of
// the key: its watchers fire (Watch), as for a delete.
//
// The bound, with its count, policy and samples, is a Budget, which
// several engines may share (Options.Budget), as Redis's maxmemory bounds
// all of a server's databases together: their keys count against one
// bound, and a write to any of them that finds it over evicts from any of
// them, from a shard of an engine drawn in proportion to what each holds.
// An engine given Options.MaxMemory has a budget of its own. The bound,
// the policy and the samples may change at run time (SetMax, SetPolicy,
// SetSamples, as CONFIG SET does): a lower bound is kept from the next
// admitted write on. A server admits each command itself, as Redis's
// processCommand does: it calls Budget.Evict before the command, refuses
// it if that fails, and runs it in UpdateAdmitted sections, which are never
// refused; Budget.Charge counts the memory it holds besides the keys (each
// database's Overhead), so that, as in Redis, a bound below it is exceeded
// before any key is written.
//
// Without a bound (no budget) the engine keeps no count and no metadata,
// and its operations pay one nil check for all of this; a budget with no
// bound yet (NewBudget with 0) keeps the count, so that a bound set later
// applies.
//
// # Get-or-load
//
// GetOrLoad reads through to a slower source: on a miss it calls a load
// function once, however many goroutines miss the key at once (they wait
// for that one load), and stores the value with a TTL if the key is still
// absent then. Its doc says what a write, a delete or an expiry of the key
// during the load does; a load's error reaches every waiter and is not
// stored; each caller's ctx ends its own wait, and the load is cancelled
// only when every waiter has given up. It is the one engine call that
// waits, and the one that starts a goroutine (the load's, which ends when
// the load function returns).
//
// # Lifetime
//
// New starts the reaper goroutine; Close stops it. An engine that is not
// closed leaks that goroutine. After Close the engine still serves every
// call, with lazy expiry only: expired keys stay in memory (and in Len)
// until accessed or reclaimed by Reap.
package engine
