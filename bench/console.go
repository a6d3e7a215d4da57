package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// console is where a run speaks: the report goes to out as it is measured,
// and a status line ("expiry: round 3 of 6") to status. On a terminal the
// status line is rewritten in place and erased before report text is
// written; elsewhere (a log, a pipe) a status line is printed at most every
// statusEvery, so that logs stay short. Its methods are safe for concurrent
// use.
type console struct {
	out    io.Writer
	status io.Writer
	tty    bool

	mu    sync.Mutex
	shown bool      // guarded by mu; a status line is on the terminal
	last  time.Time // guarded by mu; when the last status line was printed
	msg   string    // guarded by mu; the last status message
}

const statusEvery = 10 * time.Second

func newConsole(out, status io.Writer) *console {
	c := &console{out: out, status: status}
	if f, ok := status.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			c.tty = true
		}
	}
	return c
}

// Write writes report text, erasing the status line first.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.eraseLocked()
	return c.out.Write(p)
}

func (c *console) eraseLocked() {
	if c.shown {
		fmt.Fprint(c.status, "\r\033[K")
		c.shown = false
	}
}

// setStatus shows what the run is doing now.
func (c *console) setStatus(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msg = msg
	if c.tty {
		if len(msg) > 110 {
			msg = msg[:107] + "..."
		}
		fmt.Fprintf(c.status, "\r\033[K%s", msg)
		c.shown = true
		return
	}
	if time.Since(c.last) >= statusEvery {
		fmt.Fprintf(c.status, "[%s] %s\n", time.Now().Format("15:04:05"), msg)
		c.last = time.Now()
	}
}

// note prints a line on the status stream that must not be throttled (a
// server started, a peer skipped).
func (c *console) note(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.eraseLocked()
	fmt.Fprintf(c.status, "%s\n", strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}

// done erases the status line.
func (c *console) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.eraseLocked()
}

// active is the console of the running suite; nil in tests, which keeps
// the workloads quiet.
var active atomic.Pointer[console]

// progress shows a status message on the active console, if any.
func progress(format string, args ...any) {
	if c := active.Load(); c != nil {
		c.setStatus(format, args...)
	}
}

// notice prints a line on the active console's status stream, if any.
func notice(format string, args ...any) {
	if c := active.Load(); c != nil {
		c.note(format, args...)
	}
}
