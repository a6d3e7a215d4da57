package resp

// This file holds maxmemory, as Redis's evict.c and the maxmemory step of
// processCommand: the bound every database shares (an engine Budget), its
// configuration (maxmemory, maxmemory-policy, maxmemory-samples), the check
// before each command that evicts or refuses it, the same check for the
// commands a script calls, and what INFO reports of it.

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/nxkv/nxkv/engine"
)

// memory is the server's maxmemory state.
type memory struct {
	// budget bounds every database together: Options.Budget, or database
	// 0's (Options.Engine's), or one the server made. Each database the
	// server creates joins it and is charged its Overhead, as Redis counts
	// the memory it holds whatever its keys.
	budget *engine.Budget
	// huge is the configured maxmemory when it is past what the budget
	// holds (math.MaxInt64), which CONFIG GET and INFO report as set.
	huge atomic.Uint64
	// evictedBase is the budget's eviction count at the last CONFIG
	// RESETSTAT, which INFO's evicted_keys counts from.
	evictedBase atomic.Int64
	// tenacity is maxmemory-eviction-tenacity: accepted and reported,
	// without effect (eviction here always evicts all it needs at once).
	tenacity atomic.Int64
	// unchecked, set only by the package's tests, plants a bug: commands
	// are admitted without the check. The differential test catches it.
	unchecked atomic.Bool
}

// initMemory sets the server's budget: opts.Budget, or opts.Engine's, or a
// new one without a bound; opts.Engine is charged its overhead if it
// counts against it.
func (s *Server) initMemory(opts Options) {
	b := opts.Budget
	if e := opts.Engine; e != nil && e.Budget() != nil {
		if b != nil && b != e.Budget() {
			panic("resp: Options.Budget is not the budget of Options.Engine")
		}
		b = e.Budget()
	}
	if b == nil {
		b = engine.NewBudget(0, engine.NoEviction, 0)
	}
	s.mem.budget = b
	s.mem.tenacity.Store(10)
	if e := opts.Engine; e != nil && e.Budget() == b {
		b.Charge(e.MemoryStats().Overhead)
	}
}

// Budget returns the memory bound every database shares (see
// Options.Budget): CONFIG SET maxmemory and its siblings change it.
func (s *Server) Budget() *engine.Budget { return s.mem.budget }

// checkMemory is processCommand's maxmemory step for a client's command:
// it evicts down to the bound as the policy allows (as Redis does before
// every command), records whether the server is out of memory for the
// scripts the command runs (Redis's pre_command_oom_state), and, if it is,
// reports that the command must be refused with Redis's OOM error: one that
// may add memory, or any command queued in MULTI (but EXEC, DISCARD, QUIT
// and RESET).
func (c *conn) checkMemory(cmd *command, args [][]byte) (refuse bool) {
	if c.s.busy.n.Load() > 0 {
		// Inside a busy script's run, as Redis's processCommand skips
		// maxmemory while isInsideYieldingLongCommand: no eviction, no
		// refusal (the BUSY check that follows refuses most commands).
		c.oom = false
		return false
	}
	c.oom = c.s.mem.budget.Evict() != nil && !c.s.mem.unchecked.Load()
	if !c.oom {
		return false
	}
	if c.multi != nil {
		switch cmd.name {
		case "exec", "discard", "quit", "reset":
		default:
			return true
		}
	}
	return c.s.denyOOM(cmd, args, c.multi)
}

// denyOOM reports whether cmd with args may add memory, as Redis's
// CMD_DENYOOM with getCommandFlags: a script's flags decide for EVAL and
// EVALSHA (a script without a shebang line keeps EVAL's, which allow it:
// its commands are checked as it calls them), and EXEC's are those of the
// commands m queued.
func (s *Server) denyOOM(cmd *command, args [][]byte, m *multiState) bool {
	switch {
	case cmd.name == "exec":
		return m != nil && m.denyOOM
	case strings.HasPrefix(cmd.name, "eval") && len(args) > 1:
		var fl scriptFlagSet
		if cmd.name == "eval" || cmd.name == "eval_ro" {
			if _, f, msg := shebang(string(args[1])); msg == "" {
				fl = f
			}
		} else if sc := s.scripts.lookup(strings.ToLower(string(args[1]))); sc != nil {
			fl = scriptFlagSet{flagged: sc.flagged, noWrites: sc.noWrites, allowOOM: sc.allowOOM}
		}
		return fl.flagged && !fl.allowOOM && !fl.noWrites
	}
	return cmd.flags&denyOOM != 0
}

// checkScriptCall is scriptVerifyOOM: a command a script calls that may add
// memory is refused when the server was out of memory as the script's
// command began, unless the script has written already (it cannot be
// stopped half-way) or declares allow-oom. It marks the script dirty when
// the command writes. It returns the error to reply, or "".
func (run *scriptRun) checkScriptCall(cmd *command) string {
	if run.oom && !run.dirty && !run.allowOOM && cmd.flags&denyOOM != 0 {
		return errOOM
	}
	if cmd.flags&write != 0 {
		run.dirty = true
	}
	return ""
}

// configMemory returns CONFIG GET's maxmemory parameters.
func (s *Server) configMemory() map[string]string {
	st := s.mem.budget.Stats()
	return map[string]string{
		"maxmemory":                   strconv.FormatUint(s.maxmemory(st), 10),
		"maxmemory-policy":            st.Policy.String(),
		"maxmemory-samples":           strconv.Itoa(st.Samples),
		"maxmemory-eviction-tenacity": strconv.FormatInt(s.mem.tenacity.Load(), 10),
		"maxmemory-clients":           "0",
	}
}

// maxmemory returns the configured bound: the budget's, or the one past
// what it holds that CONFIG SET gave.
func (s *Server) maxmemory(st engine.MemoryStats) uint64 {
	if h := s.mem.huge.Load(); h != 0 && st.Max == math.MaxInt64 {
		return h
	}
	return uint64(st.Max)
}

// setMemoryConfig checks CONFIG SET's value for one of the maxmemory
// parameters and returns what applies it, or CONFIG SET's reason for
// refusing it; ok is false if name is none of them.
func (s *Server) setMemoryConfig(name, value string) (apply func(), why string, ok bool) {
	b := s.mem.budget
	switch name {
	case "maxmemory":
		n, valid := parseMemory(value)
		if !valid {
			return nil, "argument must be a memory value", true
		}
		return func() {
			s.mem.huge.Store(0)
			if n > math.MaxInt64 {
				s.mem.huge.Store(n)
			}
			b.SetMax(int64(min(n, math.MaxInt64)))
			_ = b.Evict() // as Redis starts evicting at once
		}, "", true
	case "maxmemory-policy":
		for p := engine.NoEviction; p <= engine.VolatileRandom; p++ {
			if strings.EqualFold(value, p.String()) {
				return func() { _ = b.SetPolicy(p) }, "", true
			}
		}
		return nil, "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction", true
	case "maxmemory-samples":
		n, why := configInt(value, 1, math.MaxInt32)
		if why != "" {
			return nil, why, true
		}
		return func() { b.SetSamples(int(n)) }, "", true
	case "maxmemory-eviction-tenacity":
		n, why := configInt(value, 0, 100)
		if why != "" {
			return nil, why, true
		}
		return func() { s.mem.tenacity.Store(n) }, "", true
	}
	return nil, "", false
}

// configInt parses an integer parameter of CONFIG SET within [lo, hi], or
// returns Redis's reason for refusing it.
func configInt(value string, lo, hi int64) (int64, string) {
	n, ok := parseInt([]byte(value))
	if !ok {
		return 0, "argument couldn't be parsed into an integer"
	}
	if n < lo || n > hi {
		return 0, "argument must be between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10) + " inclusive"
	}
	return n, ""
}

// evictedKeys returns INFO's evicted_keys: keys evicted from any database
// since the server started or CONFIG RESETSTAT.
func (s *Server) evictedKeys() int64 {
	return s.mem.budget.Stats().Evicted - s.mem.evictedBase.Load()
}

// resetEvicted starts evicted_keys again from 0 (CONFIG RESETSTAT).
func (s *Server) resetEvicted() { s.mem.evictedBase.Store(s.mem.budget.Stats().Evicted) }
