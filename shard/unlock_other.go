//go:build !amd64 || race

package shard

import "sync/atomic"

// Unlock unlocks the shard, publishing the writes made under the lock. A
// shard where writers sleep takes unlockContended instead (see lock.go).
func (s *Table) Unlock() {
	if s.state.Load() != 0 {
		s.unlockContended()
		return
	}
	atomic.AddUint64(&s.seq, 1)
}
