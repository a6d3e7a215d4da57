package main

import "errors"

// errLockapiMissing stands in until lockapi's Client lands.
var errLockapiMissing = errors.New("lockapi Client not committed yet")

// nxkvInprocLockPeer is nxkv's lockapi over the in-process engine.
func nxkvInprocLockPeer() lockPeer {
	return lockPeer{Name: "nxkv lockapi (in-process)", Setup: func() (*lockEnv, error) { return nil, errLockapiMissing }}
}

// nxkvRedisLockPeer is nxkv's lockapi over go-redis (lockapi/goredis).
func nxkvRedisLockPeer(t *target) lockPeer {
	return lockPeer{Name: t.Name + " nxkv lockapi", Network: true, Setup: func() (*lockEnv, error) { return nil, errLockapiMissing }}
}
