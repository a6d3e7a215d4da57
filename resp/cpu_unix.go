//go:build unix

package resp

import "syscall"

// cpuSeconds returns the process's system and user CPU time in seconds,
// for INFO cpu.
func cpuSeconds() (sys, user float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6, float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
}
