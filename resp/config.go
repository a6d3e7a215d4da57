package resp

// This file holds CONFIG GET, SET and RESETSTAT, as Redis's config.c.

import (
	"errors"
	"maps"
	"sort"
	"strconv"
	"strings"
)

// configGet returns the configuration parameters CONFIG GET reports.
func (s *Server) configGet() map[string]string {
	cfg := map[string]string{
		"save":                       "",
		"appendonly":                 "no",
		"databases":                  strconv.Itoa(Databases),
		"maxclients":                 "10000",
		"timeout":                    "0",
		"tcp-keepalive":              "300",
		"port":                       strconv.Itoa(s.port()),
		"bind":                       s.bindAddrs(),
		"unixsocket":                 s.unixSocket(),
		"requirepass":                s.password(),
		"proto-max-bulk-len":         strconv.Itoa(s.maxBulk()),
		"client-query-buffer-limit":  strconv.Itoa(maxQueryBuffer),
		"client-output-buffer-limit": s.outputLimits().String(),
		"notify-keyspace-events":     formatNotifyFlags(int(s.notify.flags.Load())),
		"tracking-table-max-keys":    strconv.FormatInt(s.trk.maxKeys.Load(), 10),
		"lua-time-limit":             strconv.FormatInt(s.busy.after.Load(), 10),
		"busy-reply-threshold":       strconv.FormatInt(s.busy.after.Load(), 10),
		"io-threads":                 "1",
		"cluster-enabled":            "no",
		"replica-read-only":          "yes",
		"slave-read-only":            "yes",
		"appendfsync":                "everysec",
		"hz":                         "10",
		"loglevel":                   "notice",
		"protected-mode":             "no",
	}
	maps.Copy(cfg, s.configMemory())
	for i, l := range limitNames {
		cfg[l.name] = strconv.FormatInt(s.limit(i), 10)
		if l.alias != "" {
			cfg[l.alias] = cfg[l.name]
		}
	}
	return cfg
}

// limitIndex returns the encoding limit a CONFIG name (or alias) names,
// -1 if none.
func limitIndex(name string) int {
	for i, l := range limitNames {
		if name == l.name || name == l.alias {
			return i
		}
	}
	return -1
}

func cmdConfigGet(x *call) {
	cfg := x.s.configGet()
	var keys []string
	for k := range cfg {
		for _, p := range x.args[2:] {
			if globMatch(strings.ToLower(string(p)), k) {
				keys = append(keys, k)
				break
			}
		}
	}
	sort.Strings(keys)
	x.w.mapHeader(len(keys))
	for _, k := range keys {
		x.w.bulkString(k)
		x.w.bulkString(cfg[k])
	}
}

// cmdConfigSet accepts the settings that have a meaning here and those
// that are safe to ignore in memory (persistence); any other is Redis's
// unknown-option error, never a silently ignored setting. Every value is
// checked before any is applied, as Redis does.
func cmdConfigSet(x *call) {
	if len(x.args)%2 != 0 {
		x.w.errorReply("ERR wrong number of arguments for 'config|set' command")
		return
	}
	var apply []func()
	for i := 2; i < len(x.args); i += 2 {
		f, msg := x.s.configSet(string(x.args[i]), string(x.args[i+1]))
		if msg != "" {
			x.w.errorReply(msg)
			return
		}
		apply = append(apply, f)
	}
	for _, f := range apply {
		f()
	}
	if !x.tx {
		x.s.updateFeed()
	}
	x.w.simple("OK")
}

// configSet checks one CONFIG SET parameter and returns what applies it,
// or Redis's error reply.
func (s *Server) configSet(name, value string) (apply func(), msg string) {
	lower := strings.ToLower(name)
	failed := func(why string) (func(), string) {
		return nil, "ERR CONFIG SET failed (possibly related to argument '" + sanitize(lower) + "') - " + why
	}
	switch lower {
	case "save", "appendonly", "appendfsync", "loglevel":
		return func() {}, ""
	case "requirepass":
		return func() { s.setPassword(value) }, ""
	case "busy-reply-threshold", "lua-time-limit":
		n, why := nonNegative(value)
		if why != "" {
			return failed(why)
		}
		return func() { s.busy.after.Store(n) }, ""
	case "client-output-buffer-limit":
		l, why := parseOutputLimits(s.outputLimits(), value)
		if why != "" {
			return failed(why)
		}
		return func() { s.limits.Store(&l) }, ""
	case "notify-keyspace-events":
		flags, ok := parseNotifyFlags(value)
		if !ok {
			return failed(errNotifyFlags)
		}
		return func() { s.setNotifyFlags(flags) }, ""
	case "tracking-table-max-keys":
		n, why := nonNegative(value)
		if why != "" {
			return failed(why)
		}
		return func() {
			s.trk.maxKeys.Store(n)
			for s.trk.overLimit() {
				// At once, where Redis's server cron trims the table
				// before any next command, with an effort that grows.
				s.trackingLimit(nil)
			}
		}, ""
	}
	if j := limitIndex(lower); j >= 0 {
		n, ok := parseInt([]byte(value))
		if !ok {
			// Redis names the parameter by its own name, not an alias.
			return nil, "ERR CONFIG SET failed (possibly related to argument '" + limitNames[j].name +
				"') - argument couldn't be parsed into an integer"
		}
		return func() { s.encLimits[j].Store(n) }, ""
	}
	if f, why, ok := s.setMemoryConfig(lower, value); ok {
		if why != "" {
			return failed(why)
		}
		return f, ""
	}
	return nil, "ERR Unknown option or number of arguments for CONFIG SET - '" + sanitize(name) + "'"
}

// nonNegative parses a setting that is an integer from 0 up, or returns
// why not in CONFIG SET's words.
func nonNegative(value string) (int64, string) {
	n, ok := parseInt([]byte(value))
	switch {
	case !ok:
		return 0, "argument couldn't be parsed into an integer"
	case n < 0:
		return 0, "argument must be between 0 and 9223372036854775807 inclusive"
	}
	return n, ""
}

// ConfigSet sets a configuration parameter as CONFIG SET does, for the
// parameters CONFIG SET accepts (notify-keyspace-events,
// client-output-buffer-limit, tracking-table-max-keys, the encoding
// limits (hash-max-listpack-entries and the rest), the maxmemory
// settings, busy-reply-threshold, requirepass, and
// the persistence settings it ignores), and returns CONFIG SET's error
// for a parameter it does not know or a bad value, changing nothing. It
// lets a test enable keyspace notifications without a client, and
// nxkv-server apply its configuration file. It is safe for concurrent use.
func (s *Server) ConfigSet(name, value string) error {
	apply, msg := s.configSet(name, value)
	if msg != "" {
		return errors.New(strings.TrimPrefix(msg, "ERR "))
	}
	apply()
	s.syncFeed()
	return nil
}

func cmdConfigResetStat(x *call) {
	x.s.commands.Store(0)
	x.s.resetEvicted()
	x.s.errs.reset()
	x.s.resetCommandStats()
	x.w.simple("OK")
}
