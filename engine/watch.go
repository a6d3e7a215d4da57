package engine

import "github.com/nxkv/nxkv/shard"

// watcher is one Watch call; done is guarded by the shard lock.
type watcher struct {
	ch   chan struct{}
	done bool // fired or stopped
}

// notifyLocked closes and forgets every watcher of key. eventLocked
// (feed.go), through which every change passes, calls it: Watch is one
// consumer of the change feed, and Quiet never silences it.
func (e *Engine) notifyLocked(s *shardT, key string) {
	o := s.Aux.obs
	ws, ok := o.watched()[key]
	if !ok {
		return
	}
	for _, w := range ws {
		w.done = true
		close(w.ch)
	}
	o.forgetLocked(s, key)
}

// watched returns the watchers of each key of the shard o observes (o may
// be nil).
func (o *observers) watched() map[string][]*watcher {
	if o == nil {
		return nil
	}
	return o.watchers
}

// forgetLocked drops key's watchers, and the map and o itself once they
// are empty.
func (o *observers) forgetLocked(s *shardT, key string) {
	delete(o.watchers, key)
	if len(o.watchers) == 0 {
		o.watchers = nil
		releaseLocked(s)
	}
}

// Watch returns a channel that is closed at the next change of key: any
// write (including a TTL change), a delete, or an expiry, active or lazy.
// Failed conditional writes and reads are not changes. key need not exist.
// To wait for a change without missing one, call Watch before checking the
// key's state. stop releases the watch (its channel then never closes); it
// is idempotent and safe to call after the channel closed. After Close, an
// expiry is seen only when the key is next accessed or Reap runs. Watch is
// safe for concurrent use; an expired key found by Watch is deleted (a
// change, so earlier watchers fire) before the new watch starts.
func (e *Engine) Watch(key string) (changed <-chan struct{}, stop func()) {
	w := &watcher{ch: make(chan struct{})}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	e.liveLocked(s, h, key, new(shard.Probe), false, &c)
	o := observe(s)
	if o.watchers == nil {
		o.watchers = make(map[string][]*watcher)
	}
	o.watchers[key] = append(o.watchers[key], w)
	s.Unlock()
	return w.ch, func() {
		s.Lock()
		defer s.Unlock()
		if w.done {
			return
		}
		w.done = true
		o := s.Aux.obs // not done: w is listed, so s is observed
		ws := o.watchers[key]
		for i, x := range ws {
			if x == w {
				ws[i] = ws[len(ws)-1]
				ws[len(ws)-1] = nil
				ws = ws[:len(ws)-1]
				break
			}
		}
		if len(ws) == 0 {
			o.forgetLocked(s, key)
		} else {
			o.watchers[key] = ws
		}
	}
}
