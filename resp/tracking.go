package resp

// This file holds server-assisted client-side caching, as Redis's
// tracking.c: CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO; the
// table of the keys each tracking client read (one table for every
// database, by key name, as Redis's); and the invalidation messages, sent
// when a key changes (fed by the engines' change feed, notify.go) as a
// RESP3 push, or to a redirection client, which in RESP2 receives them on
// __redis__:invalidate.
//
// Which client made a change matters twice, as in Redis: a NOLOOP client
// is not told of its own changes, and a client's own invalidations come
// after the reply of the command that caused them (after EXEC's or a
// script's whole reply), while everyone else's are queued at once. The
// engine's events say nothing of clients, so the server tags the engine
// section that runs a client's command with the client (engine.Tx.SetTag)
// and the listener reads the tag back (engine.Event.Tag). Commands of a
// tracking client run in such a section, over their keys, which also
// makes a read and the remembering of its keys one atomic step: no write
// can fall between them and go unnoticed.

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// trackingState is the server's tracking table. Its lock is taken under
// engine shard locks (the change feed, the remembering of a read) and
// takes clients' outbox locks.
type trackingState struct {
	mu       sync.Mutex
	keys     map[string]map[int64]struct{} // guarded by mu: key -> ids of the clients that read it
	items    int64                         // guarded by mu: ids in keys, summed
	clients  map[int64]*conn               // guarded by mu: clients with tracking on
	prefixes map[string]*bcastState        // guarded by mu: BCAST prefixes
	// limitEffort, guarded by mu, counts the times in a row trackingLimit
	// left the table past its limit (Redis's timeout_counter).
	limitEffort int
	// bcastPending is set while a prefix has keys to broadcast.
	bcastPending atomic.Bool
	clientCount  atomic.Int64 // clients with tracking on
	bcastCount   atomic.Int64 // of which in BCAST mode
	keyCount     atomic.Int64 // len(keys), for the limit's lock-free check
	maxKeys      atomic.Int64 // tracking-table-max-keys; 0: no limit
}

// defaultTrackingMaxKeys is Redis's tracking-table-max-keys.
const defaultTrackingMaxKeys = 1000000

// bcastState is one BCAST prefix: the keys changed since its last
// broadcast, each with the client that changed it last (nil: none, or
// an expiry), and its clients.
type bcastState struct {
	keys    map[string]*conn
	clients []*conn
}

// clientTracking is a client's tracking mode, guarded by
// trackingState.mu (its own goroutine reads it without the lock).
type clientTracking struct {
	bcast, optin, optout, noloop bool
	brokenRedir                  bool
	redirect                     int64 // the client id invalidations go to; 0: the client itself
	redir                        *conn // that client
	prefixes                     []string
}

func (s *Server) initTracking() {
	t := &s.trk
	t.keys = map[string]map[int64]struct{}{}
	t.clients = map[int64]*conn{}
	t.prefixes = map[string]*bcastState{}
	t.maxKeys.Store(defaultTrackingMaxKeys)
}

// pendingInv is an invalidation of a client's own change, sent after its
// command's reply: a key, or a flush (all keys).
type pendingInv struct {
	key   string
	flush bool
}

// Invalidation frames.
const (
	invalidateHeader   = ">2\r\n$10\r\ninvalidate\r\n"
	invalidateMessage2 = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
)

// cmdClientTracking is CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST]
// [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP], with Redis's checks in
// Redis's order.
func cmdClientTracking(x *call) {
	var redir int64
	var bcast, optin, optout, noloop bool
	var prefixes []string
	var redirConn *conn
	for j := 3; j < len(x.args); j++ {
		more := len(x.args) - 1 - j
		switch a := x.args[j]; {
		case equalFold(a, "redirect") && more > 0:
			j++
			if redir != 0 {
				x.w.errorReply("ERR A client can only redirect to a single other client")
				return
			}
			n, ok := x.intArg(j)
			if !ok {
				return
			}
			redir = n
			if redirConn = x.s.clientByID(n); redirConn == nil {
				x.w.errorReply("ERR The client ID you want redirect to does not exist")
				return
			}
		case equalFold(a, "bcast"):
			bcast = true
		case equalFold(a, "optin"):
			optin = true
		case equalFold(a, "optout"):
			optout = true
		case equalFold(a, "noloop"):
			noloop = true
		case equalFold(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, string(x.args[j]))
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	c := x.c
	switch {
	case equalFold(x.args[2], "on"):
		old := c.trk
		switch {
		case !bcast && len(prefixes) > 0:
			x.w.errorReply("ERR PREFIX option requires BCAST mode to be enabled")
			return
		case old != nil && old.bcast != bcast:
			x.w.errorReply("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		case bcast && (optin || optout):
			x.w.errorReply("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		case optin && optout:
			x.w.errorReply("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		case old != nil && (optin && old.optout || optout && old.optin):
			x.w.errorReply("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast {
			if msg := prefixCollision(old, prefixes); msg != "" {
				x.w.errorReply(msg)
				return
			}
		}
		x.s.enableTracking(c, &clientTracking{bcast: bcast, optin: optin, optout: optout, noloop: noloop,
			redirect: redir, redir: redirConn}, prefixes)
	case equalFold(x.args[2], "off"):
		x.s.disableTracking(c)
	default:
		x.w.errorReply(errSyntax)
		return
	}
	if !x.tx {
		// The listener is in place before the reply, so no change after
		// the client's next read goes unheard (a transaction installed it
		// before it began).
		x.s.syncFeed()
	}
	x.w.simple("OK")
}

// prefixCollision is Redis's checkPrefixCollisionsOrReply: the error for
// a prefix that overlaps one the client has or another given, "" if none.
func prefixCollision(old *clientTracking, prefixes []string) string {
	overlap := func(a, b string) bool {
		n := min(len(a), len(b))
		return a[:n] == b[:n]
	}
	for i, p := range prefixes {
		if old != nil {
			for _, q := range old.prefixes {
				if overlap(q, p) {
					return "ERR Prefix '" + sanitize(p) + "' overlaps with an existing prefix '" + sanitize(q) +
						"'. Prefixes for a single client must not overlap."
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + sanitize(p) + "' overlaps with another provided prefix '" + sanitize(q) +
					"'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// enableTracking turns tracking on for c in mode t (Redis's
// enableTracking: the mode replaces the old one, BCAST prefixes add to
// the old ones, and BCAST without prefixes tracks every key).
func (s *Server) enableTracking(c *conn, t *clientTracking, prefixes []string) {
	tr := &s.trk
	tr.mu.Lock()
	old := c.trk
	if old == nil {
		tr.clientCount.Add(1)
		if t.bcast {
			tr.bcastCount.Add(1)
		}
		tr.clients[c.id] = c
		if !c.trkHooked {
			c.trkHooked = true
			c.atClose(func() {
				s.disableTracking(c)
				s.updateFeed() // the close runs outside any section
			})
		}
	} else {
		t.prefixes = old.prefixes
	}
	if t.redir != nil {
		t.redir.redirTargets.Add(1)
	}
	if old != nil && old.redir != nil {
		old.redir.redirTargets.Add(-1)
	}
	if t.bcast {
		if len(prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			bs := tr.prefixes[p]
			if bs == nil {
				bs = &bcastState{keys: map[string]*conn{}}
				tr.prefixes[p] = bs
			}
			if !slices.Contains(bs.clients, c) {
				bs.clients = append(bs.clients, c)
				t.prefixes = append(t.prefixes, p)
			}
		}
		slices.Sort(t.prefixes)
	}
	c.trk = t
	tr.mu.Unlock()
	s.feedChanged()
}

// disableTracking turns tracking off for c (CLIENT TRACKING OFF, RESET,
// and the close of the connection). The keys it read stay in the table
// until they change, as in Redis, and are then skipped.
func (s *Server) disableTracking(c *conn) {
	tr := &s.trk
	tr.mu.Lock()
	t := c.trk
	if t == nil {
		tr.mu.Unlock()
		return
	}
	c.caching = false // as Redis clears its CACHING flag with tracking's
	for _, p := range t.prefixes {
		if bs := tr.prefixes[p]; bs != nil {
			bs.clients = slices.DeleteFunc(bs.clients, func(o *conn) bool { return o == c })
			if len(bs.clients) == 0 {
				delete(tr.prefixes, p)
			}
		}
	}
	if t.redir != nil {
		t.redir.redirTargets.Add(-1)
	}
	if t.bcast {
		tr.bcastCount.Add(-1)
	}
	delete(tr.clients, c.id)
	tr.clientCount.Add(-1)
	c.trk = nil
	tr.mu.Unlock()
	s.feedChanged()
}

// clientByID returns the open client with id n, nil if none.
func (s *Server) clientByID(n int64) *conn {
	for _, c := range s.connections() {
		if c.id == n && !c.gone() {
			return c
		}
	}
	return nil
}

// gone reports whether c is closed or closing: its outbox refuses
// pushes.
func (c *conn) gone() bool {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.closed
}

func cmdClientCaching(x *call) {
	t := x.c.trk
	if t == nil {
		x.w.errorReply("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case equalFold(x.args[2], "yes"):
		if !t.optin {
			x.w.errorReply("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case equalFold(x.args[2], "no"):
		if !t.optout {
			x.w.errorReply("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		x.w.errorReply(errSyntax)
		return
	}
	x.c.caching = true
	x.w.simple("OK")
}

func cmdClientGetRedir(x *call) {
	if t := x.c.trk; t != nil {
		x.w.int(t.redirect)
	} else {
		x.w.int(-1)
	}
}

func cmdClientTrackingInfo(x *call) {
	c, t := x.c, x.c.trk
	flags := []string{"off"}
	redirect := int64(-1)
	var prefixes []string
	if t != nil {
		flags[0] = "on"
		x.s.trk.mu.Lock()
		for _, f := range []struct {
			on   bool
			name string
		}{{t.bcast, "bcast"}, {t.optin, "optin"}, {t.optin && c.caching, "caching-yes"}, {t.optout, "optout"},
			{t.optout && c.caching, "caching-no"}, {t.noloop, "noloop"}, {t.brokenRedir, "broken_redirect"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		redirect, prefixes = t.redirect, slices.Clone(t.prefixes)
		x.s.trk.mu.Unlock()
	}
	w := x.w
	w.mapHeader(3)
	w.bulkString("flags")
	w.set(len(flags))
	for _, f := range flags {
		w.bulkString(f)
	}
	w.bulkString("redirect")
	w.int(redirect)
	w.bulkString("prefixes")
	w.array(len(prefixes))
	for _, p := range prefixes {
		w.bulkString(p)
	}
}

// trackingRemember records the keys a read command of a tracking client
// fetched (Redis's trackingRememberKeys): called after each read-only
// command, those a script or a transaction runs included, inside the
// section that ran it. x.c is the client, a script's caller for the
// script's commands; a read in a script remembers every key the script
// declared, as Redis does.
func (s *Server) trackingRemember(x *call) {
	c := x.c
	t := c.trk
	if t == nil || t.bcast || x.cmd.flags&readonly == 0 || x.cmd.flags&pubSub != 0 ||
		x.cmd.name == "eval_ro" || x.cmd.name == "evalsha_ro" {
		return
	}
	if (t.optin && !c.caching) || (t.optout && c.caching) {
		return
	}
	var keys [][]byte
	if x.lua != nil {
		keys = x.lua.keys
	} else {
		pos, ok := x.cmd.keys.positions(x.args)
		if !ok {
			return
		}
		keys = make([][]byte, len(pos))
		for i, p := range pos {
			keys[i] = x.args[p]
		}
	}
	if len(keys) == 0 {
		return
	}
	tr := &s.trk
	tr.mu.Lock()
	for _, a := range keys {
		k := string(a)
		ids := tr.keys[k]
		if ids == nil {
			ids = map[int64]struct{}{}
			tr.keys[k] = ids
		}
		if _, ok := ids[c.id]; !ok {
			ids[c.id] = struct{}{}
			tr.items++
		}
	}
	tr.keyCount.Store(int64(len(tr.keys)))
	tr.mu.Unlock()
}

// trackingInvalidate handles a change of key (Redis's
// trackingInvalidateKey): it records the key for the BCAST prefixes it
// matches, as changed by bcastBy, and invalidates it for every client
// that read it since its last change, forgetting it. origin is the client
// whose command made the change (nil: none): a NOLOOP origin is skipped,
// and an origin's own invalidation waits for its reply.
func (s *Server) trackingInvalidate(key string, origin, bcastBy *conn) {
	tr := &s.trk
	if tr.clientCount.Load() == 0 {
		return
	}
	tr.mu.Lock()
	if len(tr.prefixes) > 0 {
		for p, bs := range tr.prefixes {
			if strings.HasPrefix(key, p) {
				bs.keys[key] = bcastBy
				tr.bcastPending.Store(true)
			}
		}
	}
	s.invalidateLocked(key, origin, true)
	tr.mu.Unlock()
	if origin == nil && tr.bcastPending.Load() {
		s.trackingBroadcast(nil)
	}
}

// invalidateLocked sends key's invalidation to the clients that read it,
// and forgets them. defer sends the origin's own after its reply; the
// table's limit sends it at once, before the command (Redis calls it
// before running a command). tr.mu must be held.
func (s *Server) invalidateLocked(key string, origin *conn, deferOwn bool) {
	tr := &s.trk
	ids := tr.keys[key]
	if ids == nil {
		return
	}
	delete(tr.keys, key)
	tr.items -= int64(len(ids))
	tr.keyCount.Store(int64(len(tr.keys)))
	for id := range ids {
		t := tr.clients[id]
		if t == nil || t.trk == nil || t.trk.bcast {
			continue
		}
		if t.trk.noloop && t == origin && s.plantedPush != "tracking" {
			continue
		}
		if t == origin && deferOwn {
			t.pendingInv = append(t.pendingInv, pendingInv{key: key})
			continue
		}
		s.sendInvalidationLocked(t, keyArray(key), origin)
	}
}

// keyArray encodes the invalidation's value for one key.
func keyArray(key string) []byte {
	return appendBulk(appendHeader(make([]byte, 0, len(key)+16), '*', 1), key)
}

// nullValue is the invalidation's value for a flush: a null in the
// tracking client's protocol (Redis encodes it so even when the message
// goes to a redirection client of the other protocol).
func nullValue(t *conn) []byte {
	if t.resp.Load() == 3 {
		return []byte("_\r\n")
	}
	return []byte("$-1\r\n")
}

// sendInvalidationLocked sends an invalidation for tracking client t,
// whose value (the keys, or a null) is encoded, as Redis's
// sendTrackingMessage: to t in RESP3, or to its redirection client, as a
// push in RESP3 or, in RESP2, as a message on __redis__:invalidate if it
// is in pub/sub mode; else nothing. A redirection client that is gone
// marks t's redirection broken and tells t (in RESP3). tr.mu must be
// held.
func (s *Server) sendInvalidationLocked(t *conn, value []byte, origin *conn) {
	r := t
	redirected := false
	if tt := t.trk; tt != nil && tt.redirect != 0 {
		if tt.redir == nil || tt.redir.gone() {
			tt.brokenRedir = true
			if t.resp.Load() == 3 {
				b := appendBulk(appendHeader(nil, '>', 2), "tracking-redir-broken")
				b = append(b, ':')
				b = strconv.AppendInt(b, tt.redirect, 10)
				t.deliver(append(b, '\r', '\n'), origin)
			}
			return
		}
		r, redirected = tt.redir, true
	}
	var frame []byte
	switch {
	case r.resp.Load() == 3:
		frame = append([]byte(invalidateHeader), value...)
	case redirected && r.subscribed.Load():
		frame = append([]byte(invalidateMessage2), value...)
	default:
		return
	}
	r.deliver(frame, origin)
}

// trackingFlushed sends the null invalidation of a flush to every
// tracking client and empties the table (Redis's
// trackingInvalidateKeysOnFlush): FLUSHDB, FLUSHALL and SWAPDB call it
// once, with their client as origin, whose own waits for its reply; a
// flush through the engine's Go API calls it with none.
func (s *Server) trackingFlushed(origin *conn) {
	tr := &s.trk
	if tr.clientCount.Load() == 0 && tr.keyCount.Load() == 0 {
		return // (keys stay tracked for clients that turned tracking off)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ids := make([]int64, 0, len(tr.clients))
	for id := range tr.clients {
		ids = append(ids, id)
	}
	slices.Sort(ids) // Redis walks its clients in order of connection
	for _, id := range ids {
		t := tr.clients[id]
		if t == origin {
			t.pendingInv = append(t.pendingInv, pendingInv{flush: true})
			continue
		}
		s.sendInvalidationLocked(t, nullValue(t), origin)
	}
	clear(tr.keys)
	tr.items = 0
	tr.keyCount.Store(0)
}

// trackingAfterCommand runs after each command a client sent (after EXEC
// and scripts as a whole), on its goroutine, behind the command's reply,
// as Redis's afterCommand: it sends the client's own invalidations and
// ends the effect of CLIENT CACHING, which lasts one command (or
// transaction). BCAST invalidations go at the end of the client's batch
// of requests (process), as Redis sends them before it sleeps.
func (s *Server) trackingAfterCommand(c *conn, cmd *command) {
	if len(c.pendingNew) > 0 {
		c.invalidatePendingNew()
	}
	if len(c.pendingInv) > 0 {
		tr := &s.trk
		tr.mu.Lock()
		for _, p := range c.pendingInv {
			if p.flush {
				s.sendInvalidationLocked(c, nullValue(c), c)
			} else {
				s.sendInvalidationLocked(c, keyArray(p.key), c)
			}
		}
		tr.mu.Unlock()
		clear(c.pendingInv)
		c.pendingInv = c.pendingInv[:0]
	}
	if c.quit && s.trk.bcastPending.Load() {
		s.trackingBroadcast(c) // the batch ends here
	}
	if c.caching && c.multi == nil && !strings.HasPrefix(cmd.name, "client") {
		c.caching = false
	}
}

// trackingBroadcast sends each BCAST prefix's changed keys, sorted, to its
// clients (Redis's trackingBroadcastInvalidationMessages), leaving out of
// a NOLOOP client's message the keys it changed last itself; origin is
// the client on whose goroutine it runs (nil: none).
func (s *Server) trackingBroadcast(origin *conn) {
	tr := &s.trk
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if !tr.bcastPending.Swap(false) {
		return
	}
	prefixes := make([]string, 0, len(tr.prefixes))
	for p := range tr.prefixes {
		prefixes = append(prefixes, p)
	}
	slices.Sort(prefixes)
	for _, p := range prefixes {
		bs := tr.prefixes[p]
		if len(bs.keys) == 0 {
			continue
		}
		keys := make([]string, 0, len(bs.keys))
		for k := range bs.keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		all := keysArray(keys, bs.keys, nil)
		for _, c := range bs.clients {
			if c.trk != nil && c.trk.noloop {
				if v := keysArray(keys, bs.keys, c); v != nil {
					s.sendInvalidationLocked(c, v, origin)
				}
				continue
			}
			s.sendInvalidationLocked(c, all, origin)
		}
		clear(bs.keys)
	}
}

// keysArray encodes keys as an invalidation's value, leaving out those
// last changed by skip (nil: none); nil if none is left.
func keysArray(keys []string, by map[string]*conn, skip *conn) []byte {
	n := 0
	for _, k := range keys {
		if skip == nil || by[k] != skip {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	b := appendHeader(nil, '*', n)
	for _, k := range keys {
		if skip == nil || by[k] != skip {
			b = appendBulk(b, k)
		}
	}
	return b
}

// trackingLimit keeps the table within tracking-table-max-keys, as Redis's
// trackingLimitUsedSlots before each command: it forgets random keys, and
// invalidates them for their clients as if they had changed, until the
// table fits, with an effort that grows while it does not. c is the
// client about to run a command.
func (s *Server) trackingLimit(c *conn) {
	tr := &s.trk
	tr.mu.Lock()
	defer tr.mu.Unlock()
	limit := int(tr.maxKeys.Load())
	if limit == 0 || len(tr.keys) <= limit {
		tr.limitEffort = 0
		return
	}
	effort := 100 * (tr.limitEffort + 1)
	for k := range tr.keys {
		if effort == 0 {
			break
		}
		effort--
		s.invalidateLocked(k, c, false)
		if len(tr.keys) <= limit {
			tr.limitEffort = 0
			return
		}
	}
	tr.limitEffort++
}

// overLimit reports, without the lock, whether the table may be past its
// limit.
func (tr *trackingState) overLimit() bool {
	m := tr.maxKeys.Load()
	return m > 0 && tr.keyCount.Load() > m
}

// trackingCounts returns INFO's tracking_clients, tracking_total_keys,
// tracking_total_items and tracking_total_prefixes.
func (s *Server) trackingCounts() (clients, keys, items, prefixes int64) {
	tr := &s.trk
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.clientCount.Load(), int64(len(tr.keys)), tr.items, int64(len(tr.prefixes))
}

// trackingFlags returns a client's CLIENT LIST flags of tracking (t, B, R)
// and its redirection (-1 when not tracking).
func (s *Server) trackingFlags(c *conn) (flags string, redir int64) {
	tr := &s.trk
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := c.trk
	if t == nil {
		return "", -1
	}
	flags = "t"
	if t.brokenRedir {
		flags += "R"
	}
	if t.bcast {
		flags += "B"
	}
	return flags, t.redirect
}
