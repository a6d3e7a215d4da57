package resp

// This file holds pub/sub, as Redis's pubsub.c: SUBSCRIBE, UNSUBSCRIBE,
// PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, the shard channels' SSUBSCRIBE,
// SUNSUBSCRIBE and SPUBLISH, and PUBSUB; the server's registry of channels
// and patterns; and the delivery of a message to its subscribers: to a
// client, encoded for its protocol and pushed to its outbox (so a
// publisher never waits for a subscriber, and one that does not read is
// closed at its output limits), or appended to its own reply when the
// client publishing is the subscriber (so a RESP3 client's own message
// comes before the reply of the command that published it, as in Redis);
// and to the Go subscriptions of Server.Subscribe.

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// pubsubState is the server's registry of subscriptions. Its lock is
// taken inside engine sections (a script's PUBLISH, a keyspace
// notification), and takes clients' outbox locks: it never waits for
// anything else.
type pubsubState struct {
	mu       sync.Mutex
	channels map[string][]receiver // guarded by mu: subscribers in order of subscription
	patterns map[string][]receiver // guarded by mu
	patOrder []string              // guarded by mu: the patterns, in order of first subscription
	shard    map[string][]receiver // guarded by mu: shard channels
	// any is set while anything is subscribed: publishers and keyspace
	// notifications check it without the lock.
	any atomic.Bool
}

// receiver is a subscriber: a client, or a Go subscription.
type receiver interface {
	// receive delivers m; origin is the client whose command is running
	// on this goroutine (nil if none). It reports false if the receiver
	// is gone or must go: a Subscription that fell behind is then closed
	// by the publisher, a client by its own close.
	receive(m *message, origin *conn) bool
}

// clientSubs is a client's subscriptions, guarded by the server's
// pubsubState.mu, in order of subscription (which UNSUBSCRIBE without
// arguments follows; Redis follows its hash table's order).
type clientSubs struct {
	channels []string
	patterns []string
	shard    []string
}

// count is Redis's clientSubscriptionsCount: channels and patterns.
func (cs *clientSubs) count() int {
	if cs == nil {
		return 0
	}
	return len(cs.channels) + len(cs.patterns)
}

// total counts every subscription, shard channels included.
func (cs *clientSubs) total() int {
	if cs == nil {
		return 0
	}
	return cs.count() + len(cs.shard)
}

// message is one delivery: a message, pmessage or smessage, with its
// encodings for RESP2 and RESP3 made once, on first use.
type message struct {
	kind                      string // "message", "pmessage", "smessage"
	pattern, channel, payload string
	enc                       [2][]byte
}

// frame returns m encoded for protocol proto (2 or 3).
func (m *message) frame(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if m.enc[i] == nil {
		n := 3
		if m.kind == "pmessage" {
			n = 4
		}
		b := make([]byte, 0, 48+len(m.pattern)+len(m.channel)+len(m.payload))
		b = appendHeader(b, pushOrArray(proto), n)
		b = appendBulk(b, m.kind)
		if m.kind == "pmessage" {
			b = appendBulk(b, m.pattern)
		}
		b = appendBulk(b, m.channel)
		b = appendBulk(b, m.payload)
		m.enc[i] = b
	}
	return m.enc[i]
}

// pushOrArray is the aggregate type of out-of-band data: a RESP3 push, a
// RESP2 array.
func pushOrArray(proto int) byte {
	if proto == 3 {
		return '>'
	}
	return '*'
}

func appendHeader(b []byte, t byte, n int) []byte {
	b = append(b, t)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// deliver hands frame to c: appended to its own output when c's command
// is running on this goroutine (origin), after the command's reply if the
// command replies first (held), pushed to its outbox otherwise. It
// reports false if c is closed or closing, or was just closed at its
// output limits.
func (c *conn) deliver(frame []byte, origin *conn) bool {
	if c == origin {
		if c.holding {
			c.held = append(c.held, frame...)
		} else {
			c.w.buf = append(c.w.buf, frame...)
		}
		return true
	}
	return c.push(frame)
}

// receive delivers a message to a client, in its current protocol.
func (c *conn) receive(m *message, origin *conn) bool {
	return c.deliver(m.frame(int(c.resp.Load())), origin)
}

// publish delivers payload to the subscribers of channel, then (unless
// shard) to those of every matching pattern, and returns how many
// received it. origin is the client whose command publishes, nil for the
// server's own (keyspace notifications of changes made outside any
// client's command, Server.Publish).
func (s *Server) publish(origin *conn, channel, payload string, shard bool) int {
	if !s.ps.any.Load() {
		return 0
	}
	ps := &s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := 0
	var behind []*Subscription
	send := func(m *message, subs []receiver) {
		for _, r := range subs {
			if !r.receive(m, origin) {
				if sub, ok := r.(*Subscription); ok {
					behind = append(behind, sub)
				}
			}
			n++
		}
	}
	reg, kind := ps.channels, "message"
	if shard {
		reg, kind = ps.shard, "smessage"
	}
	if subs := reg[channel]; len(subs) > 0 {
		send(&message{kind: kind, channel: channel, payload: payload}, subs)
	}
	if !shard && s.plantedPush != "pubsub" {
		for _, p := range ps.patOrder {
			if globMatch(p, channel) {
				send(&message{kind: "pmessage", pattern: p, channel: channel, payload: payload}, ps.patterns[p])
			}
		}
	}
	for _, sub := range behind {
		sub.closeLocked()
	}
	return n
}

// subscribeReply writes one (un)subscription notification for c: kind,
// the channel (or a null when there was nothing to unsubscribe from), and
// c's count of subscriptions of that family.
// It is a push (delivered even with CLIENT REPLY OFF).
func (c *conn) subscribeReply(kind string, channel *string, count int) {
	w := writer{proto: c.w.proto}
	w.buf = appendHeader(w.buf, pushOrArray(w.proto), 3)
	w.buf = appendBulk(w.buf, kind)
	if channel == nil {
		w.null()
	} else {
		w.buf = appendBulk(w.buf, *channel)
	}
	w.int(int64(count))
	c.deliver(w.buf, c)
}

// subsLocked returns c's subscriptions, creating them. ps.mu must be held.
func (c *conn) subsLocked() *clientSubs {
	if c.subs == nil {
		c.subs = &clientSubs{}
		c.atClose(func() { c.s.unsubscribeAll(c) })
	}
	return c.subs
}

// syncLocked updates what depends on c's subscriptions: its pub/sub mode
// (and output class), and the registry's any flag. ps.mu must be held.
func (s *Server) syncLocked(c *conn) {
	c.subscribed.Store(c.subs.total() > 0)
	ps := &s.ps
	ps.any.Store(len(ps.channels)+len(ps.patterns)+len(ps.shard) > 0)
}

// addLocked subscribes r to name in reg.
func addLocked(reg map[string][]receiver, name string, r receiver) {
	reg[name] = append(reg[name], r)
}

// removeLocked unsubscribes r from name in reg.
func removeLocked(reg map[string][]receiver, name string, r receiver) {
	subs := reg[name]
	if i := slices.Index(subs, r); i >= 0 {
		subs = slices.Delete(subs, i, i+1)
	}
	if len(subs) == 0 {
		delete(reg, name)
	} else {
		reg[name] = subs
	}
}

// cmdSubscribe is SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE: each channel or
// pattern is added to the client's (once) and confirmed with the count of
// its subscriptions of the family. SSUBSCRIBE is refused inside a
// transaction, as Redis refuses it to a client that must get one reply
// per command.
func cmdSubscribe(x *call) {
	kind := x.cmd.name
	if kind == "ssubscribe" && x.tx {
		x.w.errorReply("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	c, ps := x.c, &x.s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	cs := c.subsLocked()
	unsub := "un" + kind
	if kind != "subscribe" {
		unsub = kind[:1] + "unsubscribe"
	}
	list, reg := x.s.family(cs, unsub), x.s.registryLocked(unsub)
	for _, a := range x.args[1:] {
		name := string(a)
		if !slices.Contains(*list, name) {
			*list = append(*list, name)
			if _, ok := reg[name]; !ok && kind == "psubscribe" {
				ps.patOrder = append(ps.patOrder, name)
			}
			addLocked(reg, name, c)
		}
		x.s.syncLocked(c)
		c.subscribeReply(kind, &name, x.s.familyCount(cs, unsub))
	}
}

// registryLocked returns the server's registry an unsubscribe command
// names. ps.mu must be held.
func (s *Server) registryLocked(kind string) map[string][]receiver {
	switch kind {
	case "punsubscribe":
		return s.ps.patterns
	case "sunsubscribe":
		return s.ps.shard
	}
	return s.ps.channels
}

// cmdUnsubscribe is UNSUBSCRIBE, SUNSUBSCRIBE and PUNSUBSCRIBE: from the
// channels (patterns) named, or from all of the client's, with a
// notification for each, or one with a null channel if there were none.
func cmdUnsubscribe(x *call) {
	c, ps := x.c, &x.s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	kind := x.cmd.name
	names := make([]string, 0, len(x.args)-1)
	for _, a := range x.args[1:] {
		names = append(names, string(a))
	}
	if len(names) == 0 {
		if cs := c.subs; cs != nil {
			names = slices.Clone(*x.s.family(cs, kind))
		}
		if len(names) == 0 {
			c.subscribeReply(kind, nil, x.s.familyCount(c.subs, kind))
			return
		}
	}
	for _, name := range names {
		x.s.unsubscribeLocked(c, kind, name)
		c.subscribeReply(kind, &name, x.s.familyCount(c.subs, kind))
	}
	x.s.syncLocked(c)
}

// family returns the list of c's subscriptions an unsubscribe command
// works on.
func (s *Server) family(cs *clientSubs, kind string) *[]string {
	switch kind {
	case "punsubscribe":
		return &cs.patterns
	case "sunsubscribe":
		return &cs.shard
	}
	return &cs.channels
}

// familyCount is the count an unsubscribe notification reports: shard
// channels for SUNSUBSCRIBE, channels and patterns otherwise.
func (s *Server) familyCount(cs *clientSubs, kind string) int {
	if kind == "sunsubscribe" {
		if cs == nil {
			return 0
		}
		return len(cs.shard)
	}
	return cs.count()
}

// unsubscribeLocked removes c's subscription name of the family kind
// names (an unsubscribe command), if it has it. ps.mu must be held.
func (s *Server) unsubscribeLocked(c *conn, kind, name string) {
	cs := c.subs
	if cs == nil {
		return
	}
	list := s.family(cs, kind)
	i := slices.Index(*list, name)
	if i < 0 {
		return
	}
	*list = slices.Delete(*list, i, i+1)
	ps := &s.ps
	removeLocked(s.registryLocked(kind), name, c)
	if _, ok := ps.patterns[name]; !ok && kind == "punsubscribe" {
		ps.patOrder = slices.DeleteFunc(ps.patOrder, func(p string) bool { return p == name })
	}
	s.syncLocked(c)
}

// unsubscribeAll drops every subscription of c without notifications
// (RESET, and the close of the connection).
func (s *Server) unsubscribeAll(c *conn) {
	ps := &s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	cs := c.subs
	if cs == nil {
		return
	}
	for _, kind := range []string{"unsubscribe", "punsubscribe", "sunsubscribe"} {
		for _, name := range slices.Clone(*s.family(cs, kind)) {
			s.unsubscribeLocked(c, kind, name)
		}
	}
	s.syncLocked(c)
}

// cmdPublish is PUBLISH and SPUBLISH (also from scripts).
func cmdPublish(x *call) {
	n := x.s.publish(x.c, string(x.args[1]), string(x.args[2]), x.cmd.name == "spublish")
	x.w.int(int64(n))
}

// pubsubHelp is PUBSUB HELP's text.
var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

func cmdPubsubHelp(x *call) {
	x.w.array(len(pubsubHelp))
	for _, l := range pubsubHelp {
		x.w.simple(l)
	}
}

// cmdPubsubChannels is PUBSUB CHANNELS and SHARDCHANNELS [pattern]: the
// channels with subscribers, sorted (Redis lists them in its hash table's
// order).
func cmdPubsubChannels(x *call) {
	if len(x.args) > 3 {
		x.w.errorReply(subcommandSyntax(x))
		return
	}
	ps := &x.s.ps
	ps.mu.Lock()
	reg := ps.channels
	if x.cmd.name == "pubsub|shardchannels" {
		reg = ps.shard
	}
	var names []string
	for ch := range reg {
		if len(x.args) == 2 || globMatch(string(x.args[2]), ch) {
			names = append(names, ch)
		}
	}
	ps.mu.Unlock()
	sort.Strings(names)
	x.w.array(len(names))
	for _, n := range names {
		x.w.bulkString(n)
	}
}

// cmdPubsubNumsub is PUBSUB NUMSUB and SHARDNUMSUB [channel ...]: each
// channel named and its count of subscribers, patterns left out.
func cmdPubsubNumsub(x *call) {
	ps := &x.s.ps
	ps.mu.Lock()
	reg := ps.channels
	if x.cmd.name == "pubsub|shardnumsub" {
		reg = ps.shard
	}
	counts := make([]int, len(x.args)-2)
	for i, a := range x.args[2:] {
		counts[i] = len(reg[string(a)])
	}
	ps.mu.Unlock()
	x.w.array(2 * len(counts))
	for i, a := range x.args[2:] {
		x.w.bulk(a)
		x.w.int(int64(counts[i]))
	}
}

func cmdPubsubNumpat(x *call) {
	ps := &x.s.ps
	ps.mu.Lock()
	n := len(ps.patterns)
	ps.mu.Unlock()
	x.w.int(int64(n))
}

// subcommandSyntax is Redis's addReplySubcommandSyntaxError.
func subcommandSyntax(x *call) string {
	return "ERR unknown subcommand or wrong number of arguments for '" +
		sanitize(truncate(string(x.args[1]), 128)) + "'. Try " + sanitize(strings.ToUpper(string(x.args[0]))) + " HELP."
}

// pubsubCounts returns INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels.
func (s *Server) pubsubCounts() (channels, patterns, shard int) {
	ps := &s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.channels), len(ps.patterns), len(ps.shard)
}

// subCounts returns a client's subscriptions for CLIENT LIST: channels,
// patterns and shard channels.
func (s *Server) subCounts(c *conn) (sub, psub, ssub int) {
	ps := &s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if cs := c.subs; cs != nil {
		return len(cs.channels), len(cs.patterns), len(cs.shard)
	}
	return 0, 0, 0
}

// pubsubAllowed reports whether a command runs in RESP2's subscribed
// mode, where Redis allows only these.
func pubsubAllowed(cmd *command) bool {
	switch cmd.name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe",
		"punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// Message is a message published on a channel, as a Subscription receives
// it.
type Message struct {
	// Pattern is the pattern the channel matched, for a subscription to
	// patterns; empty otherwise.
	Pattern string
	// Channel is the channel the message was published on.
	Channel string
	// Payload is the message.
	Payload string
}

// Subscription receives the messages published on channels or patterns,
// in the test-double idiom: a test sees what the code under test
// published without a client. Create it with Server.Subscribe or
// Server.PSubscribe; Close ends it. It counts as a subscriber (PUBSUB
// NUMSUB, PUBLISH's count). Its methods are safe for concurrent use.
type Subscription struct {
	s        *Server
	patterns bool
	names    []string
	ch       chan Message
	mu       sync.Mutex
	closed   bool // guarded by mu
}

// SubscriptionBuffer is how many messages a Subscription holds for its
// reader: a subscription whose reader falls that far behind is closed, as
// the server closes a client that does not read (a publisher never
// waits).
const SubscriptionBuffer = 4096

// Subscribe returns a Subscription to the channels: every message
// published on one of them from then on (by PUBLISH, from scripts, by
// Publish, and keyspace notifications when notify-keyspace-events enables
// them), in the order each channel's messages were published.
func (s *Server) Subscribe(channels ...string) *Subscription {
	return s.subscribe(false, channels)
}

// PSubscribe returns a Subscription to the channels matching the glob
// patterns, as PSUBSCRIBE.
func (s *Server) PSubscribe(patterns ...string) *Subscription {
	return s.subscribe(true, patterns)
}

func (s *Server) subscribe(patterns bool, names []string) *Subscription {
	sub := &Subscription{s: s, patterns: patterns, names: slices.Compact(slices.Sorted(slices.Values(names))),
		ch: make(chan Message, SubscriptionBuffer)}
	ps := &s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, n := range sub.names {
		if patterns {
			if _, ok := ps.patterns[n]; !ok {
				ps.patOrder = append(ps.patOrder, n)
			}
			addLocked(ps.patterns, n, sub)
		} else {
			addLocked(ps.channels, n, sub)
		}
	}
	ps.any.Store(true)
	return sub
}

// Messages returns the channel the subscription's messages arrive on; it
// is closed by Close, and when the reader fell SubscriptionBuffer
// messages behind.
func (sub *Subscription) Messages() <-chan Message { return sub.ch }

// Close ends the subscription and closes its Messages channel. It is
// idempotent.
func (sub *Subscription) Close() {
	ps := &sub.s.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	sub.closeLocked()
}

// closeLocked unregisters the subscription and closes its channel. ps.mu
// must be held.
func (sub *Subscription) closeLocked() {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return
	}
	sub.closed = true
	ps := &sub.s.ps
	for _, n := range sub.names {
		if sub.patterns {
			removeLocked(ps.patterns, n, sub)
			if _, ok := ps.patterns[n]; !ok {
				ps.patOrder = slices.DeleteFunc(ps.patOrder, func(p string) bool { return p == n })
			}
		} else {
			removeLocked(ps.channels, n, sub)
		}
	}
	ps.any.Store(len(ps.channels)+len(ps.patterns)+len(ps.shard) > 0)
	close(sub.ch)
}

func (sub *Subscription) receive(m *message, _ *conn) bool {
	select {
	case sub.ch <- Message{Pattern: m.pattern, Channel: m.channel, Payload: m.payload}:
		return true
	default:
		return false
	}
}

// Publish publishes message on channel, as PUBLISH, and returns the number
// of subscribers that received it (clients and Subscriptions). It is safe
// for concurrent use.
func (s *Server) Publish(channel, message string) int {
	return s.publish(nil, channel, message, false)
}

// initPubsub makes the registry's maps, for New.
func (s *Server) initPubsub() {
	ps := &s.ps
	ps.channels = map[string][]receiver{}
	ps.patterns = map[string][]receiver{}
	ps.shard = map[string][]receiver{}
}
