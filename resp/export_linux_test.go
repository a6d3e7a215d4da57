package resp

import "syscall"

// LoopWakeups returns how many times s's event loops have returned from
// epoll_wait.
func LoopWakeups(s *Server) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, lp := range s.loops {
		n += lp.wakeups.Load()
	}
	return n
}

// Loops returns how many event loops s runs (0 before its first socket
// connection); connections are spread over them in turn.
func Loops(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.loops)
}

// ShrinkSendBuffers sets the kernel send buffer of every connection s's
// event loops serve now to about n bytes, so that a test fills it with a
// few replies.
func ShrinkSendBuffers(s *Server, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lp := range s.loops {
		lp.mu.Lock()
		for fd := range lp.conns {
			_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, n)
		}
		lp.mu.Unlock()
	}
}
