//go:build !unix

package main

import "time"

// cpuTime and childrenDoneCPU are zero where getrusage does not exist: the
// CPU figures of the expiry workload and the load report then read zero.
func cpuTime() time.Duration { return 0 }

func childrenDoneCPU() time.Duration { return 0 }
