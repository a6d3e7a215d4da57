package main

// The push workload (-full, -only push): what a server sends a client
// without a request, side by side on nxkv-server and redis-server, in
// interleaved rounds: PUBLISH to 1 and to 100 subscribers (publishes per
// second from a publisher pipelining 64 at a time, and the delivery
// latency of one
// publish at a time, from the PUBLISH's send to each subscriber's read);
// client-side caching's invalidation latency (from a SET's send to the
// RESP3 push at the client that read the key); and rueidislock's hand-off
// with its default options, client-side caching on (from the holder's
// release to the waiter holding the lock).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

// PushRow is one push measurement of one server: the median over the
// rounds of the rate, and the latency percentiles of every sample.
type PushRow struct {
	Workload    string  `json:"workload"`
	Server      string  `json:"server"`
	Subscribers int     `json:"subscribers,omitempty"`
	PerSec      float64 `json:"per_sec,omitempty"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	Samples     int     `json:"samples"`
	Rounds      int     `json:"rounds"`
}

// pushSizes are the counts of one round of each push measurement.
type pushSizes struct {
	rate, latency, invalidations, handoffs int
}

func (cfg config) pushSizes(subs int) pushSizes {
	switch {
	case cfg.Reps < 3: // the tests' tiny configuration
		return pushSizes{rate: 100, latency: 20, invalidations: 20, handoffs: 2}
	case subs > 1:
		return pushSizes{rate: 1000, latency: 200, invalidations: 500, handoffs: 20}
	}
	return pushSizes{rate: 20000, latency: 2000, invalidations: 500, handoffs: 20}
}

// pushSample gathers one server's measurements of one workload.
type pushSample struct {
	rates []float64
	lat   []time.Duration
}

// runPushWorkload measures every push workload on redis-server and
// nxkv-server, alternating which goes first in each round.
func runPushWorkload(cfg config, env *environment, res *Results) {
	servers := []*target{env.redis(), env.target(nxkvServerName)}
	if servers[0] == nil || servers[1] == nil {
		why := env.redisWhy
		if why == "" {
			why = env.doubleWhy
		}
		res.skip("push", "redis-server and nxkv-server", "the push workload compares the two: "+why)
		return
	}
	type key struct {
		workload string
		server   string
		subs     int
	}
	samples := map[key]*pushSample{}
	var order []key
	get := func(k key) *pushSample {
		if samples[k] == nil {
			samples[k] = &pushSample{}
			order = append(order, k)
		}
		return samples[k]
	}
	rounds := max(cfg.Reps, 1)
	for r := range rounds {
		for i := range servers {
			t := servers[(i+r)%2]
			for _, subs := range []int{1, 100} {
				sz := cfg.pushSizes(subs)
				rate, lat, err := measurePublish(t.Addr, subs, sz)
				if err != nil {
					res.skip("push", t.Name, "publish: "+err.Error())
					continue
				}
				s := get(key{"PUBLISH", t.Name, subs})
				s.rates = append(s.rates, rate)
				s.lat = append(s.lat, lat...)
			}
			sz := cfg.pushSizes(1)
			if lat, err := measureInvalidation(t.Addr, sz.invalidations); err != nil {
				res.skip("push", t.Name, "invalidation: "+err.Error())
			} else {
				s := get(key{"invalidation", t.Name, 0})
				s.lat = append(s.lat, lat...)
			}
			if lat, err := measureRueidislock(t.Addr, sz.handoffs); err != nil {
				res.skip("push", t.Name, "rueidislock: "+err.Error())
			} else {
				s := get(key{"rueidislock hand-off", t.Name, 0})
				s.lat = append(s.lat, lat...)
			}
		}
	}
	for _, k := range order {
		s := samples[k]
		row := PushRow{Workload: k.workload, Server: k.server, Subscribers: k.subs, Rounds: rounds,
			Samples: len(s.lat), P50us: percentileUs(s.lat, 50), P99us: percentileUs(s.lat, 99)}
		if len(s.rates) > 0 {
			row.PerSec = medianOf(s.rates)
		}
		res.Push = append(res.Push, row)
	}
}

// percentileUs returns the p-th percentile of lat in microseconds.
func percentileUs(lat []time.Duration, p int) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	i := min(len(s)-1, (len(s)*p+99)/100-1)
	return float64(s[max(i, 0)]) / float64(time.Microsecond)
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pushConn is a raw RESP connection.
type pushConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialPush(addr string) (*pushConn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(2 * time.Minute))
	return &pushConn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}, nil
}

func (c *pushConn) send(args ...string) error {
	_, err := c.nc.Write(appendCommand(nil, args...))
	return err
}

// appendCommand appends args to b as a RESP request.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// frame reads one reply or push and returns its bulk strings (and
// integers, simple strings and errors, as text) in order, and its type.
func (c *pushConn) frame() (kind byte, items []string, err error) {
	var read func(top bool) error
	read = func(top bool) error {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) < 3 {
			return errors.New("short line")
		}
		if top {
			kind = line[0]
		}
		body := string(line[1 : len(line)-2])
		switch line[0] {
		case '$':
			n, err := strconv.Atoi(body)
			if err != nil || n < 0 {
				items = append(items, "")
				return err
			}
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(c.br, buf); err != nil {
				return err
			}
			items = append(items, string(buf[:n]))
		case '*', '>', '%', '~':
			n, err := strconv.Atoi(body)
			if err != nil {
				return err
			}
			if line[0] == '%' {
				n *= 2
			}
			for range n {
				if err := read(false); err != nil {
					return err
				}
			}
		case '-':
			return errors.New(body)
		default:
			items = append(items, body)
		}
		return nil
	}
	err = read(true)
	return kind, items, err
}

// do sends a command and reads its reply.
func (c *pushConn) do(args ...string) ([]string, error) {
	if err := c.send(args...); err != nil {
		return nil, err
	}
	_, items, err := c.frame()
	return items, err
}

// measurePublish subscribes subs connections to one channel and returns
// the rate of PUBLISH from one pipelining publisher (batches of 64, until
// every subscriber has every message) and the delivery latencies of
// publishes sent one at a time.
func measurePublish(addr string, subs int, sz pushSizes) (perSec float64, lat []time.Duration, err error) {
	var conns []*pushConn
	defer func() {
		for _, c := range conns {
			c.nc.Close()
		}
	}()
	for range subs {
		c, err := dialPush(addr)
		if err != nil {
			return 0, nil, err
		}
		conns = append(conns, c)
		if _, err := c.do("subscribe", "bench"); err != nil {
			return 0, nil, err
		}
	}
	pub, err := dialPush(addr)
	if err != nil {
		return 0, nil, err
	}
	conns = append(conns, pub)
	base := time.Now()
	// Each subscriber reads n messages, recording the delay of each from
	// the time in its payload.
	receive := func(n int, record bool) ([]time.Duration, error) {
		var mu sync.Mutex
		var all []time.Duration
		var wg sync.WaitGroup
		errs := make(chan error, subs)
		for _, c := range conns[:subs] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for range n {
					_, items, err := c.frame()
					if err != nil || len(items) != 3 {
						errs <- fmt.Errorf("subscriber: %v %q", err, items)
						return
					}
					if record {
						sent, _ := strconv.ParseInt(items[2], 10, 64)
						mine = append(mine, time.Since(base)-time.Duration(sent))
					}
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		close(errs)
		return all, <-errs
	}
	// The rate: a publisher keeping 64 publishes in flight.
	done := make(chan struct{})
	var recvErr error
	go func() {
		defer close(done)
		_, recvErr = receive(sz.rate, false)
	}()
	start := time.Now()
	const batch = 64
	var b []byte
	for i := 0; i < sz.rate; i += batch {
		n := min(batch, sz.rate-i)
		b = b[:0]
		for j := range n {
			b = appendCommand(b, "publish", "bench", strconv.Itoa(i+j))
		}
		if _, err := pub.nc.Write(b); err != nil {
			return 0, nil, err
		}
		for range n {
			if _, _, err := pub.frame(); err != nil {
				return 0, nil, err
			}
		}
	}
	<-done
	if recvErr != nil {
		return 0, nil, recvErr
	}
	perSec = float64(sz.rate) / time.Since(start).Seconds()
	// The latency: one publish at a time, each stamped when sent.
	type got struct {
		lat []time.Duration
		err error
	}
	ch := make(chan got, 1)
	go func() {
		l, err := receive(sz.latency, true)
		ch <- got{l, err}
	}()
	for range sz.latency {
		if _, err := pub.do("publish", "bench", strconv.FormatInt(int64(time.Since(base)), 10)); err != nil {
			return 0, nil, err
		}
	}
	g := <-ch
	return perSec, g.lat, g.err
}

// measureInvalidation returns the delays from a SET's send by one client
// to the invalidation push at another (RESP3, CLIENT TRACKING ON) that
// read the key just before.
func measureInvalidation(addr string, n int) ([]time.Duration, error) {
	reader, err := dialPush(addr)
	if err != nil {
		return nil, err
	}
	defer reader.nc.Close()
	writer, err := dialPush(addr)
	if err != nil {
		return nil, err
	}
	defer writer.nc.Close()
	for _, cmd := range [][]string{{"hello", "3"}, {"client", "tracking", "on"}} {
		if _, err := reader.do(cmd...); err != nil {
			return nil, err
		}
	}
	var lat []time.Duration
	for i := range n {
		if _, err := reader.do("get", "bench:price"); err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := writer.do("set", "bench:price", strconv.Itoa(i)); err != nil {
			return nil, err
		}
		for {
			kind, items, err := reader.frame()
			if err != nil {
				return nil, err
			}
			if kind == '>' && len(items) == 2 && items[0] == "invalidate" {
				lat = append(lat, time.Since(start))
				break
			}
		}
	}
	return lat, nil
}

// measureRueidislock returns the delays from a rueidislock holder's
// release to a waiter, blocked in WithContext, holding the lock, both
// lockers with default options (client-side caching on: the waiter wakes
// on the lock key's invalidation).
func measureRueidislock(addr string, n int) ([]time.Duration, error) {
	newLocker := func() (rueidislock.Locker, error) {
		return rueidislock.NewLocker(rueidislock.LockerOption{
			ClientOption: rueidis.ClientOption{InitAddress: []string{addr}}})
	}
	holder, err := newLocker()
	if err != nil {
		return nil, err
	}
	defer holder.Close()
	waiter, err := newLocker()
	if err != nil {
		return nil, err
	}
	defer waiter.Close()
	var lat []time.Duration
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		name := "bench-handoff-" + strconv.Itoa(i)
		_, release, err := holder.WithContext(ctx, name)
		if err != nil {
			cancel()
			return nil, err
		}
		held := make(chan time.Time, 1)
		failed := make(chan error, 1)
		go func() {
			_, unlock, err := waiter.WithContext(ctx, name)
			if err != nil {
				failed <- err
				return
			}
			held <- time.Now()
			unlock()
		}()
		time.Sleep(20 * time.Millisecond) // the waiter finds the lock held and waits
		start := time.Now()
		release()
		select {
		case at := <-held:
			lat = append(lat, at.Sub(start))
		case err := <-failed:
			cancel()
			return nil, err
		}
		cancel()
	}
	return lat, nil
}

// printPush prints the push workload's table.
func printPush(w io.Writer, r *Results) {
	if len(r.Push) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Pushes: nxkv-server vs redis-server (%d interleaved rounds)\n\n", r.Push[0].Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tserver\tpublishes/s (median)\tlatency p50\tp99\tsamples")
	for _, row := range r.Push {
		name := row.Workload
		if row.Subscribers > 0 {
			name = fmt.Sprintf("%s to %d subscriber(s)", row.Workload, row.Subscribers)
		}
		rate := "-"
		if row.PerSec > 0 {
			rate = fmtRate(row.PerSec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f µs\t%.0f µs\t%d\n", name, row.Server, rate, row.P50us, row.P99us, row.Samples)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nLatencies: PUBLISH from its send to each subscriber's read (one publish at a time); an invalidation from")
	fmt.Fprintln(w, "the SET's send to the push at the client that read the key; a rueidislock hand-off from the holder's release")
	fmt.Fprintln(w, "to the waiter holding the lock (default options: client-side caching wakes the waiter).")
}
