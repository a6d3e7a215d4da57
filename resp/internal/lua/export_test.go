package lua

// PlantGreedyLazy makes the pattern quantifier '-' greedy until undo is
// called (a planted bug for the differential pattern test).
func PlantGreedyLazy() (undo func()) {
	plantGreedyLazy = true
	return func() { plantGreedyLazy = false }
}
