package nxkv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/resp"
)

// checkout is the code under test of TestCheckout, the README's test
// double snippet: it takes one item of stock and marks the order paid.
func checkout(ctx context.Context, rdb *redis.Client, id string) error {
	left, err := rdb.Decr(ctx, "stock:"+id).Result()
	if err != nil {
		return err
	}
	if left < 0 {
		return errors.New("out of stock")
	}
	return rdb.Set(ctx, "order:"+id, "paid", 0).Err()
}

func TestCheckout(t *testing.T) {
	s := resp.RunT(t)                                      // free loopback port, closed by t.Cleanup
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()}) // or Dialer: s.Dial, with no port at all
	defer rdb.Close()
	ctx := context.Background()

	s.Set("stock:42", "1")                           // steer state without a client
	if err := checkout(ctx, rdb, "42"); err != nil { // the code under test
		t.Fatal(err)
	}
	if v, _ := s.Get("order:42"); v != "paid" {
		t.Fatalf("order:42 = %q, want paid", v)
	}

	s.Set("stock:43", "1")
	s.InjectFault(resp.Fault{Command: "decr", Err: "ERR disk full", Times: 1}) // failure paths
	if err := checkout(ctx, rdb, "43"); err == nil {
		t.Fatal("checkout succeeded while DECR failed")
	}
}
