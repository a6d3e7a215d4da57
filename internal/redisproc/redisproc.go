// Package redisproc starts and stops throwaway redis-server processes on
// loopback: the servers of the tests (through internal/redistest) and of the
// benchmark suite. A server listens on a free 127.0.0.1 port with
// persistence off, dies with its parent (Pdeathsig), and is stopped by PID.
package redisproc

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is a running redis-server. Its methods are safe for concurrent use.
type Server struct {
	Addr string // host:port

	mu  sync.Mutex
	cmd *exec.Cmd // guarded by mu; nil once killed
}

// Start launches bin (a redis-server binary) on a free loopback port,
// trying a few ports, and returns once it answers PING. args go first on the
// command line, so a config file may lead them (Sentinel:
// Start(bin, conf, "--sentinel")); cluster options are fine too. The caller
// must Kill the server.
func Start(bin string, args ...string) (*Server, error) {
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			last = err
			continue
		}
		s, err := launch(bin, port, args)
		if err != nil {
			last = err
			continue
		}
		return s, nil
	}
	return nil, fmt.Errorf("redisproc: could not start %s: %w", bin, last)
}

// Kill stops the server with SIGKILL and waits for it; it is idempotent.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// PID returns the server's process id, or 0 once killed.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func launch(bin string, port int, args []string) (*Server, error) {
	args = append(slices.Clip(args),
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "yes",
		"--loglevel", "warning",
		"--daemonize", "no",
	)
	cmd := exec.Command(bin, args...)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	go func() { // drain the log so the server never blocks on a full pipe
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	// Polling is the only way to learn when a separate process listens.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if ping(s.Addr) == nil {
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Kill()
	return nil, fmt.Errorf("redis-server on port %d did not answer PING", port)
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
