package resp

// This file holds fault injection: errors and dropped connections that
// tests ask for, to see how their client code copes.

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Fault is a failure the server injects instead of running a command.
type Fault struct {
	// Command is the lower-case command name to fail ("set", "evalsha",
	// "client|setname"); "" matches every command.
	Command string
	// Err is the error reply sent instead of running the command, for
	// example "READONLY You can't write against a read only replica." (no
	// leading '-'). Ignored when Drop or DropReply is set.
	Err string
	// Drop closes the connection without running the command or replying.
	Drop bool
	// DropReply runs the command, then closes the connection without the
	// reply: the write happened but the client never learns it.
	DropReply bool
	// Times is how many matching commands fail; 0 means until removed.
	Times int
}

// faults is the set of active faults, guarded by mu; active lets the
// dispatcher skip the lock when there are none.
type faults struct {
	mu   sync.Mutex
	list []*faultEntry // guarded by mu
	n    atomicCount   // len(list), read without mu to skip it when empty
}

type faultEntry struct {
	f    Fault
	left int // remaining uses; 0: unlimited
}

// take returns the fault for command name, consuming one use.
func (fs *faults) take(name string) (Fault, bool) {
	if fs.n.load() == 0 {
		return Fault{}, false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, e := range fs.list {
		if e.f.Command != "" && e.f.Command != name && !strings.HasPrefix(name, e.f.Command+"|") {
			continue
		}
		if e.left > 0 {
			e.left--
			if e.left == 0 {
				fs.list = append(fs.list[:i], fs.list[i+1:]...)
				fs.n.store(len(fs.list))
			}
		}
		return e.f, true
	}
	return Fault{}, false
}

// InjectFault makes the server fail commands as f describes until remove
// is called or f.Times commands have failed. Faults apply to commands
// clients send (not to those inside EXEC or scripts); the first matching
// fault wins. It is safe for concurrent use.
func (s *Server) InjectFault(f Fault) (remove func()) {
	if f.Err == "" && !f.Drop && !f.DropReply {
		f.Err = "ERR injected fault"
	}
	e := &faultEntry{f: f, left: f.Times}
	fs := &s.faults
	fs.mu.Lock()
	fs.list = append(fs.list, e)
	fs.n.store(len(fs.list))
	fs.mu.Unlock()
	return func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		for i, x := range fs.list {
			if x == e {
				fs.list = append(fs.list[:i], fs.list[i+1:]...)
				break
			}
		}
		fs.n.store(len(fs.list))
	}
}

// SetError makes every command reply the error msg (no leading '-') until
// SetError("") clears it, like miniredis's SetError. It replaces earlier
// SetError faults but leaves those of InjectFault.
func (s *Server) SetError(msg string) {
	s.mu.Lock()
	prev := s.setErr
	s.setErr = nil
	s.mu.Unlock()
	if prev != nil {
		prev()
	}
	if msg == "" {
		return
	}
	remove := s.InjectFault(Fault{Err: msg})
	s.mu.Lock()
	s.setErr = remove
	s.mu.Unlock()
}

// atomicCount is an int read without the lock as a fast-path hint.
type atomicCount struct{ v atomic.Int64 }

func (a *atomicCount) load() int   { return int(a.v.Load()) }
func (a *atomicCount) store(n int) { a.v.Store(int64(n)) }
