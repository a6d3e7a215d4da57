package resp

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
