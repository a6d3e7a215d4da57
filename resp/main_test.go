package resp_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// TestMain fails the package if a test leaks a goroutine or leaves a
// redis-server running, or if any command panicked other than the planted
// ones: the server contains a panic (the client's connection closes and
// everyone else is served), so without this check a test could pass over
// one.
func TestMain(m *testing.M) {
	redistest.Main(m, func(w io.Writer) int {
		ps := resp.UnexpectedPanics()
		for _, p := range ps {
			fmt.Fprintf(w, "FAIL: a command panicked during the tests: %s\n", p)
		}
		if len(ps) > 0 {
			return 1
		}
		return 0
	})
}
