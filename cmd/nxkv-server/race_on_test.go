//go:build race

package main

// raceEnabled reports whether the tests run under the race detector; the
// server the peer suites use is then built with it too.
const raceEnabled = true
