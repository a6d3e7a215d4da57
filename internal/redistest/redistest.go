// Package redistest starts throwaway redis-server processes for tests.
//
// A test that needs Redis calls Start; when no redis-server binary is on
// PATH the test is skipped with a clear message, unless the environment
// variable NXKV_REQUIRE_REDIS is set to 1 (as .ci/run does), in which case it
// fails: CI must never pass by skipping the differential tests.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the variable that turns a missing redis-server into a failure.
const RequireEnv = "NXKV_REQUIRE_REDIS"

// Server is a running redis-server bound to loopback.
type Server struct {
	Addr string // host:port
	cmd  *exec.Cmd
}

// Binary returns the redis-server path, or skips (fails under RequireEnv) t.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server not found on PATH and %s=1: %v", RequireEnv, err)
		}
		t.Skipf("redis-server not found on PATH; install it (apt-get install redis-server) to run this test")
	}
	return path
}

// Start launches a redis-server on a free loopback port with persistence off
// and registers its termination (by PID, SIGKILL) with t.Cleanup, which also
// runs when the test panics. It returns once the server answers PING. args
// go first on the command line, so a config file may lead them (Sentinel:
// Start(t, conf, "--sentinel")); cluster options are fine too.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin := Binary(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			lastErr = err
			continue
		}
		s, err := launch(bin, port, args)
		if err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(s.Kill)
		return s
	}
	t.Fatalf("redistest: could not start redis-server: %v", lastErr)
	return nil
}

// Kill stops the server with SIGKILL and waits for it; it is idempotent.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// PID returns the server's process id, or 0 once killed.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) == nil {
			return s, nil
		}
		if cmd.ProcessState != nil {
			break
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
