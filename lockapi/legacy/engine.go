package legacy

import (
	"context"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
)

// Engine returns a KV over the in-process engine e, for locks shared between
// goroutines of one process (or as a stand-in for Redis in tests). Its calls
// never block and ignore ctx; it never returns errors. It is safe for
// concurrent use for as long as e is open. It is a lockapi.Clocker: a
// Locker or Backend over it with no clock of its own uses the engine's.
func Engine(e *engine.Engine) KV { return engineKV{e: e} }

type engineKV struct{ e *engine.Engine }

var (
	_ KV              = engineKV{}
	_ lockapi.Clocker = engineKV{}
)

// Clock returns the engine's clock (nil: the real clock).
func (k engineKV) Clock() clock.Clock { return k.e.Clock() }

func (k engineKV) SetNX(_ context.Context, key, value string) (bool, error) {
	return k.e.SetNX(key, value)
}

func (k engineKV) Get(_ context.Context, key string) (string, bool, error) {
	v, ok := k.e.Get(key)
	return v, ok, nil
}

func (k engineKV) GetSet(_ context.Context, key, value string) (string, bool, error) {
	return k.e.GetSet(key, value)
}

func (k engineKV) Del(_ context.Context, key string) (bool, error) {
	return k.e.Del(key) == 1, nil
}
