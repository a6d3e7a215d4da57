package goredis

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/lockapi/legacy"
)

// LegacyKV returns a legacy.KV over c that sends the literal commands of the
// Redis SETNX page (SETNX, GET, GETSET, DEL), so that a legacy.Locker shares
// locks with applications using that protocol against the same server. It
// is safe for concurrent use and does not own c. An absent key is reported
// through ok, never as an error; every other failure (network, closed
// client, cancelled ctx, a server error such as WRONGTYPE) is returned as
// go-redis reports it, and the Locker wraps it.
//
// The protocol uses no Redis TTL: expiry is the timestamp in the value,
// judged on the clients' clocks, so the server's clock plays no part.
//
// go-redis retries a command after some network errors (MaxRetries, 3 by
// default). If the first attempt ran and only its reply was lost, a retried
// DEL can delete a lock another client took between the two attempts, and a
// retried SETNX or GETSET reports the caller's own fresh value as someone
// else's, stranding the lock until its timeout. Give the legacy lock a
// client with MaxRetries: -1 to see such failures as errors instead.
func LegacyKV(c redis.UniversalClient) legacy.KV { return legacyKV{c: c} }

type legacyKV struct{ c redis.UniversalClient }

var _ legacy.KV = legacyKV{}

func (k legacyKV) SetNX(ctx context.Context, key, value string) (bool, error) {
	// go-redis's SetNX sends SET NX; send SETNX itself, the command legacy
	// deployments (and proxies in front of old servers) are known to accept.
	cmd := redis.NewBoolCmd(ctx, "setnx", key, value)
	_ = k.c.Process(ctx, cmd)
	return cmd.Result()
}

func (k legacyKV) Get(ctx context.Context, key string) (string, bool, error) {
	return legacyValue(k.c.Get(ctx, key).Result())
}

func (k legacyKV) GetSet(ctx context.Context, key, value string) (string, bool, error) {
	return legacyValue(k.c.GetSet(ctx, key, value).Result())
}

func (k legacyKV) Del(ctx context.Context, key string) (bool, error) {
	n, err := k.c.Del(ctx, key).Result()
	return n == 1, err
}

// legacyValue turns go-redis's nil reply into ok == false.
func legacyValue(v string, err error) (string, bool, error) {
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return v, true, nil
}
