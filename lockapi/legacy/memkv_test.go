package legacy

import (
	"context"
	"sync"
)

// memKV is a map-backed KV for tests: each call is atomic, as the Redis
// commands are.
type memKV struct {
	mu sync.Mutex
	m  map[string]string // guarded by mu
}

var _ KV = (*memKV)(nil)

func newMemKV() *memKV { return &memKV{m: make(map[string]string)} }

func (k *memKV) SetNX(_ context.Context, key, value string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.m[key]; ok {
		return false, nil
	}
	k.m[key] = value
	return true, nil
}

func (k *memKV) Get(_ context.Context, key string) (string, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok, nil
}

func (k *memKV) GetSet(_ context.Context, key, value string) (string, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	old, ok := k.m[key]
	k.m[key] = value
	return old, ok, nil
}

func (k *memKV) Del(_ context.Context, key string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[key]
	delete(k.m, key)
	return ok, nil
}

// set stores value unconditionally, as another application would.
func (k *memKV) set(key, value string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[key] = value
}

func (k *memKV) get(key string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok
}
