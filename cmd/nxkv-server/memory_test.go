package main

import (
	"strings"
	"testing"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/resp"
)

// TestMemoryDirectives: maxmemory, maxmemory-policy and maxmemory-samples
// from the configuration (file, then flags) reach the server's budget; a
// bad value is redis-server's fatal configuration error, naming the line.
func TestMemoryDirectives(t *testing.T) {
	cfg, err := parseArgs([]string{"-", "--maxmemory-samples", "9"}, strings.NewReader(
		"port 0\nmaxmemory 100mb\nmaxmemory-policy ALLKEYS-LFU\nmaxmemory-eviction-tenacity 20\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := resp.New(resp.Options{})
	defer s.Close()
	if err := apply(s, cfg); err != nil {
		t.Fatal(err)
	}
	if st := s.Budget().Stats(); st.Max != 100<<20 || st.Policy != engine.AllKeysLFU || st.Samples != 9 {
		t.Fatalf("budget %+v", st)
	}
	for conf, want := range map[string]string{
		"port 0\nmaxmemory bla\n":         "at line 2\n>>> 'maxmemory bla'\nargument must be a memory value",
		"maxmemory-policy bla\n":          "at line 1\n>>> 'maxmemory-policy bla'\nargument(s) must be one of the following: volatile-lru,",
		"port 0\n\nmaxmemory-samples 0\n": "at line 3\n>>> 'maxmemory-samples 0'\nargument must be between 1 and 2147483647 inclusive",
		"maxmemory 1 2\n":                 "at line 1\n>>> 'maxmemory 1 2'\nwrong number of arguments",
	} {
		cfg, err := parseArgs([]string{"-"}, strings.NewReader(conf))
		if err == nil {
			s := resp.New(resp.Options{})
			err = apply(s, cfg)
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***") {
			t.Errorf("config %q: error %v, want it to contain %q", conf, err, want)
		}
	}
}
