//go:build linux

package main

// The test suites of three lock clients nobody here wrote, run unmodified
// against nxkv-server: bsm/redislock (which dials 127.0.0.1:6379),
// go-redsync/redsync's root package (which starts "redis-server -" from
// PATH through its tempredis helper, on ports 51200-51247 and unix
// sockets, with redigo, go-redis v6/v7/v8/v9 and rueidis pools), and
// redis/rueidis's lock package, rueidislock (127.0.0.1:6379, database 10),
// whose waiters wake on client-side caching's invalidations by default.
//
// Each suite is downloaded at its pinned version through the Go module
// proxy, copied out of the module cache, compiled as is, and run in a
// network namespace of its own when the machine allows it (root, or
// unprivileged user namespaces), so that port 6379 and the suite's ports are
// free whatever else runs here; without one, redislock's suite needs
// 127.0.0.1:6379 free and the test fails saying so. Every server is started
// with NXKV_DIE_WITH_PARENT=1 and every suite process dies with its parent,
// so a crashed run leaves no server behind; the test also checks that no
// nxkv-server outlives it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// The pinned versions: those the bench compares against.
const (
	redislockModule  = "github.com/bsm/redislock"
	redislockVersion = "v0.9.4"
	redsyncModule    = "github.com/go-redsync/redsync/v4"
	redsyncVersion   = "v4.18.1"
	rueidisModule    = "github.com/redis/rueidis"
	rueidisVersion   = "v1.0.79"
)

// childEnv marks the re-executed test binary that runs a suite inside the
// network namespace; the other peerChild* variables carry its job.
const (
	childEnv        = "NXKV_PEER_CHILD"
	childServer     = "NXKV_PEER_SERVER"      // nxkv-server to start on 127.0.0.1:6379, if set
	childSuite      = "NXKV_PEER_SUITE"       // the compiled suite
	childSuiteDir   = "NXKV_PEER_SUITE_DIR"   // its working directory
	childNetns      = "NXKV_PEER_NETNS"       // "1": bring up loopback first
	childPathPrefix = "NXKV_PEER_PATH_PREFIX" // prepended to PATH (redis-server = nxkv-server)
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "1":
		os.Exit(peerChild())
	case "crash":
		crashChild()
	}
	os.Exit(m.Run())
}

// TestRedislockSuite runs bsm/redislock's own tests (14 tests and 3
// examples) against nxkv-server on 127.0.0.1:6379.
func TestRedislockSuite(t *testing.T) {
	out := runSuite(t, redislockModule, redislockVersion, ".", true)
	top, _ := countResults(out)
	if top != 17 {
		t.Fatalf("redislock: %d top-level tests and examples passed, want 17", top)
	}
	t.Logf("redislock %s: %d of 17 passed against nxkv-server", redislockVersion, top)
}

// TestRedsyncSuite runs go-redsync/redsync's root-package tests (15 tests,
// 80 subtests over six client pools) with nxkv-server as redis-server.
func TestRedsyncSuite(t *testing.T) {
	out := runSuite(t, redsyncModule, redsyncVersion, ".", false)
	top, sub := countResults(out)
	if top < 15 || sub < 80 {
		t.Fatalf("redsync: %d tests and %d subtests passed, want 15 and 80", top, sub)
	}
	t.Logf("redsync %s: %d tests and %d subtests passed against nxkv-server", redsyncVersion, top, sub)
}

// TestRueidislockSuite runs rueidis's rueidislock tests (22 tests, 102
// subtests: each locker with client-side caching, in the tracking modes
// with and without NOLOOP, and polling with SET PX) against nxkv-server on
// 127.0.0.1:6379, database 10. Its waiters with caching on wake only on
// the invalidation of the lock's key, so this is a test of CLIENT TRACKING
// (OPTOUT, NOLOOP, keys read inside scripts, FLUSHDB's null invalidation).
func TestRueidislockSuite(t *testing.T) {
	out := runSuite(t, rueidisModule, rueidisVersion, "./rueidislock", true)
	top, sub := countResults(out)
	if top != 22 || sub != 102 {
		t.Fatalf("rueidislock: %d tests and %d subtests passed, want 22 and 102", top, sub)
	}
	t.Logf("rueidislock %s: %d tests and %d subtests passed against nxkv-server", rueidisVersion, top, sub)
}

var (
	topPass = regexp.MustCompile(`(?m)^--- PASS: `)
	subPass = regexp.MustCompile(`(?m)^\s+--- PASS: `)
	anyFail = regexp.MustCompile(`(?m)^\s*--- FAIL: `)
)

// countResults counts the passed top-level tests and subtests in go test -v
// output.
func countResults(out string) (top, sub int) {
	return len(topPass.FindAllString(out, -1)), len(subPass.FindAllString(out, -1))
}

// requireNetwork reports a failure to fetch modules: a failure in CI
// (NXKV_REQUIRE_REDIS=1), a loud skip elsewhere.
func requireNetwork(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("NXKV_REQUIRE_REDIS") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf("SKIPPED (set NXKV_REQUIRE_REDIS=1 to fail instead): "+format, args...)
}

// goTool returns the go command.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	t.Fatal("the go command is not on PATH")
	return ""
}

// runSuite downloads module at version, compiles the tests of its package
// pkg ("." or "./sub") and runs them, and returns their output after
// checking they passed and left no server running. port6379 starts
// nxkv-server on 127.0.0.1:6379 for suites that dial it.
func runSuite(t *testing.T, module, version, pkg string, port6379 bool) string {
	if testing.Short() {
		t.Skip("the peer suites take minutes; skipped with -short")
	}
	goBin := goTool(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	server := filepath.Join(bin, "redis-server")
	build := exec.Command(goBin, "build", "-o", server, ".")
	if raceEnabled {
		build.Args = append(build.Args[:2], append([]string{"-race"}, build.Args[2:]...)...)
	}
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building nxkv-server: %v\n%s", err, out)
	}

	dl := exec.Command(goBin, "mod", "download", "-json", module+"@"+version)
	raw, err := dl.Output()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(raw, &info)
	if err != nil || info.Dir == "" {
		requireNetwork(t, "go mod download %s@%s: %v %s", module, version, err, info.Error)
	}
	src := filepath.Join(tmp, "src")
	if err := copyTree(info.Dir, src); err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(tmp, "suite.test")
	compile := exec.Command(goBin, "test", "-c", "-o", suite, pkg)
	compile.Dir = src
	compile.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	if out, err := compile.CombinedOutput(); err != nil {
		requireNetwork(t, "compiling %s@%s's tests: %v\n%s", module, version, err, out)
	}

	// The suites are other people's tests, and some time their locks in
	// tens of milliseconds (redislock's example sleeps 50 ms into a 100 ms
	// lock; a rueidislock test races its lock's own timer against its
	// context's deadline): on a loaded machine, with a race-enabled server,
	// one can miss. A failed suite runs once more, after its failure is
	// logged; it must pass then. Race reports and servers left running are
	// never retried.
	for attempt := 1; ; attempt++ {
		text, failed := runSuiteOnce(t, module, version, server, src, pkg, bin, tmp, port6379)
		if !failed || t.Failed() {
			return text
		}
		if attempt == 2 {
			t.Fatalf("%s@%s against nxkv-server failed twice; the second run:\n%s", module, version, tail(text, 200))
		}
		t.Logf("%s@%s against nxkv-server failed; running it once more. The failed run's end:\n%s", module, version, tail(text, 60))
	}
}

// runSuiteOnce runs a compiled suite once; failed reports a failed test
// (race reports and servers left running fail t at once).
func runSuiteOnce(t *testing.T, module, version, server, src, pkg, bin, tmp string, port6379 bool) (text string, failed bool) {
	suite := filepath.Join(tmp, "suite.test")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	suiteDir := filepath.Join(src, pkg)
	cmd.Env = append(os.Environ(), childEnv+"=1", childSuite+"="+suite, childSuiteDir+"="+suiteDir,
		childPathPrefix+"="+bin, "NXKV_DIE_WITH_PARENT=1")
	if port6379 {
		cmd.Env = append(cmd.Env, childServer+"="+server)
	}
	raceDir := filepath.Join(tmp, "race")
	_ = os.RemoveAll(raceDir)
	if raceEnabled {
		// Race reports of the servers (whose output the suites discard) go
		// to files, checked below.
		_ = os.MkdirAll(raceDir, 0o755)
		cmd.Env = append(cmd.Env, "GORACE=log_path="+filepath.Join(raceDir, "report"))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	ns := netnsAttr()
	cmd.SysProcAttr.Cloneflags = ns.Cloneflags
	cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings = ns.UidMappings, ns.GidMappings
	cmd.Env = append(cmd.Env, childNetns+"=1")
	err := cmd.Start()
	if err != nil {
		// No network namespace here: run on the machine's loopback.
		t.Logf("no network namespace (%v): running on the host's loopback", err)
		if port6379 {
			if l, lerr := net.Listen("tcp", "127.0.0.1:6379"); lerr != nil {
				t.Fatalf("%s's suite dials 127.0.0.1:6379, which is in use here (%v; Debian's redis-server package starts a daemon there), and no network namespace could be made (%v): stop the process on 6379, or run where unprivileged user namespaces are allowed or as root", module, lerr, err)
			} else {
				l.Close()
			}
		}
		cmd = exec.Command(cmd.Path, cmd.Args[1:]...)
		cmd.Env = append(os.Environ(), childEnv+"=1", childSuite+"="+suite, childSuiteDir+"="+suiteDir,
			childPathPrefix+"="+bin, "NXKV_DIE_WITH_PARENT=1")
		if port6379 {
			cmd.Env = append(cmd.Env, childServer+"="+server)
		}
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	text = out.String()
	if reports, _ := filepath.Glob(filepath.Join(raceDir, "report*")); len(reports) > 0 {
		for _, r := range reports {
			data, _ := os.ReadFile(r)
			t.Errorf("race detector report from nxkv-server (%s):\n%s", r, data)
		}
	}
	if left := serversRunning(server); len(left) > 0 {
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("nxkv-server processes left running after the suite: %v (killed)", left)
	}
	if err != nil || anyFail.MatchString(text) {
		return fmt.Sprintf("(%v)\n%s", err, text), true
	}
	return text, false
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// serversRunning returns the PIDs of processes running the binary at path.
func serversRunning(path string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.TrimSuffix(exe, " (deleted)") == path {
			pids = append(pids, pid)
		}
	}
	return pids
}

// copyTree copies the module directory from (read-only in the module cache)
// to a writable directory, file contents unchanged.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// peerChild runs inside the network namespace: loopback up, nxkv-server on
// 6379 if asked, then the suite; it returns the suite's exit code.
func peerChild() int {
	if os.Getenv(childNetns) == "1" {
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, "peer child: bringing up loopback:", err)
			return 2
		}
	}
	if server := os.Getenv(childServer); server != "" {
		srv := exec.Command(server, "--port", "6379", "--bind", "127.0.0.1")
		srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdout, _ := srv.StdoutPipe()
		srv.Stderr = os.Stderr
		if err := srv.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "peer child: starting nxkv-server:", err)
			return 2
		}
		defer func() {
			_ = srv.Process.Signal(syscall.SIGTERM)
			_ = srv.Wait()
		}()
		if err := waitReady(stdout); err != nil {
			fmt.Fprintln(os.Stderr, "peer child: nxkv-server:", err)
			return 2
		}
		if err := isNxkv("127.0.0.1:6379"); err != nil {
			fmt.Fprintln(os.Stderr, "peer child: the server on 127.0.0.1:6379 is not the nxkv-server just started:", err)
			return 2
		}
	}
	suite := exec.Command(os.Getenv(childSuite), "-test.v", "-test.count=1", "-test.timeout=15m")
	suite.Dir = os.Getenv(childSuiteDir)
	suite.Env = append(os.Environ(), "PATH="+os.Getenv(childPathPrefix)+string(os.PathListSeparator)+os.Getenv("PATH"))
	suite.Stdout, suite.Stderr = os.Stdout, os.Stderr
	suite.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := suite.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "peer child:", err)
		return 2
	}
	return 0
}

// isNxkv checks that the server at addr is nxkv-server (INFO server
// reports nxkv_server:1), so a suite never runs against another server
// that held the port.
func isNxkv(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	n, _ := io.ReadAtLeast(c, buf, 1)
	if !bytes.Contains(buf[:n], []byte("nxkv_server:1")) {
		return fmt.Errorf("INFO server says %q", buf[:min(n, 200)])
	}
	return nil
}

// waitReady reads the server's log until its ready line, then keeps
// draining it.
func waitReady(r io.Reader) error {
	sc := bufio.NewScanner(r)
	ready := make(chan error, 1)
	go func() {
		found := false
		for sc.Scan() {
			if !found && strings.Contains(sc.Text(), "Ready to accept connections") {
				found = true
				ready <- nil
			}
		}
		if !found {
			ready <- errors.New("exited before it was ready")
		}
	}()
	select {
	case err := <-ready:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("not ready after 30 s")
	}
}

// netnsAttr returns the attributes that start a child in a new network
// namespace: as root directly, otherwise inside a user namespace mapping
// the caller to root.
func netnsAttr() *syscall.SysProcAttr {
	if os.Geteuid() == 0 {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	}
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
}

// loopbackUp brings up the loopback interface of the current (new) network
// namespace.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: name[16], then flags (short)
	copy(ifr[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	flags := (*uint16)(unsafe.Pointer(&ifr[16]))
	*flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	return nil
}

// TestCrashLeavesNoServer: a process that started nxkv-server with
// NXKV_DIE_WITH_PARENT=1 (as the suites' servers are) and then dies without
// stopping it leaves no server behind; without the variable the server
// would outlive it, which shows the check can fail.
func TestCrashLeavesNoServer(t *testing.T) {
	tmp := t.TempDir()
	server := filepath.Join(tmp, "nxkv-server")
	if out, err := exec.Command(goTool(t), "build", "-o", server, ".").CombinedOutput(); err != nil {
		t.Fatalf("building nxkv-server: %v\n%s", err, out)
	}
	crash := func(die bool) (pid int, gone bool) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=crash", childServer+"="+server,
			childSuiteDir+"="+filepath.Join(tmp, "s.sock"), "NXKV_DIE_WITH_PARENT=0")
		if die {
			cmd.Env = append(cmd.Env, "NXKV_DIE_WITH_PARENT=1")
		}
		out, _ := cmd.Output()
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("crash child printed %q", out)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				return pid, true
			}
			time.Sleep(20 * time.Millisecond) // polling another process's exit
		}
		return pid, false
	}
	if pid, gone := crash(false); gone {
		t.Fatalf("without NXKV_DIE_WITH_PARENT the server %d died with its parent: the check proves nothing", pid)
	} else {
		_ = syscall.Kill(pid, syscall.SIGKILL) // the server this test started
		_ = os.Remove(filepath.Join(tmp, "s.sock"))
	}
	if pid, gone := crash(true); !gone {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("nxkv-server %d still running 5 s after its parent died (killed now)", pid)
	}
}

// crashChild starts nxkv-server on a unix socket, waits until it is ready,
// prints its PID and dies abruptly without stopping it.
func crashChild() {
	srv := exec.Command(os.Getenv(childServer), "--port", "0", "--unixsocket", os.Getenv(childSuiteDir))
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		os.Exit(2)
	}
	if err := waitReady(stdout); err != nil {
		os.Exit(2)
	}
	fmt.Println(srv.Process.Pid)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}
