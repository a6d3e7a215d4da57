package resp

// This file holds dense, the table behind hashes, sets and the members of
// sorted sets: entries in one slice, plus an index from key to position
// once the table is large. Redis keeps small hashes and sorted sets in a
// listpack, searched linearly, and large ones in a hash table; dense does
// the same in one structure, so that a value converts in place.
//
// Small (no index): entries keep their insertion order and a delete shifts
// the rest down, so iteration order is a listpack's, byte for byte the
// order Redis replies in. Lookups are linear, as in a listpack, over at
// most the listpack limit (128 entries by default).
//
// Large (indexed): a map from key to position. A delete moves the last
// entry into the hole, so every operation is O(1); a uniformly random
// entry is one random position (HRANDFIELD, SPOP, SRANDMEMBER,
// ZRANDMEMBER); and a scan walks positions downwards, from the end: an
// entry present for the whole scan is returned at least once, since a
// delete only moves the last entry, already visited, into a lower
// position, and an insert lands past the scan's start. Costs per entry:
// the slice's key and value (16 bytes for the key, plus the value: 16 for
// a hash's string, 0 for a set member, 8 for a score) and a map entry of
// about 30 bytes (the key's header and a 4-byte position at Go's map
// load), besides the key's and value's bytes.

// dense is a table of string keys to values of type V.
type dense[V any] struct {
	keys []string
	vals []V
	idx  map[string]int32 // nil while small
}

// len returns the number of entries.
func (d *dense[V]) len() int { return len(d.keys) }

// indexed reports whether the table is large (has its index).
func (d *dense[V]) indexed() bool { return d.idx != nil }

// find returns k's position, or -1.
func (d *dense[V]) find(k string) int {
	if d.idx != nil {
		if i, ok := d.idx[k]; ok {
			return int(i)
		}
		return -1
	}
	for i, x := range d.keys {
		if x == k {
			return i
		}
	}
	return -1
}

// get returns k's value.
func (d *dense[V]) get(k string) (v V, ok bool) {
	if i := d.find(k); i >= 0 {
		return d.vals[i], true
	}
	return v, false
}

// put sets k's value, appending k if it is new, and reports whether it
// was.
func (d *dense[V]) put(k string, v V) (added bool) {
	if i := d.find(k); i >= 0 {
		d.vals[i] = v
		return false
	}
	d.add(k, v)
	return true
}

// add appends k, known absent.
func (d *dense[V]) add(k string, v V) {
	if d.idx != nil {
		d.idx[k] = int32(len(d.keys))
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// del removes k and reports whether it was there.
func (d *dense[V]) del(k string) bool {
	i := d.find(k)
	if i < 0 {
		return false
	}
	d.delAt(i)
	return true
}

// delAt removes the entry at position i: shifting the rest down while
// small, moving the last entry into the hole once indexed.
func (d *dense[V]) delAt(i int) {
	last := len(d.keys) - 1
	var zero V
	if d.idx == nil {
		copy(d.keys[i:], d.keys[i+1:])
		copy(d.vals[i:], d.vals[i+1:])
	} else {
		delete(d.idx, d.keys[i])
		if i != last {
			d.keys[i], d.vals[i] = d.keys[last], d.vals[last]
			d.idx[d.keys[i]] = int32(i)
		}
	}
	d.keys[last], d.vals[last] = "", zero
	d.keys, d.vals = d.keys[:last], d.vals[:last]
	d.shrink()
}

// shrink returns memory when the table has drained to a quarter of its
// capacity, so its memory follows what it holds.
func (d *dense[V]) shrink() {
	if c := cap(d.keys); c > 64 && len(d.keys) <= c/4 {
		d.keys = append([]string(nil), d.keys...)
		d.vals = append([]V(nil), d.vals...)
	}
}

// index makes the table large: it builds the index (once; a table never
// goes back to small, as Redis never converts back to a listpack).
func (d *dense[V]) index() {
	if d.idx != nil {
		return
	}
	d.idx = make(map[string]int32, len(d.keys))
	for i, k := range d.keys {
		d.idx[k] = int32(i)
	}
}

// denseSize estimates the bytes d holds, for values of vsize bytes plus
// extra(i) bytes each (MEMORY USAGE).
func denseSize[V any](d *dense[V], vsize int, extra func(i int) int) int {
	n := (16 + vsize) * cap(d.keys)
	for i, k := range d.keys {
		n += len(k) + extra(i)
	}
	if d.idx != nil {
		n += len(d.idx) * 32
	}
	return n
}

// clone returns a copy of the table sharing no memory with it (the
// strings, which never change, are shared).
func (d *dense[V]) clone() *dense[V] {
	c := &dense[V]{keys: append([]string(nil), d.keys...), vals: append([]V(nil), d.vals...)}
	if d.idx != nil {
		c.idx = make(map[string]int32, len(d.idx))
		for k, i := range d.idx {
			c.idx[k] = i
		}
	}
	return c
}

// scan returns up to about count positions to visit from cursor (0: the
// start) and the next cursor (0: done). Positions are visited downwards
// from the end, so a scan returns every entry present from its start to its
// end at least once (see the file comment).
func (d *dense[V]) scan(cursor uint64, count int) (from, to int, next uint64) {
	n := uint64(len(d.keys))
	start := n
	if cursor != 0 && cursor < n {
		start = cursor
	}
	end := uint64(0)
	if start > uint64(count) {
		end = start - uint64(count)
	}
	return int(end), int(start), end
}
