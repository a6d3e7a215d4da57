package main

import (
	"regexp"
	"slices"
	"testing"
)

func TestFamilyOf(t *testing.T) {
	tests := []struct {
		peer string
		axis axis
		want string
	}{
		{peerEngine, axisPeer, famNxkv},
		{"nxkv lockapi (in-process, FIFO)", axisPeer, famNxkv},
		{"map+Mutex SETNX lock (poll)", axisPeer, famMapMutex},
		{"map+Mutex full scan every 100ms", axisPeer, famMapMutex},
		{"otter (1 s clean-up tick)", axisPeer, famOtter},
		{"sync.Mutex (reference)", axisPeer, famMutex},
		{"miniredis (direct API)", axisPeer, famMiniredis},
		// Lock clients on redis-server: the client is the contender.
		{"Redis nxkv lockapi", axisClient, famNxkv},
		{"Redis redislock", axisClient, famRedislock},
		{"Redis redsync", axisClient, famRedsync},
		{"Redis go-redis SETNX lock", axisClient, famSetNX},
		// The same client on each server: the server is.
		{"miniredis nxkv lockapi", axisServer, famMiniredis},
		{"nxkv-server redislock", axisServer, famNxkv},
		{"Redis redislock", axisServer, famRedis},
		// Key-value operations through go-redis measure the server.
		{"nxkv-server (go-redis)", axisServer, famNxkv},
		{"miniredis (go-redis)", axisClient, famMiniredis},
	}
	for _, tt := range tests {
		if got := familyOf(tt.peer, tt.axis); got != tt.want {
			t.Errorf("familyOf(%q, %v) = %q, want %q", tt.peer, tt.axis, got, tt.want)
		}
	}
	var colors []string
	for _, fc := range familyColors {
		if slices.Contains(colors, fc.color) {
			t.Errorf("colour %s serves two families", fc.color)
		}
		colors = append(colors, fc.color)
	}
}

var (
	barFill    = regexp.MustCompile(`<rect x="[\d.]+" y="\d+" width="[\d.]+" height="12" fill="(#[0-9a-f]{6})"/>`)
	legendFill = regexp.MustCompile(`<rect x="\d+" y="\d+" width="12" height="12" fill="(#[0-9a-f]{6})"/>`)
)

// checkChartColors returns what is wrong with an SVG chart's colours: a
// bar coloured by no family, or by one its legend does not list.
func checkChartColors(svg string) []string {
	legend := map[string]bool{}
	for _, m := range legendFill.FindAllStringSubmatch(svg, -1) {
		legend[m[1]] = true
	}
	var bad []string
	for _, m := range barFill.FindAllStringSubmatch(svg, -1) {
		if !legend[m[1]] {
			bad = append(bad, "a bar coloured "+m[1]+" that the legend does not list")
		}
		if m[1] == familyColor(famOther) {
			bad = append(bad, "a bar of no known family")
		}
	}
	return bad
}

// TestChartsColourByFamily renders the charts of a full run and checks
// that every bar's colour is a family's and that family is in the legend;
// and that the check sees a legend missing.
func TestChartsColourByFamily(t *testing.T) {
	f := fullRun(t)
	bars := 0
	for _, c := range charts(f.res) {
		svg := string(renderSVG(f.res, c))
		bars += len(barFill.FindAllString(svg, -1))
		for _, b := range checkChartColors(svg) {
			t.Errorf("%s: %s", c.file, b)
		}
		for _, p := range c.panels {
			for _, b := range p.bars {
				if familyColor(b.family) == familyColor(famNxkv) && b.family != famNxkv {
					t.Errorf("%s: %q (%s) has nxkv's colour", c.file, b.label, b.family)
				}
			}
		}
	}
	if bars < 20 {
		t.Errorf("%d bars in all the charts, want the full run's", bars)
	}
	planted := `<rect x="300.0" y="10" width="40.0" height="12" fill="` + familyColor(famOtter) + `"/>`
	if len(checkChartColors(planted)) == 0 {
		t.Error("checkChartColors found nothing wrong with a bar whose colour has no legend entry")
	}
}
