package resp

// This file holds the serialization of values that DUMP and RESTORE use,
// as Redis's rdb.c: a payload is a value in the RDB format (its type byte
// and encoding), then the RDB version (2 bytes, little-endian) and a
// CRC-64 (Jones, reflected; 8 bytes, little-endian) of all before it.
//
// RESTORE reads every encoding a Redis 7.0 DUMP writes, and the older ones
// of RDB versions up to 10: strings (raw, as integers, or LZF-compressed),
// lists (plain, quicklists of ziplists or listpacks), sets (plain or
// intsets), sorted sets (plain, with text or binary scores, ziplists,
// listpacks) and hashes (plain, ziplists, listpacks). DUMP writes the
// plain encodings, which every Redis since 2.6 loads: a string's payload
// has Redis's bytes up to 20 bytes (longer ones are not compressed), a
// collection's the same contents in the plain form.

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"math"
	"strconv"

	"github.com/nxkv/nxkv/engine"
)

// rdbVersion is the RDB version of Redis 7.0, which DUMP writes and the
// newest RESTORE accepts.
const rdbVersion = 10

// The RDB type bytes nxkv reads and writes.
const (
	rdbString         = 0
	rdbList           = 1
	rdbSet            = 2
	rdbZset           = 3
	rdbHash           = 4
	rdbZset2          = 5
	rdbListZiplist    = 10
	rdbSetIntset      = 11
	rdbZsetZiplist    = 12
	rdbHashZiplist    = 13
	rdbListQuicklist  = 14
	rdbHashListpack   = 16
	rdbZsetListpack   = 17
	rdbListQuicklist2 = 18
)

// crcJones is the CRC-64 Redis's crc64.c computes: the Jones polynomial,
// reflected (the table of its reversed form).
var crcJones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// errBadData is any payload RESTORE cannot read.
var errBadData = errors.New("bad data format")

// ---- writing ----

// dumpPayload returns DUMP's payload for a string value (obj nil) or a
// typed one.
func dumpPayload(v string, obj engine.Object) []byte {
	var b []byte
	switch o := obj.(type) {
	case nil:
		b = append(b, rdbString)
		b = rdbAppendString(b, v)
	case *listObj:
		b = append(b, rdbList)
		b = rdbAppendLen(b, uint64(o.d.len()))
		for i := range o.d.len() {
			b = rdbAppendString(b, o.d.at(i))
		}
	case *setObj:
		b = append(b, rdbSet)
		b = rdbAppendLen(b, uint64(o.len()))
		for i := range o.len() {
			b = rdbAppendString(b, o.at(i))
		}
	case *zsetObj:
		b = append(b, rdbZset2)
		b = rdbAppendLen(b, uint64(o.len()))
		o.each(0, o.len()-1, false, func(e zentry) {
			b = rdbAppendString(b, e.member)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.score))
		})
	case *hashObj:
		b = append(b, rdbHash)
		b = rdbAppendLen(b, uint64(o.d.len()))
		for i, f := range o.d.keys {
			b = rdbAppendString(b, f)
			b = rdbAppendString(b, o.d.vals[i])
		}
	}
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, crc64Jones(b))
}

// crc64Jones is Redis's crc64(0, b): hash/crc64 with the reflected table,
// whose Update complements the value before and after.
func crc64Jones(b []byte) uint64 { return crc64.Update(math.MaxUint64, crcJones, b) ^ math.MaxUint64 }

// rdbAppendLen appends an RDB length.
func rdbAppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// rdbAppendString appends a string as Redis's rdbSaveRawString writes one
// it does not compress: as an 8, 16 or 32-bit integer when it is the
// decimal form of one (at most 11 bytes), else its length and bytes.
func rdbAppendString(b []byte, s string) []byte {
	if len(s) <= 11 && len(s) > 0 && s[0] != '0' || s == "0" {
		// Redis's rdbTryIntegerEncoding: the string is an integer's
		// decimal form, no leading zero, no "-0" (string2ll takes no "+").
		if n, ok := parseInt([]byte(s)); ok && !(s[0] == '-' && (len(s) == 1 || s[1] == '0')) {
			switch {
			case n >= math.MinInt8 && n <= math.MaxInt8:
				return append(b, 0xc0, byte(n))
			case n >= math.MinInt16 && n <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(b, 0xc1), uint16(n))
			case n >= math.MinInt32 && n <= math.MaxInt32:
				return binary.LittleEndian.AppendUint32(append(b, 0xc2), uint32(n))
			}
		}
	}
	return append(rdbAppendLen(b, uint64(len(s))), s...)
}

// ---- reading ----

// verifyPayload checks a payload's version and checksum, as Redis's
// verifyDumpPayload, and returns the value's bytes (type byte first).
func verifyPayload(p []byte) ([]byte, bool) {
	if len(p) < 10 {
		return nil, false
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion {
		return nil, false
	}
	if crc64Jones(p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, false
	}
	return p[:len(p)-10], true
}

// rdbReader reads an RDB value; every read checks its bounds, so a
// malformed payload is an error, never a panic.
type rdbReader struct {
	b   []byte
	err error
}

func (r *rdbReader) fail() { r.err = errBadData }

func (r *rdbReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *rdbReader) byte() byte {
	if p := r.bytes(1); p != nil {
		return p[0]
	}
	return 0
}

// length reads an RDB length; enc reports a string's special encoding
// (the low bits then say which).
func (r *rdbReader) length() (n uint64, enc bool) {
	c := r.byte()
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false
	case 1:
		return uint64(c&0x3f)<<8 | uint64(r.byte()), false
	case 3:
		return uint64(c & 0x3f), true
	}
	switch c {
	case 0x80:
		if p := r.bytes(4); p != nil {
			return uint64(binary.BigEndian.Uint32(p)), false
		}
	case 0x81:
		if p := r.bytes(8); p != nil {
			return binary.BigEndian.Uint64(p), false
		}
	default:
		r.fail()
	}
	return 0, false
}

// count reads a collection's length: at least 1 (Redis refuses empty
// keys) and no more than the bytes left could hold.
func (r *rdbReader) count() int {
	n, enc := r.length()
	if enc || n == 0 || n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

// str reads a string in any of its encodings.
func (r *rdbReader) str() string {
	n, enc := r.length()
	if !enc {
		return string(r.bytes(n))
	}
	switch n {
	case 0:
		return strconv.Itoa(int(int8(r.byte())))
	case 1:
		if p := r.bytes(2); p != nil {
			return strconv.Itoa(int(int16(binary.LittleEndian.Uint16(p))))
		}
	case 2:
		if p := r.bytes(4); p != nil {
			return strconv.Itoa(int(int32(binary.LittleEndian.Uint32(p))))
		}
	case 3:
		clen, _ := r.length()
		ulen, _ := r.length()
		// A back reference of 3 bytes makes at most 264: a longer claimed
		// length is a lie, and would allocate it.
		if r.err == nil && ulen <= maxBulk && ulen <= 88*clen+1 {
			if out, ok := lzfDecompress(r.bytes(clen), int(ulen)); ok {
				return string(out)
			}
		}
		r.fail()
	default:
		r.fail()
	}
	return ""
}

// lzfDecompress expands LZF data (liblzf's format, which Redis uses) into
// exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			if i+ctrl+1 > len(in) || len(out)+ctrl+1 > n {
				return nil, false
			}
			out = append(out, in[i:i+ctrl+1]...)
			i += ctrl + 1
			continue
		}
		length := ctrl >> 5 // a back reference
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		if ref < 0 || len(out)+length+2 > n {
			return nil, false
		}
		for j := range length + 2 {
			out = append(out, out[ref+j])
		}
	}
	return out, len(out) == n
}

// score reads a sorted set's score: binary (ZSET_2) or as text.
func (r *rdbReader) score(binaryScore bool) float64 {
	if binaryScore {
		if p := r.bytes(8); p != nil {
			return math.Float64frombits(binary.LittleEndian.Uint64(p))
		}
		return 0
	}
	switch n := r.byte(); n {
	case 253:
		return math.NaN()
	case 254:
		return math.Inf(1)
	case 255:
		return math.Inf(-1)
	default:
		f, err := strconv.ParseFloat(string(r.bytes(uint64(n))), 64)
		if err != nil {
			r.fail()
		}
		return f
	}
}

// loadPayload reads a verified payload's value for RESTORE: a string
// (obj nil) or an Object built with the server's encodings.
func (s *Server) loadPayload(p []byte) (v string, obj engine.Object, err error) {
	r := &rdbReader{b: p}
	t := r.byte()
	switch t {
	case rdbString:
		v = r.str()
	case rdbList, rdbListZiplist, rdbListQuicklist, rdbListQuicklist2:
		l := &listObj{}
		add := func(e string) { l.push(e, listTail) }
		switch t {
		case rdbList:
			for range r.count() {
				add(r.str())
			}
		case rdbListZiplist:
			r.ziplist(add)
		default:
			for range r.count() {
				container := uint64(2) // packed
				if t == rdbListQuicklist2 {
					container, _ = r.length()
				}
				switch {
				case t == rdbListQuicklist:
					r.ziplist(add)
				case container == 1: // plain: one element
					add(r.str())
				case container == 2:
					r.listpack(add)
				default:
					r.fail()
				}
			}
		}
		if l.d.len() == 0 {
			r.fail()
		}
		obj = l
	case rdbSet, rdbSetIntset:
		st := &setObj{}
		add := func(m string) {
			if !st.add(s, m) {
				r.fail() // a member twice
			}
		}
		if t == rdbSet {
			for range r.count() {
				add(r.str())
			}
		} else {
			r.intset(add)
		}
		if st.len() == 0 {
			r.fail()
		}
		obj = st
	case rdbZset, rdbZset2, rdbZsetZiplist, rdbZsetListpack:
		z := &zsetObj{}
		add := func(m string, sc float64) {
			if _, dup := z.score(m); dup || math.IsNaN(sc) {
				r.fail()
				return
			}
			z.insert(s, zentry{member: m, score: sc})
		}
		switch t {
		case rdbZset, rdbZset2:
			for range r.count() {
				m := r.str()
				add(m, r.score(t == rdbZset2))
			}
		default:
			r.pairs(t == rdbZsetZiplist, func(m, sc string) {
				f, err := strconv.ParseFloat(sc, 64)
				if err != nil {
					r.fail()
					return
				}
				add(m, f)
			})
		}
		if z.len() == 0 {
			r.fail()
		}
		obj = z
	case rdbHash, rdbHashZiplist, rdbHashListpack:
		h := &hashObj{}
		add := func(f, v string) {
			if !h.set(s, f, v) {
				r.fail() // a field twice
			}
		}
		if t == rdbHash {
			for range r.count() {
				f := r.str()
				add(f, r.str())
			}
		} else {
			r.pairs(t == rdbHashZiplist, add)
		}
		if h.d.len() == 0 {
			r.fail()
		}
		obj = h
	default:
		r.fail()
	}
	return v, obj, r.err // bytes after the value are ignored, as Redis ignores them
}

// pairs reads a ziplist or listpack blob of alternating entries.
func (r *rdbReader) pairs(zip bool, fn func(a, b string)) {
	var first string
	odd := false
	each := func(e string) {
		if odd {
			fn(first, e)
		} else {
			first = e
		}
		odd = !odd
	}
	if zip {
		r.ziplist(each)
	} else {
		r.listpack(each)
	}
	if odd {
		r.fail()
	}
}

// blob reads a string holding an encoded structure.
func (r *rdbReader) blob() []byte {
	s := r.str()
	if r.err != nil {
		return nil
	}
	return []byte(s)
}

// intset reads an intset blob: encoding and count (32 bits each, little
// endian), then the members, sorted, 2, 4 or 8 bytes each.
func (r *rdbReader) intset(fn func(string)) {
	b := r.blob()
	if len(b) < 8 {
		r.fail()
		return
	}
	width, n := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	b = b[8:]
	if (width != 2 && width != 4 && width != 8) || n == 0 || uint64(len(b)) != uint64(n)*uint64(width) {
		r.fail()
		return
	}
	for i := 0; i < len(b); i += int(width) {
		var x int64
		switch width {
		case 2:
			x = int64(int16(binary.LittleEndian.Uint16(b[i:])))
		case 4:
			x = int64(int32(binary.LittleEndian.Uint32(b[i:])))
		default:
			x = int64(binary.LittleEndian.Uint64(b[i:]))
		}
		fn(strconv.FormatInt(x, 10))
	}
}

// listpack reads a listpack blob: total bytes (32 bits) and count (16
// bits), the entries (each an encoding, its data and its length written
// backwards), and 0xff.
func (r *rdbReader) listpack(fn func(string)) {
	b := r.blob()
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xff {
		r.fail()
		return
	}
	b = b[6 : len(b)-1]
	for len(b) > 0 && r.err == nil {
		c := b[0]
		var size int // the entry's encoding and data
		var e string
		signed := func(width, from int) {
			if len(b) < from+width/8 {
				r.fail()
				return
			}
			var u uint64
			for i := range width / 8 {
				u |= uint64(b[from+i]) << (8 * i)
			}
			e = strconv.FormatInt(int64(u<<(64-width))>>(64-width), 10)
			size = from + width/8
		}
		text := func(from, n int) {
			if n < 0 || len(b) < from+n {
				r.fail()
				return
			}
			e, size = string(b[from:from+n]), from+n
		}
		switch {
		case c&0x80 == 0:
			e, size = strconv.Itoa(int(c)), 1
		case c&0xc0 == 0x80:
			text(1, int(c&0x3f))
		case c&0xe0 == 0xc0:
			if len(b) < 2 {
				r.fail()
				break
			}
			e, size = strconv.Itoa(int(int16(uint16(c&0x1f)<<8|uint16(b[1]))<<3)>>3), 2
		case c&0xf0 == 0xe0:
			if len(b) < 2 {
				r.fail()
				break
			}
			text(2, int(c&0x0f)<<8|int(b[1]))
		case c == 0xf0:
			if len(b) < 5 {
				r.fail()
				break
			}
			text(5, int(binary.LittleEndian.Uint32(b[1:])))
		case c == 0xf1:
			signed(16, 1)
		case c == 0xf2:
			signed(24, 1)
		case c == 0xf3:
			signed(32, 1)
		case c == 0xf4:
			signed(64, 1)
		default:
			r.fail()
		}
		if r.err != nil {
			return
		}
		back := 5 // the length written backwards, as lpEncodeBacklen sizes it
		switch {
		case size <= 127:
			back = 1
		case size < 16383:
			back = 2
		case size < 2097151:
			back = 3
		case size < 268435455:
			back = 4
		}
		if len(b) < size+back {
			r.fail()
			return
		}
		b = b[size+back:]
		fn(e)
	}
}

// ziplist reads a ziplist blob (RDB versions before 10): total bytes and
// tail offset (32 bits each), count (16 bits), entries (the previous
// entry's length, an encoding, the data), and 0xff.
func (r *rdbReader) ziplist(fn func(string)) {
	b := r.blob()
	if len(b) < 11 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xff {
		r.fail()
		return
	}
	b = b[10 : len(b)-1]
	for len(b) > 0 && r.err == nil {
		if b[0] == 0xfe { // the previous entry's length: 1 or 5 bytes
			if len(b) < 5 {
				r.fail()
				return
			}
			b = b[5:]
		} else {
			b = b[1:]
		}
		if len(b) == 0 {
			r.fail()
			return
		}
		c := b[0]
		need := func(n int) bool {
			if len(b) < n {
				r.fail()
				return false
			}
			return true
		}
		var e string
		var size int
		integer := func(width int) {
			if need(1 + width/8) {
				var u uint64
				for i := range width / 8 {
					u |= uint64(b[1+i]) << (8 * i)
				}
				e, size = strconv.FormatInt(int64(u<<(64-width))>>(64-width), 10), 1+width/8
			}
		}
		switch {
		case c>>6 == 0:
			if need(1 + int(c&0x3f)) {
				e, size = string(b[1:1+int(c&0x3f)]), 1+int(c&0x3f)
			}
		case c>>6 == 1:
			if need(2) {
				n := int(c&0x3f)<<8 | int(b[1])
				if need(2 + n) {
					e, size = string(b[2:2+n]), 2+n
				}
			}
		case c == 0x80:
			if need(5) {
				n := binary.BigEndian.Uint32(b[1:])
				if uint64(len(b)) >= 5+uint64(n) {
					e, size = string(b[5:5+n]), 5+int(n)
				} else {
					r.fail()
				}
			}
		case c == 0xc0:
			integer(16)
		case c == 0xd0:
			integer(32)
		case c == 0xe0:
			integer(64)
		case c == 0xf0:
			integer(24)
		case c == 0xfe:
			integer(8)
		case c >= 0xf1 && c <= 0xfd:
			e, size = strconv.Itoa(int(c&0x0f)-1), 1
		default:
			r.fail()
		}
		if r.err != nil {
			return
		}
		b = b[size:]
		fn(e)
	}
}
