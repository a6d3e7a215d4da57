package redistest

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxLogLines bounds the go-redis lines kept for a failure report; a test
// that kills a server makes clients log a reconnect every few milliseconds.
const maxLogLines = 200

// logCapture holds go-redis's log lines instead of printing them: a client
// whose server a test killed on purpose logs "connection refused" until it is
// closed, which buries the output of a run. The lines are printed only when
// a test failed, as evidence. It is safe for concurrent use.
type logCapture struct {
	mu      sync.Mutex
	lines   []string // guarded by mu; the first maxLogLines lines
	dropped int      // guarded by mu; lines beyond maxLogLines
}

// Printf implements go-redis's logging interface.
func (c *logCapture) Printf(_ context.Context, format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lines) < maxLogLines {
		c.lines = append(c.lines, line)
		return
	}
	c.dropped++
}

// writeTo prints the captured lines, if any, under a header saying why.
func (c *logCapture) writeTo(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lines) == 0 {
		return
	}
	fmt.Fprintf(w, "go-redis logged %d lines during the tests (shown because a test failed):\n", len(c.lines)+c.dropped)
	for _, l := range c.lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if c.dropped > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", c.dropped)
	}
}

// redisLog is the capture Main installed, nil before Main runs.
var redisLog *logCapture

// captureRedisLog routes go-redis's process-wide logger into a new
// logCapture.
func captureRedisLog() *logCapture {
	c := &logCapture{}
	redis.SetLogger(c)
	return c
}
