package resp

// This file defines what the command handlers need from a database: the
// operations that both an engine and an engine transaction provide, so one
// handler runs on its own (one engine call, atomic by itself) or inside
// MULTI/EXEC and Lua scripts (a transaction holding the engine).

import (
	"time"

	"github.com/nxkv/nxkv/engine"
)

// store is a database as the handlers see it: *engine.Engine outside
// transactions, the transaction of an engine Update inside them.
type store interface {
	Now() time.Time
	Get(key string) (string, bool)
	Set(key, value string)
	SetWith(key, value string, args engine.SetArgs) (engine.SetResult, error)
	GetSet(key, value string) (string, bool)
	GetDel(key string) (string, bool)
	Del(keys ...string) int
	Exists(key string) bool
	PExpireAtCond(key string, at time.Time, cond engine.ExpireCond) (bool, error)
	PTTL(key string) (time.Duration, bool)
	GetPTTL(key string) (string, time.Duration, bool)
	ExpireTime(key string) (at time.Time, ok bool)
	Persist(key string) bool
	IncrBy(key string, n int64) (int64, error)
	CompareAndDelete(key, value string) bool
	Range(fn func(key string) bool)
}
