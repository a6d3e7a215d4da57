package goredis

// NativeVersion exposes nativeVersion to the external tests.
var NativeVersion = nativeVersion
