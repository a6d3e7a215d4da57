//go:build !linux

package resp

// Without epoll, every connection is served by a goroutine.

import "net"

type loop struct{}

func (s *Server) startLoops() []*loop   { return nil }
func (lp *loop) stop()                  {}
func (c *conn) detach(nc net.Conn) bool { return false }
func (lp *loop) add(c *conn)            {}
func (lp *loop) kick(c *conn)           {}
func (lp *loop) adopt(c *conn)          {}
func (c *conn) flushFD() bool           { return true }
func (c *conn) closeDetached()          {}
