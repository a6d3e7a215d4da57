// Package lockapi is a distributed-lock client over a small Backend
// interface, so the same code locks in process (package lockapi/inproc),
// over Redis (lockapi/goredis), over several Redis masters
// (lockapi/redlock) and with the legacy timestamp protocol
// (lockapi/legacy). Beside the mutex it offers semaphores, read-write
// locks, multi-key locks and reentrant locks, and it counts and reports
// what happens to every lock (Stats, Options.OnEvent).
//
// # Model
//
// A lock is a key holding a value unique to one acquisition, with a TTL. The
// Client acquires it with the Backend's SET NX PX equivalent (Acquire),
// releases it with compare-and-delete (Release), extends it with
// compare-and-pexpire (Refresh) and reads its remaining time with a
// compare-and-PTTL (PTTL). Because every operation after Acquire compares
// the stored value with this acquisition's value, a Lock that expired and was
// taken by someone else can never delete or extend the new holder's lock: its
// Release and Refresh report ErrNotHeld instead.
//
// # Input contract
//
// Every backend accepts and refuses the same input, and the conformance
// suite (lockapi/locktest) checks it over each:
//
//   - A TTL must be in [MinTTL, MaxTTL]: one millisecond to ten years.
//     Backends may round a sub-millisecond part up to a whole millisecond
//     (Redis's PX does), never down: a lock is never held for less than
//     asked. (Redlock also needs the TTL above its clock-drift allowance,
//     about 2ms by default, or the lock could never be valid; it refuses
//     shorter ones with an error matching ErrInvalidTTL.)
//   - A key is any non-empty string, including ones with '{' or '}' (the
//     Redis backend keeps its fencing counter in the key's Cluster hash slot
//     whatever the key), except keys beginning with ReservedPrefix ("nxkv:"),
//     which nxkv keeps for itself on every backend.
//   - Obtain's options must be consistent (ObtainOptions, AutoRefresh).
//   - A semaphore's or read-write lock's name follows the rules of keys; a
//     semaphore's limit is in [1, MaxLimit]; ObtainAll takes 1 to MaxKeys
//     distinct keys (on a Redis Cluster, of one hash slot); Reentrant
//     applies to Client.Obtain only.
//
// Input outside the contract is refused with ErrInvalidTTL, ErrInvalidKey or
// ErrInvalidOption before any backend call, so nothing is touched. So is a
// primitive the backend cannot hold (Redlock's semaphores, say): the error
// then matches errors.ErrUnsupported.
//
// # Error contract
//
// Errors are *Error values whose message says each thing once ("lockapi:
// obtain "job": lock not obtained: context deadline exceeded") and which
// match, with errors.Is, the sentinels that apply:
//
//   - errors.Is(err, ErrNotObtained) means exactly one thing: another holder
//     had the lock, and the retry strategy or ctx ended the wait (then err
//     matches ctx.Err() too). A ctx that ended before the first attempt is
//     not ErrNotObtained: it only matches ctx.Err().
//   - A backend failure (connection refused, timeout, script error) is a
//     different error that wraps the backend's own, so errors.Is and
//     errors.As reach it. It never matches ErrNotObtained, ErrNotHeld or
//     ErrLost, and it never marks a Lock lost: porting the idiom "if
//     errors.Is(err, ErrNotObtained) { busy }" never turns an outage into
//     "busy".
//   - ErrNotHeld: Release, Refresh or TTL found the lock no longer held by
//     this acquisition (expired, released, taken over); once a Lock is known
//     lost, its errors also match ErrLost.
//   - ErrInvalidTTL, ErrInvalidKey, ErrInvalidOption: the input contract.
//
// # Tokens and stored value
//
// Each acquisition has a token. By default the Client generates it: 16
// characters of a random per-Client prefix (read once from crypto/rand in
// New) followed by a 16-digit hexadecimal counter, 32 bytes in all, so no
// random number is drawn per Obtain. ObtainOptions.Token supplies a caller
// token instead. The value stored at the key is the token followed directly
// by the optional metadata (ObtainOptions.Metadata): value = token +
// metadata. A reader that knows the token length (32 for generated tokens)
// can split the two.
//
// # Fencing
//
// Backends that can, return a fencing token with each acquisition: an
// integer strictly increasing per key across releases, expiries and
// re-creations (Lock.Fence). A protected resource that remembers the highest
// fence it has seen and rejects lower ones is safe even against a holder
// that was paused past its TTL. Backends that cannot (Redlock, the legacy
// protocol) report none.
//
// # Waiting
//
// Obtain tries once and, on failure, consults the Obtain's RetryStrategy
// (ObtainOptions.Retry; NoRetry by default). Every Obtain gets fresh
// strategy state (RetryStrategy.Start), so one strategy value may be shared
// by any number of concurrent calls.
//
// Without a Watcher backend, Obtain sleeps each delay the strategy returns
// and tries again, until the strategy stops (ErrNotObtained) or ctx is done.
//
// With a Watcher backend (the in-process engine), Obtain does not poll.
// After a failed first attempt it arms a watch on the key and tries again,
// and it re-arms the watch before every later attempt, so a release or
// expiry between an attempt and the wait cannot be missed; it retries the
// moment the key changes. The strategy then only bounds the total wait: its
// delays become consecutive waiting windows. A change of the key inside a
// window causes an immediate retry that does not consume the strategy; at
// the end of a window Obtain tries once more (a safety net for watchers that
// may drop events) and asks the strategy for the next window; when the
// strategy stops, Obtain returns ErrNotObtained. So
// LimitRetry(LinearBackoff(10ms), 5) waits at most about 50 ms in either
// mode, and NoRetry never waits.
//
// # Fairness
//
// Options.FIFO makes a Client serve its own waiters for a key in arrival
// order: Obtain calls join a per-key queue and only the head of the queue
// attempts the key. Other Clients and processes do not see that queue and
// can still acquire the key ahead of the queue (barging). The owner of a
// reentrant lock re-enters it without queuing. A semaphore's
// waiters share one queue, so do a read-write lock's readers and writers,
// and so do multi-key Obtain calls naming the same keys in the same order.
//
// # Loss
//
// Lock.Lost returns a channel closed when the Client learns the lock is
// gone: on a Watcher backend at once when the key is expired, overwritten or
// deleted (the first call to Lost checks ownership and starts a monitor that
// re-checks it after each change the backend reports); on other backends
// when a Refresh, TTL or Release call finds the lock not held, or when the
// watchdog's lease ends. A successful Release is never a loss, even with
// several Release calls racing on one Lock: it stops the monitoring and
// Lost stays open. Lock.Err reports why the lock was lost. Lock.Context
// gives a context canceled on loss or Release, for work that must stop when
// the lock is gone.
//
// # Semaphores, read-write locks, multi-key and reentrant locks
//
// Each is a kind of lease (Lock.Kind) with the mutex's guarantees: every
// lease has its own TTL and token, Release, Refresh and TTL compare that
// token at the backend, the watchdog, Lost and Context work as for a mutex,
// and waiting follows the retry strategy, without polling on a Watcher
// backend. The backend implements one small interface per primitive
// (SemaphoreBackend, RWBackend, MultiBackend, ReentrantBackend); the
// in-process and Redis backends implement all four, with the same key
// layout, so one engine served over the Redis protocol holds the same
// leases whichever backend took them (a mutex's and a multi-key lock's
// fencing tokens come from the engine's counters in process and from
// counter keys over Redis, so they are ordered within one backend).
//
//   - Client.Semaphore(name, N): up to N holders. Each lease takes the
//     lowest of N slot keys found free; waiters retry when any slot below
//     their limit frees. The limit is each Obtain's own: holders that change N never
//     lose a lease, and the number of holders never exceeds the largest
//     limit among the current holders' (see Semaphore). Fences increase
//     across all the semaphore's leases.
//   - Client.RWMutex(name): many readers or one writer, writers preferred:
//     a writer that waits keeps new readers out until it has had its turn,
//     and there is no upgrade or downgrade (see RWMutex). Fences increase
//     across all the lock's leases.
//   - Client.ObtainAll(keys): several single-lock keys taken in one atomic
//     step, all or none, so no partial hold survives a failure or a crash
//     and overlapping sets taken in any order cannot deadlock; released,
//     refreshed and lost together, with a fence per key (Lock.Fences).
//   - ObtainOptions.Reentrant: the owner, identified by a token it keeps,
//     obtains the key again while holding it; each hold is a Lock and is
//     released on its own (Lock.Holds counts them), the key being freed
//     with the last. A hold's Refresh never shortens the lock, since the
//     other holds count on its TTL. Each hold is named at the backend by an
//     ID unique to it, so a hold's Release removes that hold and no other:
//     a Release retried after a lost reply, or the Release of a hold whose
//     lease expired before the owner took the key again, leaves the owner's
//     other holds alone, and a re-entry whose reply was lost is undone.
//
// Redlock supports none of them (a quorum of independent counts cannot
// bound the holders of a semaphore; see lockapi/redlock). lockapi/locktest
// checks each primitive on every backend that has it.
//
// # Observability
//
// Client.Stats returns the Client's counts: leases acquired, released,
// expired while held, lost, refreshes failed, Obtain calls that waited or
// gave up, and the distributions of wait and hold times, in power-of-two
// buckets (Histogram), with no metrics library; the expvar example exports
// them. Timing a lease costs two clock reads, so hold times are sampled,
// one lease in Options.HoldTimeEvery (16 by default). Options.OnEvent receives every acquisition,
// release, loss and failed refresh as an Event with its key, token, fence
// and timings; LogEvents adapts it to log/slog. The in-process backend
// shows a lock's holders, their TTLs and the Obtain calls waiting for it
// (inproc.Backend's Inspect methods).
//
// # Watchdog and lease
//
// ObtainOptions.AutoRefresh starts a goroutine that refreshes the lock
// periodically (every TTL/3 by default), up to a maximum number of
// extensions, and stops on Release and on loss. It never outlives the
// lease the backend granted: the Lock tracks that lease as the TTL of the
// last granting call (the Acquire, a watchdog refresh or a manual Refresh),
// counted from when the call was sent, which is never later than the
// backend's own; a shorter TTL shortens it, and calls that overlap or fail
// are counted pessimistically (a failed call may still have been applied).
// Every backend call the watchdog makes is bounded by the remaining lease,
// and when the lease ends first (refreshes keep failing, hang, or the
// extensions ran out) Lost closes at that moment.
//
// # Time
//
// All waiting (retry delays, waiting windows, watchdog timers, lease ends)
// uses the Client's clock (package clock: only Now and After are used, and
// never while the Client holds a lock of its own). Options.Clock sets it;
// when it is nil and the backend has a clock of its own (it implements
// Clocker, as the in-process backend does with its engine's clock), the
// Client uses that one, so a clock injected into the engine is given once.
// Otherwise the Client uses the real clock.
//
// To test code that uses locks in fake time without injecting anything,
// run it in a testing/synctest bubble: with the default clock the engine's
// expiry, the Client's waits, the watchdog and lease ends all follow the
// bubble's virtual time, and synctest.Test fails if a goroutine is left
// behind. For example (see TestSynctestZeroInjection):
//
//	synctest.Test(t, func(t *testing.T) {
//		e := engine.New(engine.Options{})
//		defer e.Close()
//		c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
//		l, _ := c.Obtain(ctx, "job", time.Second, &lockapi.ObtainOptions{
//			AutoRefresh: &lockapi.AutoRefresh{MaxExtensions: 2}})
//		<-l.Lost() // 1.667s of fake time: refreshed at 1s/3 and 2s/3, then a 1s lease
//	})
//
// # Goroutines
//
// Obtain runs in the caller's goroutine. A Lock starts at most one
// goroutine, and only when needed: for the watchdog, or for loss detection
// once Lost (or Context) is called on a Watcher backend; a watchdog call in
// flight runs on a second, short-lived one so that Lost can close at the
// lease's end while it is still running. Watching several keys at once (a
// waiter for a semaphore's slots, the loss monitor of a multi-key lock)
// adds one goroutine for as long as the watch lasts. They exit on Release or loss; on
// the in-process backend an unreleased lock is lost when it expires, which
// needs the engine running: release locks before closing their engine.
package lockapi
