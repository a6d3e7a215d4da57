//go:build !nxkv_testhooks

package engine

// afterLookup runs between an operation's lock-free lookup and the upgrade
// of its snapshot to the shard's lock. It does nothing; built with the tag
// nxkv_testhooks (hook_testhooks.go) it runs a test's function there, so a
// test can change the key inside that window deterministically.
func afterLookup() {}
