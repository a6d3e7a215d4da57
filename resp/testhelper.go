package resp

// This file holds what tests use the server for, in the miniredis idiom:
// a server started on a free loopback port and stopped by t.Cleanup, and
// helpers that read and steer its state without a client.

import (
	"time"

	"github.com/nxkv/nxkv/engine"
)

// TB is the part of testing.TB the helpers use; *testing.T, *testing.B
// and *testing.F satisfy it.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// RunT starts a server with the default options on a free 127.0.0.1 port
// and closes it when the test ends. Addr gives its address.
func RunT(t TB) *Server {
	t.Helper()
	return NewT(t, Options{})
}

// NewT starts a server with opts on a free 127.0.0.1 port and closes it
// when the test ends (t.Cleanup). It fails the test if it cannot listen,
// and, when the test ends, if a command panicked (a defect of nxkv, which
// the server contained by closing that client's connection; the stack is in
// the test's log through Options.ErrorLog, or the standard logger).
func NewT(t TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	if err := s.Start(); err != nil {
		s.Close()
		t.Fatalf("resp: start server: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		if n := s.Stats().Panics; n > 0 {
			t.Errorf("resp: %d command(s) panicked in the server during the test (see the log); please report it", n)
		}
	})
	return s
}

// Get returns the value of key in database 0, as GET (ok false if it is
// missing or expired). Like every helper below it is safe for concurrent use,
// including with clients, and acts on the engine directly.
func (s *Server) Get(key string) (string, bool) { return s.Engine().Get(key) }

// Set stores value under key in database 0 without a TTL, as SET.
func (s *Server) Set(key, value string) { _ = s.Engine().Set(key, value) }

// SetTTL stores value under key in database 0 with a TTL, as SET PX; it
// returns engine.ErrInvalidTTL for ttl <= 0.
func (s *Server) SetTTL(key, value string, ttl time.Duration) error {
	return s.Engine().SetPX(key, value, ttl)
}

// TTL returns key's remaining time to live in database 0: ok is false if
// the key is missing, ttl is engine.NoExpiry if it has no deadline.
func (s *Server) TTL(key string) (ttl time.Duration, ok bool) { return s.Engine().PTTL(key) }

// Del deletes keys from database 0 and returns how many existed.
func (s *Server) Del(keys ...string) int { return s.Engine().Del(keys...) }

// Keys returns the live keys of database 0, in no particular order, read
// atomically.
func (s *Server) Keys() []string {
	var keys []string
	update(s.Engine(), nil, func(st store) {
		st.RangeAll(func(k string) bool { keys = append(keys, k); return true })
	})
	return keys
}

// FlushAll deletes every key of every database, as FLUSHALL (clients
// with client-side caching get one null invalidation).
func (s *Server) FlushAll() {
	for i := range Databases {
		if e := s.existingDB(i); e != nil {
			e.Update(nil, func(tx *engine.Tx) {
				tx.SetTag(helperTag{}) // invalidated once, below
				tx.FlushAll()
			})
		}
	}
	s.trackingFlushed(nil)
}

// helperTag tags the sections of the test helpers, which are no client's.
type helperTag struct{}
