//go:build linux

package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  config
		err   string
	}{
		{"defaults", nil, "", config{port: 6379}, ""},
		{"flags", []string{"--port", "7000", "--bind", "127.0.0.1", "::1", "--requirepass", "s e"}, "",
			config{port: 7000, binds: []string{"127.0.0.1", "::1"}, password: "s e"}, ""},
		{"stdin like tempredis", []string{"-"}, "port 0\nunixsocket /tmp/x.sock\nsave \"\"\nappendonly no\n",
			config{port: 0, unixSocket: "/tmp/x.sock"}, ""},
		{"stdin then flags", []string{"-", "--port", "7001"}, "port 0\n", config{port: 7001}, ""},
		{"comments and quotes", []string{"-"}, "# a comment\n  requirepass 'p w'\n", config{port: 6379, password: "p w"}, ""},
		{"unknown directive", []string{"-"}, "oops borked\n", config{}, "Bad directive or wrong number of arguments"},
		{"bad port", []string{"--port", "x"}, "", config{}, "Invalid port"},
		{"daemonize", []string{"--daemonize", "yes"}, "", config{}, "daemonize yes is not supported"},
		{"unbalanced", []string{"-"}, "requirepass \"x\n", config{}, "Unbalanced quotes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(tc.args, strings.NewReader(tc.stdin))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseArgs(%q) error = %v, want %q", tc.args, err, tc.err)
				}
				return
			}
			if err != nil || got.port != tc.want.port || got.unixSocket != tc.want.unixSocket ||
				got.password != tc.want.password || strings.Join(got.binds, ",") != strings.Join(tc.want.binds, ",") {
				t.Fatalf("parseArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
			}
		})
	}
}

// TestBinaryLikeTempredis starts the binary as redsync's tempredis does
// (config on stdin, ready line on stdout), talks to it, stops it with
// SIGTERM and checks it exits 0 and removes its unix socket.
func TestBinaryLikeTempredis(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "nxkv-server")
	if out, err := exec.Command(goTool(t), "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sock := filepath.Join(tmp, "redis.sock")
	cmd := exec.Command(bin, "-")
	cmd.Stdin = strings.NewReader("port 0\nunixsocket " + sock + "\nsave \"\"\n")
	stdout, _ := cmd.StdoutPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitReady(stdout); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING = %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	c.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("unix socket still there after exit: %v", err)
	}
}

// TestConfigSettable: the directives CONFIG SET changes are read in order
// (notify-keyspace-events, client-output-buffer-limit's several classes),
// and a value CONFIG SET would refuse is a fatal configuration error naming
// its line, as redis-server's is.
func TestConfigSettable(t *testing.T) {
	cfg, err := parseArgs([]string{"-", "--notify-keyspace-events", "KEx"},
		strings.NewReader("client-output-buffer-limit pubsub 64mb 16mb 60\ntracking-table-max-keys 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []setting{{name: "client-output-buffer-limit", value: "pubsub 64mb 16mb 60"},
		{name: "tracking-table-max-keys", value: "10"}, {name: "notify-keyspace-events", value: "KEx"}}
	if len(cfg.settings) != len(want) {
		t.Fatalf("settings = %+v, want %+v", cfg.settings, want)
	}
	for i, w := range want {
		if g := cfg.settings[i]; g.name != w.name || g.value != w.value {
			t.Fatalf("setting %d = %+v, want %+v", i, g, w)
		}
	}
	var stderr strings.Builder
	rc := run([]string{"-"}, strings.NewReader("port 0\nunixsocket "+t.TempDir()+"/s.sock\nnotify-keyspace-events KEQ\n"), io.Discard, &stderr)
	if rc != 1 || !strings.Contains(stderr.String(), "at line 3") || !strings.Contains(stderr.String(), "Invalid event class character") {
		t.Fatalf("run with a bad notify-keyspace-events = %d, %q; want 1 and the fatal error at line 3", rc, stderr.String())
	}
}

// TestBusyThresholdFromConfig: lua-time-limit and busy-reply-threshold in
// a configuration file set the server's busy-reply-threshold, as CONFIG SET
// does, and a negative one is a fatal error naming its line.
func TestBusyThresholdFromConfig(t *testing.T) {
	cfg, err := parseArgs([]string{"-", "--busy-reply-threshold", "250"}, strings.NewReader("lua-time-limit 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := resp.New(resp.Options{})
	defer s.Close()
	if err := apply(s, cfg); err != nil {
		t.Fatal(err)
	}
	c, err := s.Dial(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := redistest.NewConn(c).Do([]string{"config", "get", "lua-time-limit"})
	if want := "*2\r\n$14\r\nlua-time-limit\r\n$3\r\n250\r\n"; err != nil || string(r) != want {
		t.Fatalf("CONFIG GET lua-time-limit after the configuration = %q %v, want %q (the later directive)", r, err, want)
	}
	var stderr strings.Builder
	rc := run([]string{"-"}, strings.NewReader("port 0\nunixsocket "+t.TempDir()+"/s.sock\nlua-time-limit -1\n"), io.Discard, &stderr)
	if rc != 1 || !strings.Contains(stderr.String(), "at line 3") {
		t.Fatalf("run with lua-time-limit -1 = %d, %q; want 1 and the fatal error at line 3", rc, stderr.String())
	}
}
