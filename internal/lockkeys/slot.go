package lockkeys

import (
	"strings"
	"sync"
)

// A key's Redis Cluster hash slot is the CRC16 (XMODEM) of its hash tag, or
// of the whole key when it has none, mod 16384 (the Redis Cluster
// specification).

// Slots is the number of Redis Cluster hash slots.
const Slots = 16384

// crcTable is the byte-wise table of CRC16-CCITT (XMODEM, polynomial
// 0x1021, initial value 0), the CRC Redis Cluster uses.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

// HashTag returns the hash tag of key as Redis Cluster computes it, and
// whether key has one: the bytes between the first '{' and the first '}'
// after it, when that is non-empty.
func HashTag(key string) (string, bool) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return "", false
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 { // no '}' after '{', or "{}"
		return "", false
	}
	return key[open+1 : open+1+end], true
}

// Slot returns key's Redis Cluster hash slot.
func Slot(key string) int {
	if tag, ok := HashTag(key); ok {
		key = tag
	}
	return int(crc16(key) % Slots)
}

// slotTag is a hash tag of one to three alphanumeric bytes; n is its length.
type slotTag struct {
	b [3]byte
	n uint8
}

// slotTags returns, for every slot, the first tag in shortlex order over
// [0-9a-zA-Z] that hashes to it; three bytes reach all 16384 slots. The
// table (64 KiB) is built on first use, in about a millisecond.
var slotTags = sync.OnceValue(func() *[Slots]slotTag {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	t := new([Slots]slotTag)
	left := Slots
	var buf [3]byte
	var fill func(pos, n int)
	fill = func(pos, n int) {
		if pos == n {
			s := &t[crc16(string(buf[:n]))%Slots]
			if s.n == 0 {
				s.b, s.n = buf, uint8(n)
				left--
			}
			return
		}
		for i := 0; i < len(alphabet) && left > 0; i++ {
			buf[pos] = alphabet[i]
			fill(pos+1, n)
		}
	}
	for n := 1; n <= len(buf) && left > 0; n++ {
		fill(0, n)
	}
	if left > 0 {
		panic("lockkeys: slot tag table incomplete")
	}
	return t
})

// SlotTag returns the tag of one to three alphanumeric bytes that the key
// layout uses for slot s (the first in shortlex order that hashes to s).
func SlotTag(s int) string {
	st := &slotTags()[s]
	return string(st.b[:st.n])
}

// Tagged returns prefix, then "{tag}", then name, then suffix, where tag is
// name's own hash tag when it has one and otherwise a short tag chosen to
// hash to name's slot: the result always lies in name's Cluster slot, and,
// since the tag never contains '}', name is recovered after the first '}'
// following prefix (prefix must contain no '{').
func Tagged(prefix, name, suffix string) string {
	tag, ok := HashTag(name)
	var st *slotTag
	if !ok {
		st = &slotTags()[Slot(name)]
	}
	var b strings.Builder
	b.Grow(len(prefix) + len(tag) + 3 + 2 + len(name) + len(suffix))
	b.WriteString(prefix)
	b.WriteByte('{')
	if ok {
		b.WriteString(tag)
	} else {
		b.Write(st.b[:st.n])
	}
	b.WriteByte('}')
	b.WriteString(name)
	b.WriteString(suffix)
	return b.String()
}
