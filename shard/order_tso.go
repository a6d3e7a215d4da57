//go:build (amd64 || 386) && !nxkv_lockedreads

package shard

// LockFreeReads reports whether Peek and Lookup read without the lock on
// this processor. They do where the processor keeps loads in program order
// with other loads and stores with other stores (x86's total store order),
// which is what a sequence-word read needs: a reader's copy of an entry is
// taken before its second load of the word, and a writer's changes become
// visible after the word turns odd. Go's compiler keeps memory operations
// in program order around atomic ones. Elsewhere see order_weak.go.
const LockFreeReads = true
