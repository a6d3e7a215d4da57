// Package lockapi is a distributed-lock client over a small Backend
// interface, so the same code locks in process (package lockapi/inproc) and
// over Redis.
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
// # Tokens and stored value
//
// Each acquisition has a token. By default the Client generates it: 16
// characters of a random per-Client prefix (read once from crypto/rand in
// New) followed by a 16-digit hexadecimal counter, 32 bytes in all, so no
// random number is drawn per Obtain. WithToken supplies a caller token
// instead. The value stored at the key is the token followed directly by the
// optional metadata (WithMetadata): value = token + metadata. A reader that
// knows the token length (32 for generated tokens) can split the two.
//
// # Fencing
//
// Backends that can, return a fencing token with each acquisition: an
// integer strictly increasing per key across releases, expiries and
// re-creations (Lock.Fence). A protected resource that remembers the highest
// fence it has seen and rejects lower ones is safe even against a holder
// that was paused past its TTL. Backends that cannot (Redlock) report none.
//
// # Waiting
//
// Obtain tries once and, on failure, consults the Obtain's RetryStrategy
// (WithRetry; NoRetry by default). Every Obtain gets fresh strategy state
// (RetryStrategy.Start), so one strategy value may be shared by any number
// of concurrent calls.
//
// Without a Watcher backend, Obtain sleeps each delay the strategy returns
// and tries again, until the strategy stops (ErrNotObtained) or ctx is done.
//
// With a Watcher backend (the in-process engine), Obtain does not poll.
// After a failed first attempt it arms a watch on the key and tries again,
// and it re-arms the watch before every later attempt, so a release or
// expiry between an attempt and the wait cannot be missed; it retries the
// moment the key changes. The strategy then only bounds the total wait: its delays
// become consecutive waiting windows. A change of the key inside a window
// causes an immediate retry that does not consume the strategy; at the end
// of a window Obtain tries once more (a safety net for watchers that may drop
// events) and asks the strategy for the next window; when the strategy stops,
// Obtain returns ErrNotObtained. So LimitRetry(LinearBackoff(10ms), 5) waits
// at most about 50 ms in either mode, and NoRetry never waits.
//
// # Fairness
//
// WithFIFO makes a Client serve its own waiters for a key in arrival order:
// Obtain calls join a per-key queue and only the head of the queue attempts
// the key. Other Clients and processes do not see that queue and can still
// acquire the key ahead of the queue (barging).
//
// # Loss
//
// Lock.Lost returns a channel closed when the Client learns the lock is
// gone: on a Watcher backend at once when the key is expired, overwritten or
// deleted (the first call to Lost checks ownership and starts a monitor that
// re-checks it after each change the backend reports); on other backends when a Refresh, TTL or Release call finds the
// lock not held, or when the watchdog gives up. A successful Release is not a
// loss: it stops the monitoring and Lost stays open. Lock.Err reports why the
// lock was lost. Lock.Context gives a context canceled on loss or Release,
// for work that must stop when the lock is gone.
//
// # Watchdog
//
// WithAutoRefresh starts a goroutine that refreshes the lock periodically
// (every ttl/3 by default), up to a maximum number of extensions. It stops
// on Release and on loss, and it never outlives the lock: when refreshes fail
// with errors, or the extensions run out, it declares the lock lost at the
// end of the last validity period the Client knows of (measured from before
// the last successful Acquire or Refresh call was sent).
//
// # Time
//
// All waiting (retry delays, waiting windows, watchdog timers) uses the
// Client's clock, injectable with WithClock, so tests run on fake time.
//
// # Goroutines
//
// Obtain runs in the caller's goroutine. A Lock starts at most one
// goroutine, and only when needed: for the watchdog, or for loss detection
// once Lost (or Context) is called on a Watcher backend. It exits on Release
// or loss; on the in-process backend an unreleased lock is lost when it
// expires, which needs the engine running: release locks before closing
// their engine.
package lockapi
