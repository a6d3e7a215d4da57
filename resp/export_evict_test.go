package resp

// HumanBytes formats n as Redis's bytesToHuman, for the tests of INFO.
var HumanBytes = humanBytes

// PlantUncheckedMemory plants a bug: the server admits every command
// without checking maxmemory. The differential test shows it is caught.
func (s *Server) PlantUncheckedMemory() { s.mem.unchecked.Store(true) }
