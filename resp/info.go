package resp

// This file holds TIME and INFO, as Redis's server.c: INFO's sections,
// its commandstats and errorstats included.

import (
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cmdTime replies the current time of the engine's clock (frozen inside a
// transaction or script), as seconds and microseconds.
func cmdTime(x *call) {
	t := x.now()
	us := t.UnixMicro()
	x.w.array(2)
	x.w.bulkString(strconv.FormatInt(us/1e6, 10))
	x.w.bulkString(strconv.FormatInt(us%1e6, 10))
}

// infoSections lists INFO's sections in Redis's order; the default ones
// are those INFO without arguments shows.
var infoSections = []struct {
	name string
	dflt bool
}{
	{"server", true}, {"clients", true}, {"memory", true}, {"persistence", true},
	{"stats", true}, {"replication", true}, {"cpu", true}, {"modules", true},
	{"commandstats", false}, {"errorstats", true}, {"cluster", true}, {"keyspace", true},
}

func cmdInfo(x *call) {
	want := map[string]bool{}
	all := false
	if len(x.args) == 1 {
		want["default"] = true
	}
	for _, a := range x.args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	if want["all"] || want["everything"] {
		all = true
	}
	var names []string
	for _, s := range infoSections {
		if all || want[s.name] || (want["default"] && s.dflt) {
			names = append(names, s.name)
		}
	}
	// Inside a transaction the keyspace is counted through the sections it
	// holds: locking a database again from inside would wait for ever.
	if x.tx && slices.Contains(names, "keyspace") && !x.holdsAllDBs() {
		x.w.errorReply("ERR nxkv: INFO keyspace needs every database, which this transaction does not hold")
		return
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = x.infoSection(name)
	}
	x.w.verbatim(strings.Join(parts, "\r\n"))
}

// infoSection renders one INFO section, each line ending in CRLF.
func (x *call) infoSection(name string) string {
	s := x.s
	var b strings.Builder
	line := func(k string, v any) {
		b.WriteString(k)
		b.WriteByte(':')
		switch v := v.(type) {
		case string:
			b.WriteString(v)
		case int:
			b.WriteString(strconv.Itoa(v))
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		}
		b.WriteString("\r\n")
	}
	switch name {
	case "server":
		b.WriteString("# Server\r\n")
		exe, _ := os.Executable()
		up := int64(time.Since(s.start) / time.Second)
		line("redis_version", RedisVersion)
		line("redis_git_sha1", "00000000")
		line("redis_git_dirty", 0)
		line("redis_build_id", "0")
		line("redis_mode", "standalone")
		line("os", runtime.GOOS+" "+runtime.GOARCH)
		line("arch_bits", strconv.Itoa(strconv.IntSize))
		line("multiplexing_api", "go")
		line("process_id", os.Getpid())
		line("process_supervised", "no")
		line("run_id", s.runID)
		line("tcp_port", s.port())
		line("server_time_usec", x.now().UnixMicro())
		line("uptime_in_seconds", up)
		line("uptime_in_days", up/86400)
		line("hz", 10)
		line("configured_hz", 10)
		line("executable", exe)
		line("config_file", "")
		line("io_threads_active", 0)
		line("nxkv_server", "1")
	case "clients":
		b.WriteString("# Clients\r\n")
		line("connected_clients", s.clients())
		line("cluster_connections", 0)
		line("maxclients", 10000)
		line("blocked_clients", s.blockedClients())
		line("tracking_clients", s.trk.clientCount.Load())
	case "memory":
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		// used_memory is what maxmemory bounds: every database's keys as
		// the engines count them, and each database's overhead (evict.go);
		// used_memory_rss is the Go runtime's memory from the system.
		st := s.mem.budget.Stats()
		max := s.maxmemory(st)
		b.WriteString("# Memory\r\n")
		line("used_memory", st.Used)
		line("used_memory_human", humanBytes(uint64(st.Used)))
		line("used_memory_rss", int64(m.Sys))
		line("used_memory_rss_human", humanBytes(m.Sys))
		line("used_memory_lua", 0)
		line("number_of_cached_scripts", s.scripts.count())
		line("maxmemory", int64(max)) // signed, as Redis prints it
		line("maxmemory_human", humanBytes(max))
		line("maxmemory_policy", st.Policy.String())
		line("mem_allocator", "go")
	case "persistence":
		b.WriteString("# Persistence\r\n")
		line("loading", 0)
		line("async_loading", 0)
		line("rdb_changes_since_last_save", 0)
		line("rdb_bgsave_in_progress", 0)
		line("rdb_last_save_time", s.start.Unix())
		line("rdb_last_bgsave_status", "ok")
		line("aof_enabled", 0)
		line("aof_rewrite_in_progress", 0)
		line("aof_last_bgrewrite_status", "ok")
		line("aof_last_write_status", "ok")
	case "stats":
		b.WriteString("# Stats\r\n")
		line("total_connections_received", s.conns0.Load())
		line("total_commands_processed", s.commands.Load())
		line("rejected_connections", 0)
		line("expired_keys", 0)
		line("evicted_keys", s.evictedKeys())
		line("keyspace_hits", 0)
		line("keyspace_misses", 0)
		channels, patterns, shard := s.pubsubCounts()
		line("pubsub_channels", channels)
		line("pubsub_patterns", patterns)
		line("pubsubshard_channels", shard)
		_, keys, items, prefixes := s.trackingCounts()
		line("tracking_total_keys", keys)
		line("tracking_total_items", items)
		line("tracking_total_prefixes", prefixes)
		line("total_error_replies", s.errs.total.Load())
	case "replication":
		b.WriteString("# Replication\r\n")
		line("role", "master")
		line("connected_slaves", 0)
		line("master_failover_state", "no-failover")
		line("master_replid", s.runID)
		line("master_replid2", strings.Repeat("0", 40))
		line("master_repl_offset", 0)
		line("second_repl_offset", -1)
		line("repl_backlog_active", 0)
	case "cpu":
		sys, user := cpuSeconds()
		b.WriteString("# CPU\r\n")
		line("used_cpu_sys", strconv.FormatFloat(sys, 'f', 6, 64))
		line("used_cpu_user", strconv.FormatFloat(user, 'f', 6, 64))
	case "modules":
		b.WriteString("# Modules\r\n")
	case "commandstats":
		b.WriteString("# Commandstats\r\n")
		s.writeCommandStats(&b)
	case "errorstats":
		b.WriteString("# Errorstats\r\n")
		counts := s.errs.snapshot()
		codes := make([]string, 0, len(counts))
		for code := range counts {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			line("errorstat_"+code, "count="+strconv.FormatInt(counts[code], 10))
		}
	case "cluster":
		b.WriteString("# Cluster\r\n")
		line("cluster_enabled", 0)
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		for i := range Databases {
			keys, expires := 0, 0
			count := func(st store) {
				st.RangeAll(func(k string) bool {
					keys++
					if at, ok := st.ExpireTime(k); ok && !at.IsZero() {
						expires++
					}
					return true
				})
			}
			if x.tx {
				count(x.txs.get(i)) // cmdInfo checked that it holds them all
			} else if e := s.existingDB(i); e != nil && e.LenAll() != 0 {
				update(e, nil, count)
			}
			if keys > 0 {
				line("db"+strconv.Itoa(i), "keys="+strconv.Itoa(keys)+",expires="+strconv.Itoa(expires)+",avg_ttl=0")
			}
		}
	}
	return b.String()
}

// humanBytes formats n as Redis's bytesToHuman.
func humanBytes(n uint64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case n < 1<<20:
		return strconv.FormatFloat(f/1024, 'f', 2, 64) + "K"
	case n < 1<<30:
		return strconv.FormatFloat(f/(1<<20), 'f', 2, 64) + "M"
	case n < 1<<40:
		return strconv.FormatFloat(f/(1<<30), 'f', 2, 64) + "G"
	case n < 1<<50:
		return strconv.FormatFloat(f/(1<<40), 'f', 2, 64) + "T"
	case n < 1<<60:
		return strconv.FormatFloat(f/(1<<50), 'f', 2, 64) + "P"
	default:
		return strconv.FormatUint(n, 10) + "B"
	}
}
