package goredis

// NativeVersion exposes nativeVersion to the external tests.
var NativeVersion = nativeVersion

// Slot exposes slot, and SlotTag the tag FenceKey uses for a slot, to the
// external tests, which check them against their own CRC16.
var Slot = slot

func SlotTag(s int) string {
	st := &slotTags()[s]
	return string(st.b[:st.n])
}
