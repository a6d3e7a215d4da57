// Package legacy implements the timestamp lock from the Redis SETNX page, so
// that Go code can share locks with older applications that still use it.
//
// # Protocol
//
// The lock is a key whose value is the Unix time at which it expires,
// "now + timeout + 1", in whole seconds by default (Seconds) or
// milliseconds (Milliseconds). A client acquires it with
//
//	SETNX key <now + timeout + 1>
//
// On 0 it reads the key with GET. While the stored time has not passed, the
// lock is held and the client waits and retries. Once it has passed, the
// client writes a new time with
//
//	GETSET key <now + timeout + 1>
//
// and owns the lock only if the old value GETSET returned is itself still an
// expired time; otherwise another client won the race between GET and
// GETSET, and this client retries (its GETSET moved the winner's expiry a
// little, which the protocol accepts). Recovering with DEL then SETNX instead
// is wrong: two clients that both saw the expired value can both DEL and
// SETNX and both believe they hold the lock (the tests show it). The holder
// releases with DEL, but only after checking that its own timeout has not
// passed, since after that the key may belong to someone else.
//
// A stored time T is expired once the current time in the same unit,
// rounded down, is greater than T: at exactly T the lock is still held, as a
// Redis key with deadline T is. Because both the stored time and the reader's
// time are rounded down to the unit, the "+ 1" guarantees that nobody can
// take the lock until more than one unit after the holder's own deadline
// (acquisition time + Timeout, read on the holder's clock); that unit is the
// protocol's only slack.
//
// # Choices made here
//
//   - A GETSET that finds the key absent (the holder released between our
//     GET and GETSET) wrote our time into an empty key exactly as SETNX
//     would have, so it acquires the lock.
//   - Values are parsed leniently enough to read what other legacy clients
//     write: a decimal integer, optionally with a fractional part (as
//     Python's str(time.time() + timeout + 1) produces); the fraction is
//     ignored, which only makes the value expire later. Anything else, and
//     any number implausible for the configured unit (a seconds value at or
//     beyond 10^11, which is the year 5138, or a milliseconds value below
//     10^11, which is March 1973), is malformed: the lock is then treated as
//     held and never taken over, because taking over a value we cannot read
//     could break another protocol's (or a differently configured
//     application's) mutual exclusion; such attempts fail with an error
//     wrapping ErrMalformed, so the misconfiguration is visible. The
//     plausibility bound is what keeps a milliseconds client from reading a
//     seconds timestamp as a date in 1970 and stealing a live lock.
//   - Refresh extends a held lock with GETSET of a new time, the only write
//     the protocol has besides SETNX and DEL; legacy applications honour it
//     because they only ever compare the stored time. It is guarded like
//     Release.
//
// # Weaknesses inherent in the protocol
//
//   - Synchronized clocks. Expiry is judged by each client's own clock
//     against a time written by another; a client whose clock runs ahead by
//     more than the slack takes live locks. Nothing in the protocol detects
//     this. Keep clock differences well below one unit plus
//     Options.ReleaseMargin, and finish critical sections before the margin
//     begins (Lock.TTL tells how much time is left).
//   - Check-then-act windows. The holder checks its deadline and then
//     sends DEL (or GETSET for Refresh); if the DEL arrives after another
//     client took over, it deletes that client's lock. Likewise a client that
//     read the clock, was paused, and then sent GETSET writes a stale time,
//     which may let a third client in early. This implementation narrows the
//     first window with Options.ReleaseMargin (Release and Refresh refuse
//     to write, and report ErrNotHeld, once less than the margin remains)
//     and the second by reading the clock immediately before each write; it
//     cannot close either, because the protocol has no atomic
//     compare-and-delete. The package's tests demonstrate both the clock
//     and the pause weakness on a fake clock.
//   - No ownership token. The value is a bare timestamp, so a holder cannot
//     tell its own lock from another client's with the same time; Release
//     therefore relies on the deadline alone, never on the stored value, and
//     there is no fencing token to give a protected resource. GETSET losers
//     overwrite the holder's value, which is one more reason a value check
//     would be wrong.
//   - A crashed holder blocks everyone until its time passes; there is no
//     server-side TTL (a Redis TTL would not help legacy readers, who only
//     compare the stored time).
//
// For new code, prefer the token lock in package lockapi (SET NX PX with a
// compare-and-delete release), which needs no synchronized clocks for
// safety of release and gives fencing tokens.
//
// # API
//
// A Locker (New) obtains locks over a KV: Obtain blocks and retries,
// TryObtain makes one attempt, and a Lock is released or refreshed with its
// own deadline check. Engine adapts the in-process engine to KV;
// lockapi/goredis.LegacyKV adapts a go-redis client, so that locks are
// shared with legacy applications on the same Redis server.
//
// # lockapi.Backend
//
// Backend (NewBackend) also exposes the protocol as a lockapi.Backend, for
// code that wants lockapi.Client's retry strategies, watchdog and lost-lock
// signal. It fits only with caveats, because a Backend is specified as
// atomic server-side operations on an ownership token while this protocol
// stores a bare timestamp, acquires in up to three non-atomic steps and
// judges ownership on the client's clock: the token stays in the Backend's
// memory (only the instance that acquired a lock can release it), there are
// no fencing tokens, and with Seconds a lock frees up to two seconds after
// its TTL, which the lockapi conformance suite rejects; with Milliseconds it
// passes the suite. See Backend.
//
// Over an engine with a memory bound (engine.Options.MaxMemory), the lock
// keys are plain keys without a TTL: the volatile policies never evict
// them, but the allkeys policies may, which frees a held lock. Use
// NoEviction or a volatile policy on an engine that holds these locks.
package legacy
