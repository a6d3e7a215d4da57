package engine_test

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
)

// A waiter watches the lock before trying it, so a release between the
// attempt and the wait cannot be missed; the release closes the channel.
func ExampleEngine_Watch() {
	e := engine.New(engine.Options{})
	defer e.Close()
	e.SetNXPX("lock", "holder", time.Minute)

	changed, stop := e.Watch("lock")
	defer stop()
	if ok, _ := e.SetNXPX("lock", "waiter", time.Minute); !ok {
		e.CompareAndDelete("lock", "holder") // the holder releases
		<-changed
		ok, _ = e.SetNXPX("lock", "waiter", time.Minute)
		fmt.Println("acquired after release:", ok)
	}
	// Output:
	// acquired after release: true
}

// GetPTTL reads a lock's token and remaining TTL in one critical section.
func ExampleEngine_GetPTTL() {
	mc := clock.NewMock()
	mc.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mc})
	defer e.Close()

	e.SetNXPX("lock", "tok-1", 30*time.Second)
	mc.Add(10 * time.Second)
	tok, ttl, ok := e.GetPTTL("lock")
	fmt.Println(tok, ttl, ok)
	// Output:
	// tok-1 20s true
}

// With a mock clock, Reap reclaims expired keys at once and deterministically;
// until then Len counts them, as Redis DBSIZE does.
func ExampleEngine_Reap() {
	mc := clock.NewMock()
	mc.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mc})
	e.Close() // stop the reaper: only Reap reclaims in this example

	e.SetPX("a", "1", time.Second)
	e.SetPX("b", "2", time.Hour)
	mc.Add(time.Minute)
	fmt.Println(e.Len()) // "a" expired but not reclaimed yet
	fmt.Println(e.Reap(), e.Len())
	// Output:
	// 2
	// 1 1
}
