package goredis

import "github.com/nxkv/nxkv/internal/lockkeys"

// slot returns key's Redis Cluster hash slot.
func slot(key string) int { return lockkeys.Slot(key) }

// FencePrefix starts the name of every fencing counter. It lies in the
// namespace lockapi reserves (lockapi.ReservedPrefix), so no lock key can
// collide with a counter.
const FencePrefix = lockkeys.FencePrefix

// FenceKey returns the name of key's fencing counter: FencePrefix, then a
// hash tag that puts it in key's Cluster slot, then key itself:
// "nxkv:fence:{"+tag+"}"+key. The tag is key's own hash tag when it has
// one ("{user:1}:lock" → "nxkv:fence:{user:1}{user:1}:lock"), and otherwise
// a short tag chosen to hash to key's slot ("orders" → a tag t with
// slot(t) == slot("orders")). Every key has a counter, distinct keys have
// distinct counters (the tag never contains '}', so key is recovered after
// the first '}'), and the counter always shares key's slot.
func FenceKey(key string) string { return lockkeys.Fence(key) }
