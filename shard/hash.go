package shard

import (
	"math/rand/v2"
	"unsafe"
)

// The hash is the Go runtime's own memory hash, the one its maps use: AES
// instructions where the CPU has them, seeded per Map with a random value,
// so keys cannot be chosen to collide. hash/maphash wraps the same function
// in a call the inliner refuses (it splits long inputs), which costs about
// 2 ns an operation, a tenth of a whole lookup; so the runtime function is
// called directly. The Go runtime keeps this name and signature for the
// packages that link to it (its source promises so); TestHash checks the
// properties the tables rely on.
//
//go:linkname memhash runtime.memhash
//go:noescape
func memhash(p unsafe.Pointer, seed, n uintptr) uintptr

// hashString hashes s with seed.
func hashString(seed uint64, s string) uint64 {
	return uint64(memhash(unsafe.Pointer(unsafe.StringData(s)), uintptr(seed), uintptr(len(s))))
}

// newSeed returns a random hash seed.
func newSeed() uint64 { return rand.Uint64() | 1 }
