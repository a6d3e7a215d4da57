package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a workload leaves a goroutine behind
// (peers, clients, reapers and servers must all be closed after a run).
// go-redis's reconnect loop for a killed server (pool.tryDial) sleeps a
// second between dials and only sees its closed pool on the next one, so the
// check gives goroutines up to 5 s to end rather than ignoring any.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		err := goleak.Find()
		for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			err = goleak.Find()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines leaked: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
