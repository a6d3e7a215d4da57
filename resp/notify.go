package resp

// This file holds keyspace notifications, as Redis's notify.c: the
// notify-keyspace-events setting (Redis's flag letters), the classes of
// the events, and the server's listener on the change feed of every
// database's engine, which publishes each change as
// __keyspace@<db>__:<key> <event> and __keyevent@<db>__:<event> <key> and
// hands it to client-side caching (tracking.go). Because the listener
// hangs off the engines' feed, writes made through the engine's Go API
// (Options.Engine) publish and invalidate exactly as commands do.

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/nxkv/nxkv/engine"
)

// Keyspace event classes, Redis's NOTIFY_* flags.
const (
	notifyKeyspace = 1 << iota // K
	notifyKeyevent             // E
	notifyGeneric              // g
	notifyString               // $
	notifyList                 // l
	notifySet                  // s
	notifyHash                 // h
	notifyZset                 // z
	notifyExpired              // x
	notifyEvicted              // e
	notifyStream               // t
	notifyKeyMiss              // m: not part of A
	notifyLoaded               // modules only
	notifyModule               // d
	notifyNew                  // n: not part of A

	notifyAll = notifyGeneric | notifyString | notifyList | notifySet | notifyHash | notifyZset |
		notifyExpired | notifyEvicted | notifyStream | notifyModule
)

// errNotifyFlags is CONFIG SET's reason for a letter it does not know.
const errNotifyFlags = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

// parseNotifyFlags reads notify-keyspace-events as Redis's
// keyspaceEventsStringToFlags: ok is false for a letter it does not know.
func parseNotifyFlags(s string) (flags int, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			flags |= notifyAll
		case 'g':
			flags |= notifyGeneric
		case '$':
			flags |= notifyString
		case 'l':
			flags |= notifyList
		case 's':
			flags |= notifySet
		case 'h':
			flags |= notifyHash
		case 'z':
			flags |= notifyZset
		case 'x':
			flags |= notifyExpired
		case 'e':
			flags |= notifyEvicted
		case 'K':
			flags |= notifyKeyspace
		case 'E':
			flags |= notifyKeyevent
		case 't':
			flags |= notifyStream
		case 'm':
			flags |= notifyKeyMiss
		case 'd':
			flags |= notifyModule
		case 'n':
			flags |= notifyNew
		default:
			return 0, false
		}
	}
	return flags, true
}

// formatNotifyFlags writes flags as CONFIG GET shows them, Redis's
// keyspaceEventsFlagsToString: "A" for every class A covers, else the
// class letters in Redis's order, then K, E and m.
func formatNotifyFlags(flags int) string {
	var b []byte
	if flags&notifyAll == notifyAll {
		b = append(b, 'A')
	} else {
		for _, f := range []struct {
			flag   int
			letter byte
		}{{notifyGeneric, 'g'}, {notifyString, '$'}, {notifyList, 'l'}, {notifySet, 's'},
			{notifyHash, 'h'}, {notifyZset, 'z'}, {notifyExpired, 'x'}, {notifyEvicted, 'e'},
			{notifyStream, 't'}, {notifyModule, 'd'}, {notifyNew, 'n'}} {
			if flags&f.flag != 0 {
				b = append(b, f.letter)
			}
		}
	}
	if flags&notifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if flags&notifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if flags&notifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// eventClasses gives each event Redis publishes its class: those of the
// engine's own changes and of the commands a server composes in sections,
// for strings and keys and for the other types (whose events their
// commands name with Tx.Notify). An event not listed is generic.
var eventClasses = map[engine.Kind]int{
	"new": notifyNew, "expired": notifyExpired, "evicted": notifyEvicted, "keymiss": notifyKeyMiss,
	"set": notifyString, "setrange": notifyString, "append": notifyString, "incrby": notifyString,
	"incrbyfloat": notifyString, "setbit": notifyString, "pfadd": notifyString,
	"lpush": notifyList, "rpush": notifyList, "lpop": notifyList, "rpop": notifyList, "linsert": notifyList,
	"lset": notifyList, "lrem": notifyList, "ltrim": notifyList, "sortstore": notifyList,
	"sadd": notifySet, "srem": notifySet, "spop": notifySet, "sinterstore": notifySet,
	"sunionstore": notifySet, "sdiffstore": notifySet,
	"hset": notifyHash, "hdel": notifyHash, "hincrby": notifyHash, "hincrbyfloat": notifyHash,
	"zadd": notifyZset, "zincr": notifyZset, "zrem": notifyZset, "zremrangebyscore": notifyZset,
	"zremrangebyrank": notifyZset, "zremrangebylex": notifyZset, "zpopmin": notifyZset,
	"zpopmax": notifyZset, "zunionstore": notifyZset, "zinterstore": notifyZset,
	"zdiffstore": notifyZset, "zrangestore": notifyZset, "georadiusstore": notifyZset,
	"geosearchstore": notifyZset,
	"xadd":           notifyStream, "xdel": notifyStream, "xtrim": notifyStream, "xsetid": notifyStream,
	"xgroup-create": notifyStream, "xgroup-createconsumer": notifyStream, "xgroup-delconsumer": notifyStream,
	"xgroup-destroy": notifyStream, "xgroup-setid": notifyStream,
}

// eventClass returns the class of an event.
func eventClass(k engine.Kind) int {
	if c, ok := eventClasses[k]; ok {
		return c
	}
	return notifyGeneric
}

// notifyState is the server's keyspace notification setting and its
// listener on the databases' change feed.
type notifyState struct {
	flags atomic.Int32 // notify-keyspace-events
	dirty atomic.Bool  // the listener's need may have changed (feedChanged)

	mu     sync.Mutex
	needed bool                   // guarded by mu: the listener is installed
	stops  [Databases]func()      // guarded by mu: each database's listener, nil if none
	dbs    [Databases]*dbNotifier // guarded by mu
}

// dbNotifier is the listener of one database.
type dbNotifier struct {
	s  *Server
	db int
	// prefix is "@<db>__:", shared by both channel names.
	prefix string
}

// setNotifyFlags applies notify-keyspace-events; the listener follows
// after the command (feedChanged).
func (s *Server) setNotifyFlags(flags int) {
	s.notify.flags.Store(int32(flags))
	s.feedChanged()
}

// feedChanged records that whether the listener is needed may have
// changed. Installing or removing it takes every shard's lock, which a
// command inside a transaction's section holds: so the change is made after
// the command that asked for it, outside any section (updateFeed, called
// by the dispatcher and by ConfigSet). A transaction that may turn the
// listener on installs it before it locks anything (prepareFeed).
func (s *Server) feedChanged() { s.notify.dirty.Store(true) }

// prepareFeed installs the listener before a transaction whose commands
// may need it (CLIENT TRACKING, CONFIG SET), so that it hears the changes
// the transaction makes after them; an unneeded listener is removed after
// the transaction.
func (s *Server) prepareFeed(cmds []queued) {
	for _, q := range cmds {
		if q.cmd.name == "client|tracking" || q.cmd.name == "config|set" {
			s.installFeed(true)
			s.feedChanged()
			return
		}
	}
}

// updateFeed installs the listener on every database when keyspace
// notifications or client-side caching need it, and removes it when
// neither does, after feedChanged: without it the engines' writes cost
// what a bare engine's do (a caller's Options.Engine included).
// Installing takes every shard's lock of every existing database
// (engine.Listen), so it is done only when the need changes, and never
// inside a section.
func (s *Server) updateFeed() {
	if s.notify.dirty.Load() {
		s.syncFeed()
	}
}

// syncFeed installs or removes the listener as the settings and tracking
// clients need now, and returns once it is done. It must not be called
// inside a section.
func (s *Server) syncFeed() {
	n := &s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dirty.Store(false)
	s.installFeedLocked(n.flags.Load() != 0 || s.trk.clientCount.Load() > 0)
}

// installFeed installs or removes the listener on every database. It must
// not be called inside a section.
func (s *Server) installFeed(need bool) {
	n := &s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	s.installFeedLocked(need)
}

// installFeedLocked is installFeed with n.mu held.
func (s *Server) installFeedLocked(need bool) {
	n := &s.notify
	if need == n.needed {
		return
	}
	n.needed = need
	for i := range Databases {
		if need {
			if e := s.existingDB(i); e != nil {
				n.attachLocked(s, i, e)
			}
		} else if n.stops[i] != nil {
			n.stops[i]()
			n.stops[i] = nil
		}
	}
}

// attachLocked installs the listener on database i's engine e. mu must be
// held.
func (n *notifyState) attachLocked(s *Server, i int, e *engine.Engine) {
	if n.stops[i] != nil {
		return
	}
	if n.dbs[i] == nil {
		n.dbs[i] = &dbNotifier{s: s, db: i, prefix: "@" + strconv.Itoa(i) + "__:"}
	}
	n.stops[i] = e.Listen(n.dbs[i].event)
}

// dbCreated installs the listener on a database created after the feed
// was: DB calls it, through the server's newDB hook.
func (s *Server) dbCreated(i int, e *engine.Engine) {
	n := &s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.needed {
		n.attachLocked(s, i, e)
	}
}

// stopFeed removes every listener, for Close: the caller's engine
// (Options.Engine) outlives the server.
func (s *Server) stopFeed() {
	n := &s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	n.needed = false
	for i, stop := range n.stops {
		if stop != nil {
			stop()
			n.stops[i] = nil
		}
	}
}

// event is the listener of one database: it runs under the key's shard
// lock, on the goroutine that made the change, so it only publishes and
// invalidates, both of which queue output and never wait. Its order per
// event follows Redis's: a key's invalidation (signalModifiedKey) comes
// before the notification of a write or an eviction, after that of an
// expiry; "new" is
// published at once and its key invalidated with the write that follows
// (so RENAME invalidates both keys before its two notifications, as in
// Redis); a flush publishes nothing.
func (d *dbNotifier) event(ev engine.Event) {
	s := d.s
	origin, _ := ev.Tag.(*conn)
	switch ev.Kind {
	case engine.KindFlush:
		if ev.Tag == nil {
			// A flush through the Go API (FLUSHDB, FLUSHALL and FlushAll
			// tag their sections and invalidate once themselves).
			s.trackingFlushed(nil)
		}
		return
	case engine.KindNew:
		defer origin.unhold()()
		d.publish(ev, origin)
		if origin != nil {
			origin.pendingNew = append(origin.pendingNew, ev.Key)
		}
		return
	case engine.KindExpired:
		defer origin.unhold()()
		d.publish(ev, origin)
		s.trackingInvalidate(ev.Key, origin, nil)
		return
	case engine.KindEvicted:
		s.trackingInvalidate(ev.Key, origin, nil)
		d.publish(ev, origin)
		return
	}
	s.trackingInvalidate(ev.Key, origin, bcastModifier(origin))
	if origin != nil && len(origin.pendingNew) > 0 {
		origin.invalidatePendingNew()
	}
	d.publish(ev, origin)
}

// unhold lets what c's own command pushes to c go before its reply for
// a moment, even in a repliesFirst command (for "new" and "expired", which
// Redis reports as it adds or finds a key), and returns what restores it;
// c may be nil.
func (c *conn) unhold() (restore func()) {
	if c == nil || !c.holding || c.muted {
		return func() {}
	}
	c.holding = false
	return func() { c.holding = true }
}

// scriptClient stands for the client a script's commands run as (Redis's
// Lua client): a BCAST NOLOOP client is not told of its own changes, but
// its script's changes are not its own there.
var scriptClient = new(conn)

// bcastModifier is who made a change, for BCAST's NOLOOP.
func bcastModifier(origin *conn) *conn {
	if origin != nil && origin.inScript {
		return scriptClient
	}
	return origin
}

// invalidatePendingNew invalidates the keys whose "new" event came before
// the write that follows it; it runs on c's own goroutine.
func (c *conn) invalidatePendingNew() {
	for _, k := range c.pendingNew {
		c.s.trackingInvalidate(k, c, bcastModifier(c))
	}
	clear(c.pendingNew)
	c.pendingNew = c.pendingNew[:0]
}

// publish publishes ev on the keyspace and keyevent channels, as Redis's
// notifyKeyspaceEvent, when its class is enabled and someone could
// receive it.
func (d *dbNotifier) publish(ev engine.Event, origin *conn) {
	flags := int(d.s.notify.flags.Load())
	if flags&eventClass(ev.Kind) == 0 || !d.s.ps.any.Load() {
		return
	}
	kind := string(ev.Kind)
	if flags&notifyKeyspace != 0 {
		d.s.publish(origin, "__keyspace"+d.prefix+ev.Key, kind, false)
	}
	if flags&notifyKeyevent != 0 {
		d.s.publish(origin, "__keyevent"+d.prefix+kind, ev.Key, false)
	}
}

// missNotified reports whether a read's miss is published (class m) and
// someone could receive it.
func (x *call) missNotified() bool {
	return x.s.notify.flags.Load()&notifyKeyMiss != 0 && x.s.ps.any.Load()
}

// miss publishes a read's miss of key in the command's database (Redis's
// keymiss event, class m), for the commands that look a key up to read it
// (GET, MGET, EXISTS, TTL, ...), at the moment they look it up.
func (x *call) miss(key string) {
	if !x.missNotified() {
		return
	}
	defer x.c.unhold()() // a read comes before the reply, whatever the command
	s := x.s
	flags := int(s.notify.flags.Load())
	prefix := "@" + strconv.Itoa(x.db) + "__:"
	if flags&notifyKeyspace != 0 {
		s.publish(x.c, "__keyspace"+prefix+key, "keymiss", false)
	}
	if flags&notifyKeyevent != 0 {
		s.publish(x.c, "__keyevent"+prefix+"keymiss", key, false)
	}
}
