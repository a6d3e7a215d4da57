// Command nxkv-server serves nxkv's engine over the Redis protocol. It
// takes redis-server's basic command line and configuration (a file, or
// "-" for standard input, then --name value options), so tools that start
// redis-server can start it instead:
//
//	nxkv-server --port 6380
//	echo "port 0
//	unixsocket /tmp/nxkv.sock" | nxkv-server -
//
// Directives: port (0: no TCP), bind, unixsocket, requirepass, and those
// CONFIG SET changes (maxmemory, maxmemory-policy, maxmemory-samples,
// maxmemory-eviction-tenacity, notify-keyspace-events,
// tracking-table-max-keys, client-output-buffer-limit, busy-reply-threshold
// and its old name lua-time-limit), checked as CONFIG
// SET checks them. Persistence and tuning directives redis-server knows
// (save, appendonly, dir, loglevel and the like) are accepted and ignored,
// since nxkv keeps its data in memory; an unknown directive or a bad value
// is a fatal error, as with redis-server. It
// prints redis-server's "Ready to accept connections" line once it
// listens, and on SIGTERM or SIGINT closes every connection and exits 0.
//
// With the environment variable NXKV_DIE_WITH_PARENT=1 the server also
// exits when its parent process dies, so a crashed test run leaves no
// server behind.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nxkv/nxkv/resp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// config is the server's configuration.
type config struct {
	port       int
	binds      []string
	unixSocket string
	password   string
	// settings are the directives the server applies as CONFIG SET does
	// (configSettable), in file order.
	settings []setting
}

// setting is a directive applied through the server's CONFIG SET, with
// where it was read, for the error.
type setting struct {
	line        int
	raw         string
	name, value string
}

// configSettable lists the directives applied as CONFIG SET applies them,
// which checks their values; true for those that take one value.
var configSettable = map[string]bool{
	"maxmemory": true, "maxmemory-policy": true, "maxmemory-samples": true, "maxmemory-eviction-tenacity": true,
	"notify-keyspace-events": true, "tracking-table-max-keys": true, "client-output-buffer-limit": false,
	"busy-reply-threshold": true, "lua-time-limit": true,
}

// apply applies cfg's settings to s, or returns the fatal error of the
// first bad one.
func apply(s *resp.Server, cfg config) error {
	for _, st := range cfg.settings {
		if err := s.ConfigSet(st.name, st.value); err != nil {
			msg := err.Error()
			if _, why, ok := strings.Cut(msg, ") - "); ok {
				msg = why // the reason, as redis-server prints it for a file
			}
			return fatal(st.line, st.raw, msg)
		}
	}
	return nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-v" || args[0] == "--version") {
		fmt.Fprintf(stdout, "Redis server v=%s sha=00000000:0 malloc=go bits=64 build=nxkv\n", resp.RedisVersion)
		return 0
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "Usage: nxkv-server [/path/to/redis.conf|-] [--option value ...]")
		return 0
	}
	cfg, err := parseArgs(args, stdin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if os.Getenv("NXKV_DIE_WITH_PARENT") == "1" {
		dieWithParent()
	}
	s := resp.New(resp.Options{Password: cfg.password})
	if err := apply(s, cfg); err != nil {
		s.Close()
		fmt.Fprintln(stderr, err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := listen(s, cfg); err != nil {
		s.Close()
		fmt.Fprintf(stderr, "# Could not create server listener: %v\n", err)
		return 1
	}
	logf(stdout, '*', "nxkv-server (Redis %s protocol) started, pid=%d", resp.RedisVersion, os.Getpid())
	logf(stdout, '*', "Ready to accept connections")
	<-sigs
	signal.Stop(sigs)
	s.Close()
	return 0
}

// listen opens the configured listeners: TCP on each bind address (none for
// port 0) and the unix socket.
func listen(s *resp.Server, cfg config) error {
	if cfg.port != 0 {
		binds := cfg.binds
		if len(binds) == 0 {
			binds = []string{"127.0.0.1"}
		}
		for _, b := range binds {
			b = strings.TrimPrefix(b, "-") // redis's "-::*": optional address
			if b == "*" {
				b = ""
			}
			if _, err := s.Listen("tcp", net.JoinHostPort(b, strconv.Itoa(cfg.port))); err != nil {
				return err
			}
		}
	}
	if cfg.unixSocket != "" {
		_ = os.Remove(cfg.unixSocket)
		if _, err := s.Listen("unix", cfg.unixSocket); err != nil {
			return err
		}
	}
	if cfg.port == 0 && cfg.unixSocket == "" {
		return errors.New("port 0 and no unixsocket: nothing to listen on")
	}
	return nil
}

// logf prints a line in redis-server's log format.
func logf(w io.Writer, level byte, format string, args ...any) {
	now := time.Now()
	fmt.Fprintf(w, "%d:M %s.%03d %c %s\n", os.Getpid(), now.Format("02 Jan 2006 15:04:05"),
		now.Nanosecond()/1e6, level, fmt.Sprintf(format, args...))
}

// parseArgs reads the configuration: an optional file (or "-" for stdin)
// first, then "--name value..." options, applied in that order.
func parseArgs(args []string, stdin io.Reader) (config, error) {
	cfg := config{port: 6379}
	var text strings.Builder
	i := 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		var src []byte
		var err error
		if args[0] == "-" {
			src, err = io.ReadAll(stdin)
		} else {
			src, err = os.ReadFile(args[0])
		}
		if err != nil {
			return cfg, fmt.Errorf("Fatal error, can't open config file '%s': %v", args[0], err)
		}
		text.Write(src)
		text.WriteByte('\n')
		i = 1
	}
	for ; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "--") {
			text.WriteString(" " + quote(args[i]))
			continue
		}
		text.WriteString("\n" + args[i][2:])
	}
	return cfg, parseConfig(&cfg, text.String())
}

func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"'") {
		return strconv.Quote(s)
	}
	return s
}

// ignored lists the directives accepted and ignored: persistence, logging,
// process management and tuning that have no meaning for an in-memory
// engine.
var ignored = map[string]bool{
	"save": true, "appendonly": true, "appendfsync": true, "appendfilename": true, "appenddirname": true,
	"dir": true, "dbfilename": true, "daemonize": true, "pidfile": true, "logfile": true, "loglevel": true,
	"protected-mode": true, "tcp-backlog": true, "timeout": true, "tcp-keepalive": true, "databases": true,
	"supervised": true, "always-show-logo": true, "set-proc-title": true, "stop-writes-on-bgsave-error": true,
	"rdbcompression": true, "rdbchecksum": true, "maxclients": true, "hz": true, "io-threads": true,
	"unixsocketperm":       true,
	"enable-debug-command": true,
	"syslog-enabled":       true, "latency-monitor-threshold": true, "slowlog-log-slower-than": true,
	"activerehashing": true, "lazyfree-lazy-eviction": true, "lazyfree-lazy-expire": true,
}

// parseConfig applies redis.conf-style directives to cfg.
func parseConfig(cfg *config, text string) error {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		l := strings.TrimSpace(raw)
		if l == "" || l[0] == '#' {
			continue
		}
		f, ok := splitConfigLine(l)
		if !ok {
			return fatal(line, raw, "Unbalanced quotes in configuration line")
		}
		name := strings.ToLower(f[0])
		vals := f[1:]
		switch {
		case name == "port" && len(vals) == 1:
			p, err := strconv.Atoi(vals[0])
			if err != nil || p < 0 || p > 65535 {
				return fatal(line, raw, "Invalid port")
			}
			cfg.port = p
		case name == "bind" && len(vals) >= 1:
			cfg.binds = vals
		case name == "unixsocket" && len(vals) == 1:
			cfg.unixSocket = vals[0]
		case name == "requirepass" && len(vals) == 1:
			cfg.password = vals[0]
		case configSettable[name] && len(vals) != 1:
			return fatal(line, raw, "wrong number of arguments")
		case hasKey(configSettable, name) && len(vals) >= 1:
			cfg.settings = append(cfg.settings, setting{line: line, raw: raw, name: name, value: strings.Join(vals, " ")})
		case name == "daemonize" && len(vals) == 1 && strings.EqualFold(vals[0], "yes"):
			return fatal(line, raw, "daemonize yes is not supported: run nxkv-server under a supervisor")
		case ignored[name] && len(vals) >= 0:
		default:
			return fatal(line, raw, "Bad directive or wrong number of arguments")
		}
	}
	return nil
}

func fatal(line int, raw, msg string) error {
	return fmt.Errorf("\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s",
		resp.RedisVersion, line, strings.TrimSpace(raw), msg)
}

// splitConfigLine splits a configuration line into words, honouring double
// and single quotes (with backslash escapes in double quotes), as
// redis-server does.
func splitConfigLine(l string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i >= len(l) {
			return out, true
		}
		var b strings.Builder
		switch l[i] {
		case '"':
			i++
			for {
				if i >= len(l) {
					return nil, false
				}
				if l[i] == '\\' && i+1 < len(l) {
					i++
					switch l[i] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case 'r':
						b.WriteByte('\r')
					default:
						b.WriteByte(l[i])
					}
				} else if l[i] == '"' {
					i++
					break
				} else {
					b.WriteByte(l[i])
				}
				i++
			}
		case '\'':
			i++
			for {
				if i >= len(l) {
					return nil, false
				}
				if l[i] == '\'' {
					i++
					break
				}
				b.WriteByte(l[i])
				i++
			}
		default:
			for i < len(l) && l[i] != ' ' && l[i] != '\t' {
				b.WriteByte(l[i])
				i++
			}
		}
		out = append(out, b.String())
	}
}

// hasKey reports whether m has key k.
func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
