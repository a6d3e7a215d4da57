package engine_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
)

// newExampleEngine returns an engine on a mock clock at a fixed date, so the
// examples' output is deterministic.
func newExampleEngine() (*engine.Engine, *clock.Mock) {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	return engine.New(engine.Options{Clock: clk}), clk
}

// A key set with a TTL is readable up to and including its deadline, and
// gone one nanosecond later. A mock clock makes this deterministic.
func ExampleNew() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: clk})
	defer e.Close()

	if err := e.SetPX("session", "alice", 30*time.Second); err != nil {
		fmt.Println(err)
	}
	clk.Add(30 * time.Second) // now == deadline: still alive, PTTL 0
	v, ok := e.Get("session")
	ttl, _ := e.PTTL("session")
	fmt.Println(v, ok, ttl)

	clk.Add(time.Nanosecond) // now > deadline: gone
	_, ok = e.Get("session")
	fmt.Println(ok)
	// Output:
	// alice true 0s
	// false
}

// SET NX PX acquires a lock only if nobody holds it; the TTL frees it if the
// holder dies.
func ExampleEngine_SetNXPX() {
	e, clk := newExampleEngine()
	defer e.Close()

	ok, _ := e.SetNXPX("lock:report", "token-1", 10*time.Second)
	fmt.Println("client 1 acquired:", ok)
	ok, _ = e.SetNXPX("lock:report", "token-2", 10*time.Second)
	fmt.Println("client 2 acquired:", ok)

	clk.Add(10*time.Second + time.Millisecond) // client 1 never released
	ok, _ = e.SetNXPX("lock:report", "token-2", 10*time.Second)
	fmt.Println("client 2 acquired after expiry:", ok)

	_, err := e.SetNXPX("lock:report", "token-3", 0)
	fmt.Println(errors.Is(err, engine.ErrInvalidTTL))
	// Output:
	// client 1 acquired: true
	// client 2 acquired: false
	// client 2 acquired after expiry: true
	// true
}

// The single-instance lock pattern from Redis's SET documentation: acquire
// with SET NX PX and a token unique to this acquisition, refresh with
// compare-and-pexpire, release with compare-and-delete so a client never
// frees a lock that expired and was taken by someone else.
func ExampleEngine_CompareAndDelete() {
	e, clk := newExampleEngine()
	defer e.Close()

	acquired, _ := e.SetNXPX("lock", "token-A", 5*time.Second)
	fmt.Println("A acquired:", acquired)

	clk.Add(6 * time.Second) // A stalls past its TTL; B takes the lock
	acquired, _ = e.SetNXPX("lock", "token-B", 5*time.Second)
	fmt.Println("B acquired:", acquired)

	refreshed, _ := e.CompareAndPExpire("lock", "token-A", 5*time.Second)
	fmt.Println("A refreshed:", refreshed)
	fmt.Println("A released:", e.CompareAndDelete("lock", "token-A")) // not A's any more
	holder, _ := e.Get("lock")
	fmt.Println("holder:", holder)
	fmt.Println("B released:", e.CompareAndDelete("lock", "token-B"))
	fmt.Println("exists:", e.Exists("lock"))
	// Output:
	// A acquired: true
	// B acquired: true
	// A refreshed: false
	// A released: false
	// holder: token-B
	// B released: true
	// exists: false
}

// GETSET returns the old value and stores the new one without a TTL, as
// Redis does (the legacy timestamp lock relies on the old value).
func ExampleEngine_GetSet() {
	e, _ := newExampleEngine()
	defer e.Close()

	_ = e.SetPX("k", "old", time.Minute)
	old, ok, _ := e.GetSet("k", "new")
	fmt.Println(old, ok)
	ttl, _ := e.PTTL("k")
	fmt.Println(ttl == engine.NoExpiry)

	_, ok, _ = e.GetSet("missing", "v")
	fmt.Println(ok)
	// Output:
	// old true
	// true
	// false
}

// SetWith is the general SET: here a lock refresh that writes only if the
// caller still holds the lock (IFEQ), with the old value returned (GET).
func ExampleEngine_SetWith() {
	e, _ := newExampleEngine()
	defer e.Close()

	e.Set("lock", "token-1")
	res, err := e.SetWith("lock", "token-1", engine.SetArgs{Cond: engine.IfEqual, Match: "token-1", TTL: 30 * time.Second})
	fmt.Println(res.Written, res.Old, res.HadOld, err)
	ttl, _ := e.PTTL("lock")
	fmt.Println(ttl)

	res, _ = e.SetWith("lock", "token-2", engine.SetArgs{Cond: engine.IfEqual, Match: "token-2"})
	fmt.Println(res.Written, res.Old)

	_, err = e.SetWith("lock", "x", engine.SetArgs{TTL: time.Second, KeepTTL: true})
	fmt.Println(errors.Is(err, engine.ErrSyntax))
	// Output:
	// true token-1 true <nil>
	// 30s
	// false token-1
	// true
}

// IncrBy counts from 0 for a missing key and rejects values that are not
// 64-bit integers, changing nothing.
func ExampleEngine_IncrBy() {
	e, _ := newExampleEngine()
	defer e.Close()

	n, _ := e.IncrBy("fencing", 1)
	fmt.Println(n)
	n, _ = e.IncrBy("fencing", 41)
	fmt.Println(n)

	e.Set("name", "alice")
	_, err := e.IncrBy("name", 1)
	fmt.Println(errors.Is(err, engine.ErrNotInteger))
	v, _ := e.Get("name")
	fmt.Println(v)
	// Output:
	// 1
	// 42
	// true
	// alice
}

// A listener sees every change of every key, named as Redis names its
// keyspace events, synchronously and in order: here a lock's acquisition,
// a refresh, its release, and a key that expires.
func ExampleEngine_Listen() {
	e, clk := newExampleEngine()
	defer e.Close()

	stop := e.Listen(func(ev engine.Event) {
		// Called under the key's shard lock: quick, and never calling e.
		fmt.Println(ev.Kind, ev.Key)
	})
	defer stop()

	_, _ = e.SetNXPX("lock:report", "token-1", 10*time.Second) // acquire
	_, _ = e.SetNXPX("lock:report", "token-2", 10*time.Second) // held: no change
	_, _ = e.CompareAndPExpire("lock:report", "token-1", 10*time.Second)
	e.CompareAndDelete("lock:report", "token-1") // release

	_ = e.SetPX("session", "alice", time.Second)
	clk.Add(2 * time.Second)
	e.Get("session") // finds it expired and deletes it
	e.Flush()
	// Output:
	// new lock:report
	// set lock:report
	// expire lock:report
	// expire lock:report
	// del lock:report
	// new session
	// set session
	// expire session
	// expired session
	// flush
}

// A section names its changes itself when the engine's operations it is
// built from are not the command it implements: APPEND is a Get and a Set,
// and Redis reports it as "append".
func ExampleTx_Notify() {
	e, _ := newExampleEngine()
	defer e.Close()
	e.Set("log", "a")
	defer e.Listen(func(ev engine.Event) { fmt.Println(ev.Kind, ev.Key) })()

	appendTo := func(key, s string) {
		e.Update([]string{key}, func(tx *engine.Tx) {
			defer tx.Quiet(tx.Quiet(true)) // the Set below reports nothing
			old, existed := tx.Get(key)
			tx.Set(key, old+s)
			if !existed {
				tx.Notify(key, engine.KindNew)
			}
			tx.Notify(key, engine.KindAppend)
		})
	}
	appendTo("log", "b")
	appendTo("other", "c")
	v, _ := e.Get("log")
	fmt.Println(v)
	// Output:
	// append log
	// new other
	// append other
	// ab
}

// GetOrLoad reads through to a slower source on a miss: however many
// goroutines miss the key at once, the source is asked once, and the value
// is kept for its TTL.
func ExampleEngine_GetOrLoad() {
	e, clk := newExampleEngine()
	defer e.Close()

	queries := 0
	fromDatabase := func(ctx context.Context, key string) (string, error) {
		queries++ // the example is sequential; a counter shared by loads of several keys needs a lock
		return "profile of " + key, nil
	}
	ctx := context.Background()
	for range 3 {
		v, err := e.GetOrLoad(ctx, "user:42", time.Minute, fromDatabase)
		fmt.Println(v, err)
	}
	clk.Add(time.Minute + time.Nanosecond) // expired: the next miss loads again
	e.GetOrLoad(ctx, "user:42", time.Minute, fromDatabase)
	fmt.Println("queries:", queries)
	// Output:
	// profile of user:42 <nil>
	// profile of user:42 <nil>
	// profile of user:42 <nil>
	// queries: 2
}
