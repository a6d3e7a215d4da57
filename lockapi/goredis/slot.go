package goredis

import (
	"strings"
	"sync"
)

// The fencing counter of a lock key must live in the key's Redis Cluster
// hash slot, so that one script can touch both. A key's slot is the CRC16
// (XMODEM) of its hash tag, or of the whole key when it has none, mod 16384
// (the Redis Cluster specification).

const slots = 16384

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

// hashTag returns the hash tag of key as Redis Cluster computes it, and
// whether key has one: the bytes between the first '{' and the first '}'
// after it, when that is non-empty.
func hashTag(key string) (string, bool) {
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

// slot returns key's Redis Cluster hash slot.
func slot(key string) int {
	if tag, ok := hashTag(key); ok {
		key = tag
	}
	return int(crc16(key) % slots)
}

// slotTag is a hash tag of one to three alphanumeric bytes; n is its length.
type slotTag struct {
	b [3]byte
	n uint8
}

// slotTags returns, for every slot, the first tag in shortlex order over
// [0-9a-zA-Z] that hashes to it; three bytes reach all 16384 slots. The
// table (64 KiB) is built on first use, in about a millisecond.
var slotTags = sync.OnceValue(func() *[slots]slotTag {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	t := new([slots]slotTag)
	left := slots
	var buf [3]byte
	var fill func(pos, n int)
	fill = func(pos, n int) {
		if pos == n {
			s := &t[crc16(string(buf[:n]))%slots]
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
		panic("goredis: slot tag table incomplete")
	}
	return t
})

// FencePrefix starts the name of every fencing counter. It lies in the
// namespace lockapi reserves (lockapi.ReservedPrefix), so no lock key can
// collide with a counter.
const FencePrefix = "nxkv:fence:"

// FenceKey returns the name of key's fencing counter: FencePrefix, then a
// hash tag that puts it in key's Cluster slot, then key itself:
// "nxkv:fence:{"+tag+"}"+key. The tag is key's own hash tag when it has
// one ("{user:1}:lock" → "nxkv:fence:{user:1}{user:1}:lock"), and otherwise
// a short tag chosen to hash to key's slot ("orders" → a tag t with
// slot(t) == slot("orders")). Every key has a counter, distinct keys have
// distinct counters (the tag never contains '}', so key is recovered after
// the first '}'), and the counter always shares key's slot.
func FenceKey(key string) string {
	tag, ok := hashTag(key)
	var st *slotTag
	if !ok {
		st = &slotTags()[slot(key)]
	}
	var b strings.Builder
	b.Grow(len(FencePrefix) + len(tag) + 3 + 2 + len(key))
	b.WriteString(FencePrefix)
	b.WriteByte('{')
	if ok {
		b.WriteString(tag)
	} else {
		b.Write(st.b[:st.n])
	}
	b.WriteByte('}')
	b.WriteString(key)
	return b.String()
}
