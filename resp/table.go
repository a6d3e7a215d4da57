package resp

// This file holds the command table's machinery, as Redis's server.c: the
// shape of a declaration (flags, ACL categories, key positions), the table
// the declarations of commands.go fill, lookup with Redis's errors, and
// the per-server statistics of INFO commandstats.

import (
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// cmdFlags are a command's flags: Redis's, in the order COMMAND INFO lists
// them, then nxkv's own, which COMMAND INFO does not show.
type cmdFlags uint32

const (
	write cmdFlags = 1 << iota
	readonly
	denyOOM
	admin
	pubSub
	// noScript commands are refused inside Lua scripts.
	noScript
	blocking
	loading
	stale
	skipMonitor
	skipSlowlog
	fast
	// noAuth commands run before authentication (AUTH, HELLO, QUIT, RESET).
	noAuth
	noMandatoryKeys
	noMulti
	movableKeys
	allowBusy

	// noQueue commands run at once inside MULTI instead of being queued.
	noQueue
	// allDBs commands may touch other databases than the selected one
	// (SELECT, MOVE, COPY ... DB, FLUSHALL, and INFO, which counts their
	// keys); a transaction holding them locks every database.
	allDBs
	// mayReplicate is Redis's may_replicate, which its COMMAND INFO does
	// not show: a monitor may not run such a command (PUBLISH, EVAL).
	mayReplicate
	// repliesFirst commands reply before they report their changes, as
	// Redis's do (HSET, LPUSH, ZADD, SUNIONSTORE, ...: addReply, then
	// signalModifiedKey and notifyKeyspaceEvent), except a key's creation
	// ("new", reported as the key is added): what their changes push to
	// their own client (its keyspace notifications, and the invalidations
	// it receives as another client's redirection) follows their reply.
	repliesFirst
)

// cmdFlagNames names the flags COMMAND INFO shows, in its order.
var cmdFlagNames = []struct {
	flag cmdFlags
	name string
}{
	{write, "write"}, {readonly, "readonly"}, {denyOOM, "denyoom"}, {admin, "admin"},
	{pubSub, "pubsub"}, {noScript, "noscript"}, {blocking, "blocking"}, {loading, "loading"},
	{stale, "stale"}, {skipMonitor, "skip_monitor"}, {skipSlowlog, "skip_slowlog"},
	{fast, "fast"}, {noAuth, "no_auth"}, {noMandatoryKeys, "no_mandatory_keys"},
	{noMulti, "no_multi"}, {movableKeys, "movablekeys"}, {allowBusy, "allow_busy"},
}

// aclCats are ACL categories, in Redis's order.
type aclCats uint32

const (
	aclKeyspace aclCats = 1 << iota
	aclRead
	aclWrite
	aclSet
	aclSortedSet
	aclList
	aclHash
	aclString
	aclBitmap
	aclHyperLogLog
	aclGeo
	aclStream
	aclPubSub
	aclAdmin
	aclFast
	aclSlow
	aclBlocking
	aclDangerous
	aclConnection
	aclTransaction
	aclScripting
)

// aclNames names the categories, bit by bit.
var aclNames = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting"}

// categories returns the command's ACL categories: those it declares and
// those its flags imply, by Redis's rules (write and read from the flags,
// scripting commands never read; admin is dangerous; a command that is
// not fast is slow).
func (c *command) categories() aclCats {
	cats := c.acl
	if c.flags&write != 0 {
		cats |= aclWrite
	}
	if c.flags&readonly != 0 && cats&aclScripting == 0 {
		cats |= aclRead
	}
	if c.flags&admin != 0 {
		cats |= aclAdmin | aclDangerous
	}
	if c.flags&pubSub != 0 {
		cats |= aclPubSub
	}
	if c.flags&fast != 0 {
		cats |= aclFast
	}
	if c.flags&blocking != 0 {
		cats |= aclBlocking
	}
	if cats&aclFast == 0 {
		cats |= aclSlow
	}
	return cats
}

// keySpec says where a command's keys are: arguments first to last (a
// negative last counts from the end) every step; or, when numkeys is not
// 0, as many as argument numkeys says, from the one after it, every step
// (EVAL: 1, MSETEX: 2; 0 counts as 1), after argument first if that is
// not 0 (ZUNIONSTORE's destination). The zero keySpec is a command
// without keys.
type keySpec struct {
	first, last, step, numkeys int
}

// key1 is the spec of the commands whose only key is argument 1.
var key1 = keySpec{1, 1, 1, 0}

// legacy returns the first key, last key and step COMMAND INFO shows:
// zeros for keys counted by an argument, whose positions move.
func (k keySpec) legacy() (first, last, step int) {
	if k.numkeys != 0 {
		if k.first != 0 {
			return k.first, k.first, 1
		}
		return 0, 0, 0
	}
	return k.first, k.last, k.step
}

// positions returns the positions of the keys in args, a request for the
// command; ok is false when args name none that make sense (a bad
// numkeys).
func (k keySpec) positions(args [][]byte) (pos []int, ok bool) {
	if k.numkeys != 0 {
		n, ok := parseInt(args[k.numkeys])
		if !ok || n <= 0 || n > int64(len(args)) {
			return nil, false
		}
		step := max(k.step, 1)
		if int64(len(args)-k.numkeys-1) < n*int64(step)-int64(step-1) {
			return nil, false
		}
		if k.first != 0 {
			pos = append(pos, k.first)
		}
		for i := range int(n) {
			pos = append(pos, k.numkeys+1+i*step)
		}
		return pos, true
	}
	last := k.last
	if last < 0 {
		last += len(args)
	}
	for i := k.first; i <= last && i < len(args); i += k.step {
		pos = append(pos, i)
	}
	return pos, len(pos) > 0
}

// command is one declaration of the table.
type command struct {
	name  string // lower case; "container|sub" for subcommands
	arity int    // > 0: exact argument count; < 0: at least -arity
	flags cmdFlags
	acl   aclCats // the categories it declares; see categories
	keys  keySpec
	group string // Redis's command group: "string", "generic", ...
	since string // the Redis version that introduced it
	// deprecated is the Redis version that deprecated it, if any.
	deprecated string
	complexity string
	summary    string
	// note says where nxkv's command differs from Redis's, for
	// COMMANDS.md.
	note string
	tips []string // Redis's command tips (request and response policies)
	fn   func(x *call)
	// findKeys, if set, finds the keys where keys cannot say (SORT's
	// STORE): the positions COMMAND GETKEYS reports.
	findKeys func(args [][]byte) []int

	subs map[string]*command // a container's subcommands, filled by register
	id   int                 // the command's index in allCommands
}

// cmdStats counts a command's calls for INFO commandstats; a Server has
// one per command. Its fields are atomic.
type cmdStats struct {
	calls, usec, rejected, failed atomic.Int64
}

// commandTable maps lower-case names to commands. It is filled at init
// from commands and read-only afterwards.
var commandTable = map[string]*command{}

// allCommands lists every command and subcommand of the table, by id.
var allCommands []*command

// register adds commands to the table (at init); a subcommand comes after
// its container.
func register(cmds ...*command) {
	for _, c := range cmds {
		c.id = len(allCommands)
		allCommands = append(allCommands, c)
		if i := strings.IndexByte(c.name, '|'); i >= 0 {
			parent := commandTable[c.name[:i]]
			if parent.subs == nil {
				parent.subs = map[string]*command{}
			}
			parent.subs[c.name[i+1:]] = c
			continue
		}
		commandTable[c.name] = c
	}
}

// lookup finds the command named by args and checks its arity as Redis
// does. msg is the error reply when it fails: cmd is then nil for an
// unknown command or subcommand, and the command for a wrong number of
// arguments.
func lookup(args [][]byte) (cmd *command, msg string) {
	cmd = find(commandTable, args[0])
	if cmd == nil {
		return nil, unknownCommand(args)
	}
	if cmd.subs != nil && len(args) > 1 {
		sub := find(cmd.subs, args[1])
		if sub == nil {
			return nil, "ERR unknown subcommand '" + sanitize(truncate(string(args[1]), 128)) +
				"'. Try " + strings.ToUpper(cmd.name) + " HELP."
		}
		cmd = sub
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || len(args) < -cmd.arity {
		return cmd, "ERR wrong number of arguments for '" + cmd.name + "' command"
	}
	return cmd, ""
}

// find looks name up in t case-insensitively without allocating.
func find(t map[string]*command, name []byte) *command {
	var buf [24]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return t[string(buf[:len(name)])]
}

// unknownCommand is Redis's reply to a command it does not know.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		n := 128 - b.Len()
		b.WriteByte('\'')
		b.WriteString(truncate(string(a), n))
		b.WriteString("' ")
	}
	return "ERR unknown command '" + sanitize(truncate(string(args[0]), 128)) +
		"', with args beginning with: " + sanitize(b.String())
}

// stats returns the server's statistics of cmd.
func (s *Server) stats(cmd *command) *cmdStats { return &s.cmdStats[cmd.id] }

// writeCommandStats writes INFO's commandstats lines: one per command or
// subcommand called or refused since the last CONFIG RESETSTAT, in
// Redis's format (usec_per_call is the C float Redis divides in).
func (s *Server) writeCommandStats(b *strings.Builder) {
	for _, n := range commandNames() {
		c := commandTable[n]
		for _, c := range append([]*command{c}, c.subcommands()...) {
			st := s.stats(c)
			calls, usec := st.calls.Load(), st.usec.Load()
			rejected, failed := st.rejected.Load(), st.failed.Load()
			if calls == 0 && rejected == 0 && failed == 0 {
				continue
			}
			perCall := float32(0)
			if calls != 0 {
				perCall = float32(usec) / float32(calls)
			}
			b.WriteString("cmdstat_" + c.name + ":calls=" + itoa(calls) + ",usec=" + itoa(usec) +
				",usec_per_call=" + strconv.FormatFloat(float64(perCall), 'f', 2, 64) +
				",rejected_calls=" + itoa(rejected) + ",failed_calls=" + itoa(failed) + "\r\n")
		}
	}
}

// resetCommandStats clears the statistics of every command (CONFIG
// RESETSTAT).
func (s *Server) resetCommandStats() {
	for i := range s.cmdStats {
		st := &s.cmdStats[i]
		st.calls.Store(0)
		st.usec.Store(0)
		st.rejected.Store(0)
		st.failed.Store(0)
	}
}

// commandNames returns the table's top-level names, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commandTable))
	for n := range commandTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// subcommands returns c's subcommands sorted by name, nil for a command
// without.
func (c *command) subcommands() []*command {
	if c.subs == nil {
		return nil
	}
	subs := make([]*command, 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].name < subs[j].name })
	return subs
}
