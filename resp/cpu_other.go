//go:build !unix

package resp

// cpuSeconds reports no CPU time where getrusage does not exist: INFO cpu
// shows zeros.
func cpuSeconds() (sys, user float64) { return 0, 0 }
