package cnum

import (
	"math"
	"testing"
)

// TestFormatDouble: the values printf("%.17g") prints on Linux, the ones
// that are not finite included.
func TestFormatDouble(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{3, "3"},
		{math.Copysign(0, -1), "-0"},
		{0.1, "0.10000000000000001"},
		{1e21, "1e+21"},
		{1.5e-7, "1.4999999999999999e-07"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
		{math.Copysign(math.NaN(), -1), "-nan"},
	} {
		if got := FormatDouble(tc.f); got != tc.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
	if _, ok := FormatNonFinite(1); ok {
		t.Error("FormatNonFinite(1) reports a non-finite value")
	}
}
