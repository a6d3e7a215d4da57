package redistest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Children returns the PIDs of redis-server processes whose parent is this
// process, read from /proc (empty where /proc is missing).
func Children() []int {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		comm, ppid, ok := parseStat(string(raw))
		if !ok || comm != "redis-server" || ppid != self {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSuffix(filepath.Dir(p), "/"), "/proc/"))
		pids = append(pids, pid)
	}
	return pids
}

// parseStat returns the command name and parent PID of a /proc/PID/stat
// line, "pid (comm) state ppid ...". comm may hold spaces and parentheses,
// so it ends at the last ')'.
func parseStat(s string) (comm string, ppid int, ok bool) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, false
	}
	return s[open+1 : end], ppid, true
}
