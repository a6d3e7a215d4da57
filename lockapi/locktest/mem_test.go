package locktest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// memBackend is a minimal reference Backend and Watcher over a map and a
// mock clock, built only for the suite's own tests. Its flaws are switched
// on by the planted-bug tests.
type memBackend struct {
	clock *clock.Mock
	flaw  string // "" for a correct backend; see plantedFlaws

	mu      sync.Mutex
	entries map[string]memEntry        // guarded by mu
	fences  map[string]int64           // guarded by mu
	watches map[string][]chan struct{} // guarded by mu
}

type memEntry struct {
	value    string
	deadline time.Time
}

func newMem(c *clock.Mock, flaw string) *memBackend {
	return &memBackend{clock: c, flaw: flaw, entries: map[string]memEntry{}, fences: map[string]int64{}, watches: map[string][]chan struct{}{}}
}

// liveLocked returns key's entry if it exists and is not expired (alive
// while now <= deadline).
func (m *memBackend) liveLocked(key string) (memEntry, bool) {
	e, ok := m.entries[key]
	if !ok || (m.clock.Now().After(e.deadline) && m.flaw != "no-expiry") {
		return memEntry{}, false
	}
	return e, true
}

func (m *memBackend) notifyLocked(key string) {
	if m.flaw == "no-notify" {
		return
	}
	for _, ch := range m.watches[key] {
		close(ch)
	}
	delete(m.watches, key)
}

// errFlaw is what the input flaws return for input they refuse.
var errFlaw = errors.New("memBackend: refused by a planted flaw")

// refusesLocked reports whether a planted input flaw refuses key or ttl.
func (m *memBackend) refusesLocked(key string, ttl time.Duration) bool {
	return m.flaw == "refuses-braces" && strings.Contains(key, "}") ||
		m.flaw == "refuses-long-ttl" && ttl > 24*time.Hour
}

func (m *memBackend) Acquire(_ context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refusesLocked(key, ttl) {
		return 0, false, errFlaw
	}
	if _, ok := m.liveLocked(key); ok && m.flaw != "acquire-overwrites" {
		return 0, false, nil
	}
	m.entries[key] = memEntry{value, m.clock.Now().Add(ttl)}
	if m.flaw == "fence-restarts" {
		m.fences[key] = 0
	}
	m.fences[key]++
	m.notifyLocked(key)
	return m.fences[key], true, nil
}

func (m *memBackend) Release(_ context.Context, key, value string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.liveLocked(key)
	if !ok || (e.value != value && m.flaw != "release-unconditional") {
		return false, nil
	}
	delete(m.entries, key)
	m.notifyLocked(key)
	return true, nil
}

func (m *memBackend) Refresh(_ context.Context, key, value string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refusesLocked(key, ttl) {
		return false, errFlaw
	}
	e, ok := m.liveLocked(key)
	if !ok || (e.value != value && m.flaw != "refresh-unconditional") {
		return false, nil
	}
	e.deadline = m.clock.Now().Add(ttl)
	m.entries[key] = e
	m.notifyLocked(key)
	return true, nil
}

func (m *memBackend) PTTL(_ context.Context, key, value string) (time.Duration, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.liveLocked(key)
	if !ok || e.value != value {
		return 0, false, nil
	}
	return e.deadline.Sub(m.clock.Now()), true, nil
}

func (m *memBackend) Watch(key string) (<-chan struct{}, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan struct{})
	m.watches[key] = append(m.watches[key], ch)
	return ch, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		list := m.watches[key]
		for i, c := range list {
			if c == ch {
				m.watches[key] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
	}
}

// advance moves time and reaps expired keys, notifying their watchers.
func (m *memBackend) advance(d time.Duration) {
	m.clock.Add(d)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.flaw == "no-expiry" {
		return
	}
	now := m.clock.Now()
	for k, e := range m.entries {
		if now.After(e.deadline) {
			delete(m.entries, k)
			m.notifyLocked(k)
		}
	}
}

// pollOnly hides the Watcher of a backend.
type pollOnly struct{ *memBackend }

func (p pollOnly) Watch() {} // shadows memBackend.Watch with another signature
