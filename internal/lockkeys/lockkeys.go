// Package lockkeys is the key layout the lock backends share: the names of
// the keys behind fencing counters, reentrant holds, semaphores and
// read-write locks. The in-process and Redis backends use the same layout,
// so an engine served over the Redis protocol holds the same keys whichever
// way a primitive was taken.
//
// # Layout
//
// Every key lies under the namespace lockapi reserves ("nxkv:"), so no
// user's lock key can collide with one. Every key derived from a name
// carries a Redis Cluster hash tag that puts it in the name's own slot
// (Tagged), so one script can touch all the keys of one primitive, and a
// lock key's counter, on a Cluster:
//
//	nxkv:fence:{T}key      the fencing counter of lock key
//	nxkv:hold:{T}key       the holds of a reentrant lock key ("<fence> <id> <id>...")
//	nxkv:sem:{T}name#<i>   slot i of semaphore name (decimal i)
//	nxkv:sem:{T}name#f     its fencing counter
//	nxkv:rw:{T}name#w      the writer of read-write lock name
//	nxkv:rw:{T}name#q      the writer waiting for it
//	nxkv:rw:{T}name#r      its reader list (decimal ids joined by ',')
//	nxkv:rw:{T}name#n      its id and fencing counter
//	nxkv:rw:{T}name#<id>   one reader (decimal id)
//
// T is the name's own hash tag when it has one, else a tag of one to three
// alphanumeric bytes hashing to the name's slot. The names are injective:
// the tag never contains '}', so the name starts after the first '}', and
// it ends at the last '#', since every suffix after it ("f", "w", "q", "r",
// "n", or a decimal number) contains no '#'.
package lockkeys

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nxkv/nxkv/lockapi"
)

// The prefixes of the layout; all start with lockapi.ReservedPrefix.
const (
	FencePrefix     = "nxkv:fence:"
	HoldPrefix      = "nxkv:hold:"
	SemaphorePrefix = "nxkv:sem:"
	RWPrefix        = "nxkv:rw:"
)

// Fence returns the name of key's fencing counter.
func Fence(key string) string { return Tagged(FencePrefix, key, "") }

// Hold returns the name of the hold key of a reentrant lock on key: its
// lease's first fencing token and its holds' IDs, "<fence> <id> <id>...".
func Hold(key string) string { return Tagged(HoldPrefix, key, "") }

// CheckHold returns an error matching lockapi.ErrInvalidOption if id
// cannot name a hold in a hold key (ValidHold), else nil.
func CheckHold(id string) error {
	if !ValidHold(id) {
		return fmt.Errorf("%w: hold ID %q is empty or not printable ASCII without spaces", lockapi.ErrInvalidOption, id)
	}
	return nil
}

// ValidHold reports whether id can name a hold in a hold key: it is not
// empty and is printable ASCII without spaces (bytes '!' to '~'), so that
// every backend splits a hold key into the same IDs.
func ValidHold(id string) bool {
	for i := 0; i < len(id); i++ {
		if id[i] < '!' || id[i] > '~' {
			return false
		}
	}
	return id != ""
}

// Semaphore is the layout of one semaphore's keys.
type Semaphore struct {
	base string // nxkv:sem:{T}name#
}

// NewSemaphore returns the layout of semaphore name.
func NewSemaphore(name string) Semaphore {
	return Semaphore{base: Tagged(SemaphorePrefix, name, "#")}
}

// Prefix is what every key of the semaphore starts with; slot i is Prefix
// followed by i in decimal.
func (s Semaphore) Prefix() string { return s.base }

// Slot returns the key of slot i.
func (s Semaphore) Slot(i int) string { return s.base + strconv.Itoa(i) }

// Slots returns the keys of slots 0..limit-1, then the fencing counter's
// (with room for nothing more). The slot keys are substrings of one string:
// clone one before handing it to a store that keeps it.
func (s Semaphore) Slots(limit int) []string {
	var b strings.Builder
	b.Grow(limit * (len(s.base) + 4))
	ends := make([]int, limit)
	for i := range limit {
		b.WriteString(s.base)
		b.WriteString(strconv.Itoa(i))
		ends[i] = b.Len()
	}
	all := b.String()
	keys := make([]string, limit+1)
	start := 0
	for i, end := range ends {
		keys[i], start = all[start:end], end
	}
	keys[limit] = s.Fence()
	return keys
}

// Fence returns the key of the semaphore's fencing counter.
func (s Semaphore) Fence() string { return s.base + "f" }

// RW is the layout of one read-write lock's keys, with its fixed keys
// built once.
type RW struct {
	base                   string // nxkv:rw:{T}name#
	writer, queue, readers string
	counter                string
}

// NewRW returns the layout of read-write lock name. Its four fixed keys
// share one allocation (a key the engine keeps holds the bytes of all
// four, a few dozen bytes more).
func NewRW(name string) RW {
	base := Tagged(RWPrefix, name, "#")
	var b strings.Builder
	b.Grow(4 * (len(base) + 1))
	for _, c := range "wqrn" {
		b.WriteString(base)
		b.WriteRune(c)
	}
	all, n := b.String(), len(base)+1
	return RW{base: all[:n-1], writer: all[:n], queue: all[n : 2*n], readers: all[2*n : 3*n], counter: all[3*n:]}
}

// Prefix is what every key of the lock starts with; reader id's key is
// Prefix followed by id in decimal.
func (r RW) Prefix() string { return r.base }

// Writer returns the key holding the writer.
func (r RW) Writer() string { return r.writer }

// Queue returns the key marking a writer waiting for the lock.
func (r RW) Queue() string { return r.queue }

// Readers returns the key listing reader ids.
func (r RW) Readers() string { return r.readers }

// Counter returns the key of the lock's id and fencing counter.
func (r RW) Counter() string { return r.counter }

// Reader returns the key of reader id.
func (r RW) Reader(id int64) string { return r.base + strconv.FormatInt(id, 10) }
