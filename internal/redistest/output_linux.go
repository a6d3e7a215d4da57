package redistest

import (
	"fmt"
	"os"
	"syscall"
)

// parentOutput opens the parent process's standard output when writing to
// it is both needed and safe: it is not where this process's own output
// already goes (a test binary run by hand, or go test in streaming mode),
// and it is a terminal or a pipe, never a file (another writer's file offset
// would overwrite the line). It returns nil otherwise.
func parentOutput() *os.File {
	path := fmt.Sprintf("/proc/%d/fd/1", os.Getppid())
	var parent, self syscall.Stat_t
	if syscall.Stat(path, &parent) != nil || syscall.Fstat(1, &self) != nil {
		return nil
	}
	if parent.Dev == self.Dev && parent.Ino == self.Ino {
		return nil
	}
	switch parent.Mode & syscall.S_IFMT {
	case syscall.S_IFCHR, syscall.S_IFIFO, syscall.S_IFSOCK:
	default:
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	return f
}
