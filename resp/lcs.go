package resp

// This file holds LCS, the longest common subsequence of two strings
// (Redis 7.0), by the textbook dynamic programme over a table of
// (len(a)+1)*(len(b)+1) lengths, as Redis computes it, so that the ranges
// IDX reports are the ones Redis reports.

import "math"

// cmdLCS is LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN].
// A missing key counts as the empty string.
func cmdLCS(x *call) {
	k1, k2 := x.key(1), x.key(2)
	var a, b string
	x.atomic([]string{k1, k2}, func(st store) {
		a, _ = st.Get(k1)
		b, _ = st.Get(k2)
	})
	var getLen, getIdx, withMatchLen bool
	minMatchLen := int64(0)
	for j := 3; j < len(x.args); j++ {
		switch {
		case equalFold(x.args[j], "idx"):
			getIdx = true
		case equalFold(x.args[j], "len"):
			getLen = true
		case equalFold(x.args[j], "withmatchlen"):
			withMatchLen = true
		case equalFold(x.args[j], "minmatchlen") && j < len(x.args)-1:
			n, ok := x.intArg(j + 1)
			if !ok {
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	if getLen && getIdx {
		x.w.errorReply("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		x.w.errorReply("ERR String too long for LCS")
		return
	}
	cells := uint64(len(a)+1) * uint64(len(b)+1)
	if cells*4 > uint64(x.s.maxBulk()) {
		x.w.errorReply("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	t := lcsTable(a, b)
	total := t.at(len(a), len(b))
	if getLen {
		x.w.int(int64(total))
		return
	}
	seq, matches := t.walk(a, b, getIdx)
	if !getIdx {
		x.w.bulk(seq)
		return
	}
	x.w.mapHeader(2)
	x.w.bulkString("matches")
	n := 0
	for _, m := range matches {
		if minMatchLen == 0 || int64(m.len()) >= minMatchLen {
			n++
		}
	}
	x.w.array(n)
	for _, m := range matches {
		if minMatchLen != 0 && int64(m.len()) < minMatchLen {
			continue
		}
		if withMatchLen {
			x.w.array(3)
		} else {
			x.w.array(2)
		}
		x.w.array(2)
		x.w.int(int64(m.aStart))
		x.w.int(int64(m.aEnd))
		x.w.array(2)
		x.w.int(int64(m.bStart))
		x.w.int(int64(m.bEnd))
		if withMatchLen {
			x.w.int(int64(m.len()))
		}
	}
	x.w.bulkString("len")
	x.w.int(int64(total))
}

// lcsLengths holds, at row i and column j, the length of the longest
// common subsequence of a[:i] and b[:j].
type lcsLengths struct {
	cols int // len(b)+1
	l    []uint32
}

func (t *lcsLengths) at(i, j int) uint32 { return t.l[i*t.cols+j] }

// lcsTable fills the table of a and b.
func lcsTable(a, b string) *lcsLengths {
	t := &lcsLengths{cols: len(b) + 1, l: make([]uint32, (len(a)+1)*(len(b)+1))}
	for i := 1; i <= len(a); i++ {
		row, prev := t.l[i*t.cols:], t.l[(i-1)*t.cols:]
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	return t
}

// lcsMatch is a run of the subsequence contiguous in both strings:
// a[aStart..aEnd] equals b[bStart..bEnd], bounds included.
type lcsMatch struct{ aStart, aEnd, bStart, bEnd int }

func (m lcsMatch) len() int { return m.aEnd - m.aStart + 1 }

// walk goes back from the table's last cell and returns the subsequence
// and, when runs is set, its contiguous runs from the end of the strings
// to their start. Where both directions keep the length, it steps back
// in b, as Redis does, so the runs are Redis's.
func (t *lcsLengths) walk(a, b string, runs bool) ([]byte, []lcsMatch) {
	k := int(t.at(len(a), len(b)))
	seq := make([]byte, k)
	var out []lcsMatch
	open := false
	var cur lcsMatch
	i, j := len(a), len(b)
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			seq[k-1] = a[i-1]
			switch {
			case !open:
				cur = lcsMatch{aStart: i - 1, aEnd: i - 1, bStart: j - 1, bEnd: j - 1}
				open = true
			case cur.aStart == i && cur.bStart == j:
				cur.aStart--
				cur.bStart--
			default:
				emit = true
			}
			if cur.aStart == 0 || cur.bStart == 0 {
				emit = true
			}
			k--
			i--
			j--
		} else {
			if t.at(i-1, j) > t.at(i, j-1) {
				i--
			} else {
				j--
			}
			emit = open
		}
		if emit {
			if runs {
				out = append(out, cur)
			}
			open = false
		}
	}
	return seq, out
}
