package main

import "strings"

// This file says which family each contender belongs to, for the charts:
// one colour per family across every chart, and nxkv's colour only on bars
// that measure nxkv.

// axis is what a panel's bars compare. A peer measured over a server is a
// pair (the server, the client); which of the two is the contender depends
// on the comparison.
type axis int

const (
	// axisPeer: in-process peers, each a family of its own kind.
	axisPeer axis = iota
	// axisClient: lock clients on the same server; a bar's family is its
	// client ("Redis redislock" is redislock).
	axisClient
	// axisServer: the same client on different servers; a bar's family
	// is its server ("miniredis nxkv lockapi" is miniredis,
	// "nxkv-server redislock" is nxkv).
	axisServer
)

// The families, in the order a legend lists them, with their colours.
const (
	famNxkv      = "nxkv"
	famMapMutex  = "map+Mutex"
	famSyncMap   = "sync.Map"
	famXsync     = "xsync.Map"
	famOtter     = "otter"
	famMutex     = "sync.Mutex"
	famRedis     = "redis-server"
	famMiniredis = "miniredis"
	famRedislock = "redislock"
	famRedsync   = "redsync"
	famSetNX     = "SET NX PX on go-redis"
	famOther     = "other"
)

var familyColors = []struct{ family, color string }{
	{famNxkv, "#e8590c"},
	{famMapMutex, "#495057"},
	{famSyncMap, "#1c7ed6"},
	{famXsync, "#37b24d"},
	{famOtter, "#ae3ec9"},
	{famMutex, "#adb5bd"},
	{famRedis, "#c92a2a"},
	{famMiniredis, "#f06595"},
	{famRedislock, "#0b7285"},
	{famRedsync, "#8b5a2b"},
	{famSetNX, "#74c0fc"},
	{famOther, "#ffd43b"},
}

// familyColor is the colour of family f.
func familyColor(f string) string {
	for _, fc := range familyColors {
		if fc.family == f {
			return fc.color
		}
	}
	return familyColor(famOther)
}

// servers are the targets a network peer's name starts with, in the order
// the charts show them, with the server's name and family.
var servers = []struct{ prefix, name, family string }{
	{"Redis ", "redis-server", famRedis},
	{nxkvServerName + " ", nxkvServerName, famNxkv},
	{"miniredis ", "miniredis", famMiniredis},
}

// splitPeer splits a peer's name into its server's family ("" in process)
// and the rest: "Redis redislock" is (redis-server, "redislock").
func splitPeer(peer string) (server, client string) {
	i, client := serverOf(peer)
	if i < 0 {
		return "", client
	}
	return servers[i].family, client
}

// serverOf returns the index in servers of peer's server (-1 in process)
// and the rest of its name.
func serverOf(peer string) (int, string) {
	for i, s := range servers {
		if rest, ok := strings.CutPrefix(peer, s.prefix); ok {
			return i, rest
		}
	}
	return -1, peer
}

// familyOf is the family of the contender peer stands for in a panel
// comparing along a.
func familyOf(peer string, a axis) string {
	server, rest := splitPeer(peer)
	if server != "" && (a != axisClient || strings.HasPrefix(rest, "(")) {
		// The server's (or a key-value peer through go-redis, or
		// miniredis's own API: the server does the work).
		return server
	}
	for _, pf := range peerFamilies {
		if strings.HasPrefix(rest, pf.prefix) {
			return pf.family
		}
	}
	return famOther
}

// peerFamilies are the families of in-process peers and lock clients, by
// how their names start.
var peerFamilies = []struct{ prefix, family string }{
	{"nxkv", famNxkv},
	{"map+Mutex", famMapMutex},
	{"sync.Map", famSyncMap},
	{"xsync", famXsync},
	{"otter", famOtter},
	{"sync.Mutex", famMutex},
	{"redislock", famRedislock},
	{"redsync", famRedsync},
	{"go-redis SETNX", famSetNX},
}

// contenderLabel names what a bar of peer measures in a panel comparing
// along a: the peer itself in process, its client when the clients on one
// server are compared ("redislock"), its server when the servers are
// ("on nxkv-server").
func contenderLabel(peer string, a axis) string {
	i, rest := serverOf(peer)
	switch {
	case i < 0:
		return peer
	case a == axisServer:
		return "on " + servers[i].name
	case a == axisClient && !strings.HasPrefix(rest, "("):
		return rest
	}
	return peer
}
