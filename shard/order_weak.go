//go:build !(amd64 || 386) || nxkv_lockedreads

package shard

// LockFreeReads reports whether Peek and Lookup read without the lock on
// this processor. Here they do not: arm64 and the other weakly ordered
// processors may satisfy a reader's plain loads of an entry after its
// atomic load of the sequence word that is meant to validate them, and may
// make a writer's stores visible before the store that turns the word odd,
// so a copy torn by a writer could pass the check. Closing that needs load
// and store fences, which Go offers only through assembly. ReadVersion
// therefore reports every shard busy, and readers take the lock: slower,
// and as correct as the writers. The build tag nxkv_lockedreads selects this
// on x86 too, so that the tests can run these paths there.
const LockFreeReads = false
