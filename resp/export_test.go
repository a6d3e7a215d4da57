package resp

// PlantUnlockedScripts makes s run scripts without their atomic section (a
// planted bug for the linearizability test).
func PlantUnlockedScripts(s *Server) { s.unlockedScripts = true }
