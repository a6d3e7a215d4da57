package resp

// This file holds CONFIG GET, SET and RESETSTAT, as Redis's config.c.

import (
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
		"maxmemory":                  "0",
		"maxmemory-policy":           "noeviction",
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
		"notify-keyspace-events":     "",
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

// cmdConfigSet accepts the settings that have a meaning here (requirepass)
// and those that are safe to ignore in memory (persistence); any other is
// Redis's unknown-option error, never a silently ignored setting.
func cmdConfigSet(x *call) {
	if len(x.args)%2 != 0 {
		x.w.errorReply("ERR wrong number of arguments for 'config|set' command")
		return
	}
	for i := 2; i < len(x.args); i += 2 {
		switch strings.ToLower(string(x.args[i])) {
		case "save", "appendonly", "appendfsync", "loglevel":
		case "requirepass":
		case "busy-reply-threshold", "lua-time-limit":
			if n, ok := parseInt(x.args[i+1]); !ok || n < 0 {
				why := "argument couldn't be parsed into an integer"
				if ok {
					why = "argument must be between 0 and 9223372036854775807 inclusive"
				}
				x.w.errorReply("ERR CONFIG SET failed (possibly related to argument '" + strings.ToLower(string(x.args[i])) + "') - " + why)
				return
			}
		case "client-output-buffer-limit":
			if _, why := parseOutputLimits(x.s.outputLimits(), string(x.args[i+1])); why != "" {
				x.w.errorReply("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - " + why)
				return
			}
		default:
			if limitIndex(strings.ToLower(string(x.args[i]))) >= 0 {
				if _, ok := parseInt(x.args[i+1]); !ok {
					x.w.errorReply("ERR CONFIG SET failed (possibly related to argument '" + sanitize(string(x.args[i])) +
						"') - argument couldn't be parsed into an integer")
					return
				}
				continue
			}
			x.w.errorReply("ERR Unknown option or number of arguments for CONFIG SET - '" + sanitize(string(x.args[i])) + "'")
			return
		}
	}
	for i := 2; i < len(x.args); i += 2 {
		switch {
		case equalFold(x.args[i], "requirepass"):
			x.s.setPassword(string(x.args[i+1]))
		case equalFold(x.args[i], "client-output-buffer-limit"):
			l, _ := parseOutputLimits(x.s.outputLimits(), string(x.args[i+1]))
			x.s.limits.Store(&l)
		case equalFold(x.args[i], "busy-reply-threshold"), equalFold(x.args[i], "lua-time-limit"):
			n, _ := parseInt(x.args[i+1])
			x.s.busy.after.Store(n)
		}
		if j := limitIndex(strings.ToLower(string(x.args[i]))); j >= 0 {
			n, _ := parseInt(x.args[i+1])
			x.s.encLimits[j].Store(n)
		}
	}
	x.w.simple("OK")
}

func cmdConfigResetStat(x *call) {
	x.s.commands.Store(0)
	x.s.errs.reset()
	x.s.resetCommandStats()
	x.w.simple("OK")
}
