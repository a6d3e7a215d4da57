package resp

// This file adapts the engine to the handlers' store interface.

import (
	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
)

var (
	_ store = (*engine.Engine)(nil)
	_ store = (*engine.Tx)(nil)
)

// update runs fn inside an engine section over keys (every shard when keys
// is empty): atomic, with one frozen time.
func update(e *engine.Engine, keys []string, fn func(st store)) {
	e.Update(keys, func(tx *engine.Tx) { fn(tx) })
}

func engineClock(e *engine.Engine) clock.Clock { return e.Clock() }

func newEngine(c clock.Clock) *engine.Engine { return engine.New(engine.Options{Clock: c}) }

func flush(e *engine.Engine) { e.Flush() }

// store returns database i as a store.
func (s *Server) store(i int) store { return s.DB(i) }

func scan(e *engine.Engine, cursor uint64, fn func(string)) uint64 { return e.Scan(cursor, fn) }
