package main

import (
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
)

// TestMain fails the package when a workload leaves a goroutine behind
// (peers, clients, reapers and servers must all be closed after a run) or a
// redis-server running, and says in one line how many tests were skipped for
// lack of redis-server.
func TestMain(m *testing.M) { redistest.Main(m) }
