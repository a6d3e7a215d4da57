package resp

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// PlantedPanic is the value the planted command panics with; the panics the
// package's tests expect carry it.
const PlantedPanic = "planted panic"

// unexpected collects every other panic a server of the tests recorded.
var unexpected struct {
	mu     sync.Mutex
	panics []string
}

func init() {
	// The planted command: it takes the atomic section of its key, writes
	// it, and panics while holding it.
	register(&command{name: "nxkv-test-panic", arity: 2, flags: write, fn: func(x *call) {
		key := x.key(1)
		x.atomic([]string{key}, func(st store) {
			st.Set(key, "partial")
			panic(PlantedPanic)
		})
	}})
	testPanicHook = func(p *commandPanic) {
		if strings.Contains(p.String(), PlantedPanic) {
			return
		}
		unexpected.mu.Lock()
		unexpected.panics = append(unexpected.panics, p.String())
		unexpected.mu.Unlock()
	}
}

// UnexpectedPanics returns the panics recorded by any server during the
// tests other than the planted ones.
func UnexpectedPanics() []string {
	unexpected.mu.Lock()
	defer unexpected.mu.Unlock()
	return append([]string(nil), unexpected.panics...)
}

// PlantLuaPanic gives the scripts of s a global Go function name that
// panics with PlantedPanic (a planted defect of the Lua runtime's
// builtins), until undo is called.
func PlantLuaPanic(s *Server, name string) (undo func()) {
	return s.scripts.rt.PlantPanic(name, PlantedPanic)
}

// PlantUnlockedScripts makes s run scripts without their atomic section (a
// planted bug for the linearizability test).
func PlantUnlockedScripts(s *Server) { s.unlockedScripts = true }

// PlantPushBug plants a bug in one push feature of s ("pubsub": PUBLISH
// skips pattern subscribers; "tracking": NOLOOP is ignored; "keyspace":
// APPEND is notified as "set"; "monitor": AUTH's password is shown), so a
// test can show that the differential test catches it.
func PlantPushBug(s *Server, feature string) { s.plantedPush = feature }

// Blocks reports whether the command named (as CommandNames names it) may
// block its client.
func Blocks(name string) bool {
	c := lookupName([]byte(name))
	return c != nil && c.flags&blocking != 0
}

// PlantLIFOWaiters plants a bug for the blocking pops' checks: a ready key
// serves its waiters newest first.
func PlantLIFOWaiters(s *Server) { s.lifoWaiters = true }

// fakeConn is a net.Conn reading a fixed input and recording what is
// written.
type fakeConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (f *fakeConn) Read(p []byte) (int, error)       { return f.in.Read(p) }
func (f *fakeConn) Write(p []byte) (int, error)      { return f.out.Write(p) }
func (f *fakeConn) Close() error                     { return nil }
func (f *fakeConn) LocalAddr() net.Addr              { return memAddr{} }
func (f *fakeConn) RemoteAddr() net.Addr             { return memAddr{} }
func (f *fakeConn) SetDeadline(time.Time) error      { return nil }
func (f *fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (f *fakeConn) SetWriteDeadline(time.Time) error { return nil }

// Serve runs one connection of s over input on the calling goroutine
// until the input ends or the server closes the connection, and returns
// what the server wrote.
func Serve(s *Server, input []byte) []byte {
	fc := &fakeConn{in: bytes.NewReader(input)}
	c := newConn(s, fc)
	c.serve()
	return fc.out.Bytes()
}

// Parse feeds input to a request reader in chunks of the given size and
// returns the requests parsed, the first error, and the largest read buffer
// it allocated.
func Parse(input []byte, chunk int) (reqs [][]string, err error, maxBuf int) {
	r := newReader(&chunkReader{b: input, n: chunk})
	for {
		args, err := r.next()
		maxBuf = max(maxBuf, cap(r.buf))
		if err != nil {
			return reqs, err, maxBuf
		}
		req := make([]string, len(args))
		for i, a := range args {
			req[i] = string(a)
		}
		reqs = append(reqs, req)
	}
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// IsProtocolError reports whether err is a protocol violation.
func IsProtocolError(err error) bool {
	_, ok := err.(protoError)
	return ok
}

// SetScriptLimit stops s's scripts after d instead of five seconds.
func SetScriptLimit(s *Server, d time.Duration) { s.scriptLimit = d }

// SetScriptMemory stops s's scripts once they grow the heap by n bytes
// instead of 1 GiB.
func SetScriptMemory(s *Server, n uint64) { s.scriptMemory = n }

// CommandNames returns every command of the table, subcommands as
// "container|sub".
func CommandNames() []string {
	var names []string
	for _, n := range commandNames() {
		c := commandTable[n]
		if c.subs == nil {
			names = append(names, n)
			continue
		}
		for sub := range c.subs {
			names = append(names, n+"|"+sub)
		}
	}
	return names
}

// PlantCommandBug declares the command name in the group "generic" and
// without the fast flag until undo is called (a planted bug for the
// command table's differential test).
func PlantCommandBug(name string) (undo func()) {
	c := commandTable[name]
	group, flags := c.group, c.flags
	c.group, c.flags = "generic", c.flags&^fast
	return func() { c.group, c.flags = group, flags }
}
