package resp

// This file holds deque, the structure behind lists: a ring buffer of
// strings. Pushing and popping at either end are O(1) (amortized: the
// buffer doubles when full), indexing is O(1), and inserting or removing
// in the middle moves the elements of the shorter side. The buffer halves
// when it drains to a quarter, so a list's memory follows what it holds:
// 16 bytes per element at best, 64 at worst, besides the elements' bytes.

// deque is a double-ended queue of strings. Its zero value is empty.
type deque struct {
	buf  []string // len(buf) is 0 or a power of two
	head int      // position of element 0
	n    int
}

func (d *deque) len() int { return d.n }

// pos returns the buffer position of element i.
func (d *deque) pos(i int) int { return (d.head + i) & (len(d.buf) - 1) }

// at returns element i, 0 <= i < len.
func (d *deque) at(i int) string { return d.buf[d.pos(i)] }

// set replaces element i.
func (d *deque) set(i int, v string) { d.buf[d.pos(i)] = v }

// resize moves the elements into a buffer of capacity c (a power of two
// at least n).
func (d *deque) resize(c int) {
	buf := make([]string, c)
	for i := range d.n {
		buf[i] = d.at(i)
	}
	d.buf, d.head = buf, 0
}

func (d *deque) grow() {
	if d.n == len(d.buf) {
		d.resize(max(8, 2*len(d.buf)))
	}
}

func (d *deque) shrink() {
	if len(d.buf) > 8 && d.n <= len(d.buf)/4 {
		d.resize(len(d.buf) / 2)
	}
}

// pushFront adds v before element 0.
func (d *deque) pushFront(v string) {
	d.grow()
	d.head = (d.head - 1) & (len(d.buf) - 1)
	d.buf[d.head] = v
	d.n++
}

// pushBack adds v after the last element.
func (d *deque) pushBack(v string) {
	d.grow()
	d.buf[d.pos(d.n)] = v
	d.n++
}

// popFront removes and returns element 0; the deque must not be empty.
func (d *deque) popFront() string {
	v := d.buf[d.head]
	d.buf[d.head] = ""
	d.head = (d.head + 1) & (len(d.buf) - 1)
	d.n--
	d.shrink()
	return v
}

// popBack removes and returns the last element; the deque must not be
// empty.
func (d *deque) popBack() string {
	p := d.pos(d.n - 1)
	v := d.buf[p]
	d.buf[p] = ""
	d.n--
	d.shrink()
	return v
}

// insert puts v at index i (0 <= i <= len), moving the shorter side.
func (d *deque) insert(i int, v string) {
	if i < d.n/2 {
		d.pushFront(v)
		for j := 0; j < i; j++ {
			d.set(j, d.at(j+1))
		}
		d.set(i, v)
		return
	}
	d.pushBack(v)
	for j := d.n - 1; j > i; j-- {
		d.set(j, d.at(j-1))
	}
	d.set(i, v)
}

// remove deletes element i, moving the shorter side.
func (d *deque) remove(i int) {
	if i < d.n/2 {
		for j := i; j > 0; j-- {
			d.set(j, d.at(j-1))
		}
		d.popFront()
		return
	}
	for j := i; j < d.n-1; j++ {
		d.set(j, d.at(j+1))
	}
	d.popBack()
}

// filter keeps the elements for which keep returns true, in order, and
// returns how many it removed.
func (d *deque) filter(keep func(i int, v string) bool) int {
	w := 0
	for i := range d.n {
		v := d.at(i)
		if keep(i, v) {
			d.set(w, v)
			w++
		}
	}
	removed := d.n - w
	for i := w; i < d.n; i++ {
		d.set(i, "")
	}
	d.n = w
	for len(d.buf) > 8 && d.n <= len(d.buf)/4 {
		d.resize(len(d.buf) / 2)
	}
	return removed
}

// clone returns a copy sharing no buffer with d.
func (d *deque) clone() deque {
	c := deque{}
	if d.n > 0 {
		c.resize0(d)
	}
	return c
}

func (c *deque) resize0(d *deque) {
	size := 8
	for size < d.n {
		size *= 2
	}
	c.buf = make([]string, size)
	for i := range d.n {
		c.buf[i] = d.at(i)
	}
	c.n = d.n
}
