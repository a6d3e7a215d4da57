package resp

// This file holds MONITOR, as Redis's replicationFeedMonitors: a client
// that sends MONITOR receives, as a simple string, a line for every
// command the server runs from then on, in Redis's format
//
//	+1700000000.123456 [0 127.0.0.1:50732] "set" "k" "v"
//
// with the database and client address (or "lua" for a script's
// commands), each argument quoted as Redis's sdscatrepr quotes it. Lines
// come after the command ran, except EVAL's and EVALSHA's, which come
// before the commands of their script; queued commands show at EXEC; AUTH
// and HELLO's AUTH arguments show as "(redacted)"; administrative commands
// (CONFIG, MONITOR, CLIENT LIST, ...) are not shown. A monitor that does
// not read is closed at the pub/sub client class's output limits (Redis
// leaves monitors unbounded).

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// monitorState is the server's list of monitors.
type monitorState struct {
	mu   sync.Mutex
	list []*conn // guarded by mu, in order of MONITOR
	n    atomic.Int32
}

// cmdMonitor is MONITOR: refused inside a transaction, ignored (no reply)
// from a client that already monitors, as in Redis.
func cmdMonitor(x *call) {
	c := x.c
	if x.tx {
		x.w.errorReply("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.monitoring.Load() {
		return
	}
	m := &x.s.mon
	m.mu.Lock()
	c.monitoring.Store(true)
	m.list = append(m.list, c)
	m.n.Add(1)
	m.mu.Unlock()
	c.atClose(func() { x.s.stopMonitor(c) })
	x.w.simple("OK")
}

// stopMonitor removes c from the monitors (RESET, close).
func (s *Server) stopMonitor(c *conn) {
	m := &s.mon
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, o := range m.list {
		if o == c {
			m.list = append(m.list[:i:i], m.list[i+1:]...)
			m.n.Add(-1)
			break
		}
	}
	c.monitoring.Store(false)
}

// called runs after each command, as the end of Redis's call: its line
// goes to the monitors, and the keys it read are remembered for the
// client-side cache of its client (a script's caller for the script's
// commands). It runs inside the section that ran the command, if any.
func (s *Server) called(x *call, lua bool) {
	if s.mon.n.Load() != 0 && monitored(x.cmd) {
		s.feedMonitors(x, lua)
	}
	if x.c.trk != nil {
		s.trackingRemember(x)
	}
}

// monitored reports whether the line of cmd goes to monitors: not for
// commands flagged skip_monitor or admin.
func monitored(cmd *command) bool { return cmd.flags&(skipMonitor|admin) == 0 }

// feedMonitors sends the line of x's command to every monitor; lua marks
// a command a script called. It runs on the goroutine of x's client.
func (s *Server) feedMonitors(x *call, lua bool) {
	m := &s.mon
	if m.n.Load() == 0 {
		return
	}
	line := s.monitorLine(x, lua)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.list {
		r.deliver(line, x.c)
	}
}

// monitorLine formats x's command as Redis's replicationFeedMonitors.
func (s *Server) monitorLine(x *call, lua bool) []byte {
	now := s.now()
	b := make([]byte, 0, 64+16*len(x.args))
	b = append(b, '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := strconv.Itoa(now.Nanosecond() / 1000)
	for range 6 - len(us) {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(x.db), 10)
	b = append(b, ' ')
	switch {
	case lua:
		b = append(b, "lua"...)
	case x.c.unix:
		b = append(b, "unix:"...)
		b = append(b, s.unixSocket()...)
	default:
		b = append(b, x.c.nc.RemoteAddr().String()...)
	}
	b = append(b, "] "...)
	for i, a := range x.args {
		if i > 0 {
			b = append(b, ' ')
		}
		if x.redacted(i) {
			b = append(b, `"(redacted)"`...)
			continue
		}
		b = appendRepr(b, a)
	}
	return append(b, '\r', '\n')
}

// redacted reports whether argument i of x is one MONITOR must not show:
// AUTH's password (and user), and HELLO's AUTH arguments, once the
// command has read them (as Redis's redactClientCommandArgument).
func (x *call) redacted(i int) bool {
	if x.s.plantedPush == "monitor" {
		return false
	}
	for _, j := range x.redact {
		if j == i {
			return true
		}
	}
	return false
}

// appendRepr appends s quoted as Redis's sdscatrepr: in double quotes,
// with \\ \" \n \r \t \a \b escaped and other bytes outside printable
// ASCII as \xHH.
func appendRepr(b []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c >= ' ' && c <= '~' {
				b = append(b, c)
			} else {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(b, '"')
}
