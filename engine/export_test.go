package engine

// SetNowHook installs f to be called, on the caller's goroutine, right after
// every clock read of an operation (including Reap) with the time the
// operation uses, in Unix nanoseconds. An operation whose lock-free read
// was overtaken by a writer discards its reading and reads again: it calls
// f(math.MinInt64) first, to retract the discarded one. The background
// reaper does not call it. Set it before the engine is used concurrently.
func SetNowHook(e *Engine, f func(now int64)) { e.nowHook = f }

// Verify checks the engine's internal invariants (map, timer wheel, node
// recycler, watchers) on every shard and returns the first violation.
func Verify(e *Engine) error { return e.verify() }

// ForgetObject plants a defect for the invariant check: it removes key's
// object from its shard's objects map and leaves its entry holding the
// marker.
func ForgetObject(e *Engine, key string) {
	s, _ := e.m.Shard(e.m.Hash(key))
	s.Lock()
	delete(s.Aux.objects, key)
	s.Unlock()
}

// Marker returns a copy of the marker's bytes: a caller's string equal to
// the marker in content, which must never be taken for it.
func Marker() string { return string(markerBytes[:]) }
