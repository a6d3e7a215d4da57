package resp

// Temporary stand-ins for engine API that is being added (Update, Tx, Now,
// PExpireAtCond, ExpireTime, Range, Flush, Clock). Removed once it lands.

import (
	"sync"
	"time"

	bbclock "github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
)

type shimStore struct {
	*engine.Engine
	clk clock.Clock
}

var shimClocks sync.Map

func (s shimStore) Now() time.Time {
	if s.clk != nil {
		return s.clk.Now()
	}
	return time.Now()
}

func (s shimStore) PExpireAtCond(key string, at time.Time, cond engine.ExpireCond) (bool, error) {
	return s.PExpireCond(key, at.Sub(s.Now()), cond)
}

func (s shimStore) ExpireTime(key string) (time.Time, bool) {
	d, ok := s.PTTL(key)
	if !ok || d == engine.NoExpiry {
		return time.Time{}, ok
	}
	return s.Now().Add(d), true
}

func (s shimStore) Range(fn func(key string) bool) {}

func shimClock(e *engine.Engine) clock.Clock {
	c, _ := shimClocks.Load(e)
	cc, _ := c.(clock.Clock)
	return cc
}

func asStore(e *engine.Engine) store { return shimStore{e, shimClock(e)} }

func update(e *engine.Engine, keys []string, fn func(st store)) { fn(asStore(e)) }

func engineClock(e *engine.Engine) clock.Clock { return shimClock(e) }

func newEngine(c clock.Clock) *engine.Engine {
	var bc bbclock.Clock
	if c != nil {
		bc = c.(bbclock.Clock)
	}
	e := engine.New(engine.Options{Clock: bc})
	if c != nil {
		shimClocks.Store(e, c)
	}
	return e
}

func flush(e *engine.Engine) {}

func (s *Server) store(i int) store { return asStore(s.DB(i)) }

func scan(e *engine.Engine, cursor uint64, fn func(string)) uint64 { return 0 }
