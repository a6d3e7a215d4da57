package lua

// This file holds the watchdog that stops a script which runs too long or
// grows the heap too far. gopher-lua checks its context between
// instructions and offers no other hook, and it accounts no memory: one
// script doubling a string (s = s .. s) reaches gigabytes in a second and
// would take the process down. So a script that is still running a little
// after it started gets a watcher, which polls the clock and the heap and
// cancels the script's context past either limit. Short scripts, nearly
// all of them, pay for one timer reset and stop, as before.

import (
	"context"
	"runtime/metrics"
	"sync"
	"time"
)

const (
	// scriptMemory is how far a script's run may grow the process heap
	// (live and not yet collected objects) past its size when the watcher
	// started; one instruction may overshoot it by what it allocates.
	scriptMemory = 1 << 30
	// watchAfter is how long a script runs before it is watched.
	watchAfter = 10 * time.Millisecond
	// watchEvery is how often a watcher polls.
	watchEvery = time.Millisecond
)

// Why a watcher stopped a script.
const (
	notKilled = iota
	killedTime
	killedMemory
	killedByUser // its Watcher asked (SCRIPT KILL)
)

// watchdog watches one interpreter's runs, one at a time.
type watchdog struct {
	timer *time.Timer // fires watchAfter into a run and then watches it

	mu      sync.Mutex
	cancel  context.CancelFunc // the running script's context; guarded by mu
	running bool               // a run is on; guarded by mu
	limit   time.Duration      // the run's time limit; guarded by mu
	memory  uint64             // the run's heap limit; guarded by mu
	busy    time.Duration      // when the run is busy (Input.BusyAfter); guarded by mu
	watcher Watcher            // the run's Watcher, or nil; guarded by mu
	stop    chan struct{}      // closed when the run ends; guarded by mu
	exited  chan struct{}      // closed when the watcher returns; guarded by mu
	reason  int                // why the last run was stopped; guarded by mu
}

func newWatchdog() *watchdog {
	w := &watchdog{}
	w.timer = time.AfterFunc(time.Hour, w.watch)
	w.timer.Stop()
	return w
}

// start begins watching a run that cancel stops, with its limits, and
// its Watcher, if not nil, told once it has run busy.
func (w *watchdog) start(cancel context.CancelFunc, limit time.Duration, memory uint64, busy time.Duration, watcher Watcher) {
	w.mu.Lock()
	w.cancel, w.running, w.limit, w.memory, w.reason = cancel, true, limit, memory, notKilled
	w.busy, w.watcher = busy, watcher
	w.mu.Unlock()
	w.timer.Reset(min(watchAfter, limit))
}

// end ends the run, waits for its watcher if it had one, and reports why
// the watcher stopped it (notKilled: it did not).
func (w *watchdog) end() int {
	w.timer.Stop()
	w.mu.Lock()
	w.running = false
	stop, exited := w.stop, w.exited
	w.stop, w.exited = nil, nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-exited
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

// watch runs on the timer's goroutine while a run lasts past watchAfter:
// it polls the clock and the heap, and cancels the run past its limits;
// once the run is busy, it tells the run's Watcher and polls it too.
func (w *watchdog) watch() {
	w.mu.Lock()
	if !w.running || w.stop != nil {
		w.mu.Unlock()
		return
	}
	stop, exited := make(chan struct{}), make(chan struct{})
	w.stop, w.exited = stop, exited
	cancel, memory, watcher := w.cancel, w.memory, w.watcher
	started := time.Now().Add(-min(watchAfter, w.limit))
	deadline, busyAt := started.Add(w.limit), started.Add(w.busy)
	w.mu.Unlock()
	busy := false
	defer close(exited)

	base := heapBytes()
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			if watcher != nil && !busy && !now.Before(busyAt) {
				busy = true
				watcher.Busy()
			}
			reason := notKilled
			switch {
			case !now.Before(deadline):
				reason = killedTime
			case heapBytes() > base+memory:
				reason = killedMemory
			case busy && watcher.Killed():
				reason = killedByUser
			}
			if reason != notKilled {
				w.mu.Lock()
				w.reason = reason
				w.mu.Unlock()
				cancel()
				return
			}
		}
	}
}

// close stops the timer; the interpreter is being discarded.
func (w *watchdog) close() { w.timer.Stop() }

// heapMetric is the runtime's count of heap bytes in objects, live or not
// yet swept; reading it does not stop the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
