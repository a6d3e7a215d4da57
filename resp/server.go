package resp

// This file holds the Server: its options, its creation, its statistics
// and Close.

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"time"

	"github.com/nxkv/nxkv/resp/internal/lua"
)

// New returns a server over opts.Engine (or a new engine). It does not
// listen yet: call Serve, Listen or Start, or use Dial.
func New(opts Options) *Server {
	s := &Server{
		opts:      opts,
		start:     time.Now(),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
	}
	if opts.Engine != nil {
		s.clk = engineClock(opts.Engine)
		s.dbs[0] = opts.Engine
		s.initMemory(opts)
	} else {
		s.clk = opts.Clock
		s.initMemory(opts)
		s.dbs[0] = s.newBudgetedDB()
		s.owned[0] = true
	}
	s.dbCache[0].Store(s.dbs[0])
	s.pass.Store(&opts.Password)
	limits := defaultOutputLimits
	s.limits.Store(&limits)
	s.busy.after.Store(defaultBusyAfter)
	var id [20]byte
	_, _ = rand.Read(id[:])
	s.runID = hex.EncodeToString(id[:])
	s.scripts.init(lua.Options{MaxBulk: s.maxBulk(), Version: RedisVersion})
	s.cmdStats = make([]cmdStats, len(allCommands))
	s.initPubsub()
	s.initTracking()
	s.newDB = s.dbCreated
	for i, l := range limitNames {
		s.encLimits[i].Store(l.def)
	}
	return s
}

// Close stops the listeners, closes every connection, waits until every
// goroutine the server started has exited, and then closes the engines the
// server created (never Options.Engine). It is safe to call more than once
// and returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.nc.Close() // goroutine connections; the loops close their own
	}
	for _, lp := range s.loops {
		lp.stop()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.stopFeed() // the caller's engine outlives the server
	s.scripts.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.dbs {
		if e != nil && s.owned[i] {
			e.Close()
		}
	}
	return nil
}

// Stats are counters of a Server since it started (Commands and
// ErrorReplies since the last CONFIG RESETSTAT, as in INFO).
type Stats struct {
	// Connections is the number of connections accepted.
	Connections int64
	// Commands is the number of commands run, those inside transactions
	// and scripts included.
	Commands int64
	// ErrorReplies is the number of error replies sent to clients.
	ErrorReplies int64
	// Panics is the number of commands that panicked: each was contained
	// (logged, its client's connection closed) and is a defect of nxkv.
	Panics int64
	// OutputLimitCloses is the number of clients closed because their
	// pending output passed client-output-buffer-limit (a subscriber that
	// stopped reading, say).
	OutputLimitCloses int64
}

// Stats returns the server's counters. It is safe for concurrent use.
func (s *Server) Stats() Stats {
	return Stats{
		Connections:  s.conns0.Load(),
		Commands:     s.commands.Load(),
		ErrorReplies: s.errs.total.Load(),
		Panics:       s.panics.total.Load(),

		OutputLimitCloses: s.clientsKilled.Load(),
	}
}
