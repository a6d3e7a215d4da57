package engine

// This file holds the engine's public types, constants and errors.

import (
	"errors"
	"time"

	"github.com/nxkv/nxkv/clock"
)

// NoExpiry is the TTL PTTL reports for a key that exists and has no deadline.
const NoExpiry time.Duration = -1

// ReservedPrefix starts the keys nxkv's lock clients keep their
// bookkeeping in (fencing counters, semaphore slots, read-write lock
// readers; lockapi refuses lock keys under it). The engine treats them as
// such: Len, Range, Scan and Flush leave them out (see "Reserved keys" in
// the package doc), and an IncrBy of a reserved key never repeats a value
// (see "Fencing").
const ReservedPrefix = "nxkv:"

// Reserved reports whether key lies under ReservedPrefix.
func Reserved(key string) bool {
	return len(key) >= len(ReservedPrefix) && key[:len(ReservedPrefix)] == ReservedPrefix
}

var (
	// ErrInvalidTTL is returned when a TTL <= 0 is passed where Redis rejects
	// it (SET PX, SET NX PX, compare-and-pexpire), or when a deadline
	// computed from now and a TTL overflows. Nothing changes.
	ErrInvalidTTL = errors.New("engine: invalid expire time")
	// ErrSyntax is returned for conflicting SetArgs or ExpireCond (as Redis
	// replies "ERR syntax error"). Nothing changes.
	ErrSyntax = errors.New("engine: syntax error")
	// ErrNotInteger is returned by IncrBy when the stored value is not a
	// base-10 64-bit integer. Nothing changes.
	ErrNotInteger = errors.New("engine: value is not an integer or out of range")
	// ErrOverflow is returned by IncrBy when the result would overflow int64.
	// Nothing changes.
	ErrOverflow = errors.New("engine: increment or decrement would overflow")
)

// Options configures an Engine. The zero value selects every default.
type Options struct {
	// Shards is the number of shards, rounded up to a power of two;
	// 0 selects the next power of two at or above 8*GOMAXPROCS, at least 16.
	//
	// Reads take no lock, so any number of cores read any keys without
	// slowing each other. Writes lock their key's shard: writers on
	// different cores contend only when their keys share a shard, and pass
	// the shard's cache lines between them when they alternate on one (a
	// writer that finds its shard held sleeps after a brief spin, so that
	// one core at a time writes with its lines local). More shards spread
	// writers further and shorten the pause of a shard's index doubling; an empty shard costs about 3 KB (its first
	// index and entry array; its timer wheel comes with its first TTL).
	Shards int
	// Clock is the time source for deadlines and the reaper; nil (or
	// github.com/benbjohnson/clock's clock.New()) selects the fast real
	// clock, read through the monotonic clock. A fake clock, such as a
	// benbjohnson *clock.Mock, makes expiry deterministic in tests; see the
	// package doc for how the engine reads it.
	Clock clock.Clock
	// Tick is the timer wheel's resolution; 0 selects about one millisecond.
	// The reaper reclaims an expired key within about two ticks of its
	// deadline.
	Tick time.Duration
	// MaxMemory bounds the bytes the engine holds, as it counts them (see
	// "Memory bound" in the package doc), as Redis's maxmemory; 0 (or
	// less) selects no bound. A write that finds the engine over the bound
	// first evicts keys by Policy, or fails with ErrOOM.
	MaxMemory int64
	// Policy is what a write does at the bound (Redis's
	// maxmemory-policy); the zero value is NoEviction, which refuses it
	// with ErrOOM.
	Policy Policy
	// Samples is how many keys eviction compares per choice, as Redis's
	// maxmemory-samples; 0 selects DefaultSamples. More samples choose
	// closer to the policy's ideal, at more cost per eviction.
	Samples int
	// Budget, if not nil, is a memory bound the engine shares with the
	// other engines given it (see Budget), whose bound, policy and samples
	// apply instead of MaxMemory, Policy and Samples, which must then be
	// zero. A budget with no bound yet (NewBudget(0, ...)) makes an engine
	// that counts its keys, so that a bound set later (Budget.SetMax)
	// applies to it; an engine created without a budget never has one.
	Budget *Budget
}

// Condition selects when SetWith writes, as Redis SET's NX, XX, IFEQ and IFNE.
type Condition uint8

const (
	// Always writes unconditionally (plain SET).
	Always Condition = iota
	// IfAbsent writes only if the key does not exist (NX).
	IfAbsent
	// IfPresent writes only if the key exists (XX).
	IfPresent
	// IfEqual writes only if the key exists and holds SetArgs.Match (IFEQ);
	// it never creates a key.
	IfEqual
	// IfNotEqual writes if the key is absent or holds a value other than
	// SetArgs.Match (IFNE).
	IfNotEqual
)

// SetArgs are the options of SetWith, mirroring Redis SET. The zero value is
// a plain SET that clears any TTL.
type SetArgs struct {
	Cond  Condition
	Match string // the value IfEqual and IfNotEqual compare with
	// TTL sets a relative expiry (PX); 0 means none, < 0 is ErrInvalidTTL.
	TTL time.Duration
	// At sets an absolute deadline (PXAT); the zero Time means none. A
	// deadline in the past is accepted and the key is at once invisible.
	// An At at or before the Unix epoch (Redis rejects PXAT <= 0) or after
	// year 2262 (beyond int64 nanoseconds) is ErrInvalidTTL.
	At time.Time
	// KeepTTL keeps the key's current deadline (KEEPTTL).
	KeepTTL bool
}

// SetResult is what SetWith did: Written reports whether the value was
// stored; Old and HadOld describe the value before the call (Redis SET ...
// GET), whether or not the write happened.
type SetResult struct {
	Written bool
	Old     string
	HadOld  bool
}

// ExpireCond selects when PExpireCond applies, as Redis EXPIRE's NX/XX/GT/LT.
type ExpireCond uint8

const (
	// ExpireAlways applies unconditionally.
	ExpireAlways ExpireCond = iota
	// ExpireNX applies only if the key has no TTL.
	ExpireNX
	// ExpireXX applies only if the key has a TTL.
	ExpireXX
	// ExpireGT applies only if the new deadline is later than the current
	// one; a key without a TTL counts as infinite, so GT fails on it.
	ExpireGT
	// ExpireLT applies only if the new deadline is earlier than the current
	// one; a key without a TTL accepts LT.
	ExpireLT
)
