//go:build amd64 && !race

package shard

// Unlock unlocks the shard, publishing the writes made under the lock.
//
// On x86 an ordinary store is a release: stores become visible in program
// order, so a reader that loads the new, even word also sees every write
// of the section, and Go's compiler does not move stores past one another.
// A plain increment is therefore all a sequence word needs, where an
// atomic add would also drain the store buffer, about a tenth of a Set.
// Only the holder writes the word while it is odd, so the increment cannot
// lose an update. A shard where writers sleep takes unlockContended
// instead (see lock.go). The race detector cannot know this reasoning, so
// race builds take unlock_other.go.
func (s *Table) Unlock() {
	if s.state.Load() != 0 {
		s.unlockContended()
		return
	}
	s.seq++
}
