package goredis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// A lockapi Client over Redis. It needs a server, so this example is
// compiled but not run.
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	client := lockapi.New(goredis.New(rdb, goredis.Options{}), lockapi.Options{})

	l, err := client.Obtain(ctx, "invoice:42", 30*time.Second,
		&lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.ExponentialBackoff(10*time.Millisecond, 500*time.Millisecond), 20)})
	if err != nil {
		fmt.Println("not obtained:", err)
		return
	}
	defer l.Release(ctx)
	fence, _ := l.Fence()
	// Hand fence to the storage being protected, which rejects any write
	// carrying a lower fence than one it has already seen.
	fmt.Println("holding invoice:42 with fencing token", fence)
}
