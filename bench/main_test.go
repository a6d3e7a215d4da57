package main

import (
	"os"
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
)

// TestMain fails the package when a workload leaves a goroutine behind
// (peers, clients, reapers and servers must all be closed after a run) or a
// redis-server running, and says in one line how many tests were skipped for
// lack of redis-server.
//
// The suite starts nxkv-server by running its own binary with serveEnv set;
// under go test that binary is the test binary, which then serves.
func TestMain(m *testing.M) {
	if addr := os.Getenv(serveEnv); addr != "" {
		os.Exit(serveRESP(addr))
	}
	redistest.Main(m)
}
