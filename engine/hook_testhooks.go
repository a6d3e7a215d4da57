//go:build nxkv_testhooks

package engine

// lookupHook, when set, runs in afterLookup (see hook.go). Only the tests
// built with the tag nxkv_testhooks set it, from one goroutine.
var lookupHook func()

func afterLookup() {
	if lookupHook != nil {
		lookupHook()
	}
}
