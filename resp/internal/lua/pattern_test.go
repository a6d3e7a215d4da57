package lua

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkPattern compares the server's pattern functions with
// gopher-lua's own, which they replace, on a typical key-parsing call:
//
//	go test -run='^$' -bench='^BenchmarkPattern$' -count=6 ./resp/
func BenchmarkPattern(b *testing.B) {
	const src = `local n = 0
for i = 1, 100 do
	local a, c = string.match("lock:orders:12345:owner", "^(%w+):(%w+):")
	local s, e = string.find("lock:orders:12345:owner", "%d+")
	for w in string.gmatch("a,b,c", "[^,]+") do n = n + 1 end
end
return n`
	for _, impl := range []string{"gopher-lua", "nxkv"} {
		b.Run("impl="+impl, func(b *testing.B) {
			L := lua.NewState()
			defer L.Close()
			if impl == "nxkv" {
				str := L.GetGlobal("string").(*lua.LTable)
				str.RawSetString("find", L.NewFunction(strFind))
				str.RawSetString("match", L.NewFunction(strMatch))
				str.RawSetString("gmatch", L.NewFunction((&vm{L: L}).strGmatch))
			}
			fn, err := L.LoadString(src)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				L.Push(fn)
				L.Call(0, 1)
				if L.Get(-1) != lua.LNumber(300) {
					b.Fatalf("script returned %v, want 300", L.Get(-1))
				}
				L.Pop(1)
			}
		})
	}
}

// FuzzPattern: no subject and pattern make the matcher fail other than
// with a pattern error (an index out of range would take the server down),
// and every match it reports lies inside the subject.
func FuzzPattern(f *testing.F) {
	for _, seed := range [][2]string{
		{"hello world", "(o)(r)"}, {"f(a(b)c)d", "%b()"}, {"THE (quick) fox", "%f[%a]%a+"},
		{"a]b", "[]]"}, {"aaa", "()a()"}, {"abcabc", "(a)(b)c%1%2"}, {"x", "[%"}, {"x", "%f"},
		{"a.b", "[^%.]-$"}, {"", "^$"}, {"ab", "%bab"}, {"a", "[a-]"}, {"a", "[]"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, src, pat string) {
		if len(src) > 64 || len(pat) > 32 {
			return // keep the backtracking small
		}
		ms := &matchState{src: src, pat: pat}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(patternError); !ok {
						panic(r)
					}
				}
			}()
			for s := 0; s <= len(src); s++ {
				ms.reset()
				e := ms.match(s, 0)
				if e != -1 && (e < s || e > len(src)) {
					t.Fatalf("match(%q, %q) at %d ended at %d", src, pat, s, e)
				}
				if e != -1 {
					for i := range ms.level {
						ms.captureValue(i, s, e)
					}
				}
			}
		}()
	})
}
