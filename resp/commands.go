package resp

// This file is the command table, as data: each command the server
// implements is declared once, here, as Redis declares its own in
// src/commands/*.json. The declaration drives dispatch (lookup, arity,
// the checks of flags), COMMAND COUNT, LIST, INFO, DOCS and GETKEYS, INFO
// commandstats, and COMMANDS.md, which is generated from it (go generate;
// see commands_doc_test.go). The facts of each declaration (arity, flags,
// ACL categories, key positions, group, the version that introduced it,
// tips) are those Redis 7.0.15 reports for the command, checked against
// redis-server by the differential test; summaries, complexities and notes
// are nxkv's own words.

import (
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
// (EVAL: 1, MSETEX: 2; 0 counts as 1). The zero keySpec is a command
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

func init() { register(commands()...) }

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

// commands returns the table: every command the server implements.
func commands() []*command {
	return []*command{
		// Generic: the keyspace and expiry.
		{name: "del", arity: -2, flags: write, acl: aclKeyspace, keys: keySpec{1, -1, 1, 0},
			group: "generic", since: "1.0.0", tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			complexity: "O(N) where N is the number of keys", summary: "Deletes keys.", fn: cmdDel},
		{name: "unlink", arity: -2, flags: write | fast, acl: aclKeyspace, keys: keySpec{1, -1, 1, 0},
			group: "generic", since: "4.0.0", tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			complexity: "O(N) where N is the number of keys", summary: "Deletes keys (as DEL: strings are freed at once).", fn: cmdDel},
		{name: "exists", arity: -2, flags: readonly | fast, acl: aclKeyspace, keys: keySpec{1, -1, 1, 0},
			group: "generic", since: "1.0.0", tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			complexity: "O(N) where N is the number of keys", summary: "Counts the keys named that exist.", fn: cmdExists},
		{name: "type", arity: 2, flags: readonly | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "1.0.0", complexity: "O(1)", summary: "Returns the type of a key's value.", fn: cmdType},
		{name: "keys", arity: 2, flags: readonly, acl: aclKeyspace | aclDangerous,
			group: "generic", since: "1.0.0", tips: []string{"request_policy:all_shards", "nondeterministic_output_order"},
			complexity: "O(N) where N is the number of keys in the database", summary: "Returns the keys that match a glob pattern.", fn: cmdKeys},
		{name: "scan", arity: -2, flags: readonly, acl: aclKeyspace,
			group: "generic", since: "2.8.0", tips: []string{"nondeterministic_output", "request_policy:special"},
			complexity: "O(1) per call, O(N) for a whole iteration", summary: "Iterates over the keys of the database with a cursor.", fn: cmdScan},
		{name: "randomkey", arity: 1, flags: readonly, acl: aclKeyspace,
			group: "generic", since: "1.0.0", tips: []string{"request_policy:all_shards", "nondeterministic_output"},
			complexity: "O(1)", summary: "Returns a random key of the database.", fn: cmdRandomKey},
		{name: "rename", arity: 3, flags: write, acl: aclKeyspace, keys: keySpec{1, 2, 1, 0},
			group: "generic", since: "1.0.0", complexity: "O(1)", summary: "Renames a key, replacing any key of the new name.", fn: cmdRename},
		{name: "renamenx", arity: 3, flags: write | fast, acl: aclKeyspace, keys: keySpec{1, 2, 1, 0},
			group: "generic", since: "1.0.0", complexity: "O(1)", summary: "Renames a key unless the new name exists.", fn: cmdRename},
		{name: "copy", arity: -3, flags: write | denyOOM | allDBs, acl: aclKeyspace, keys: keySpec{1, 2, 1, 0},
			group: "generic", since: "6.2.0", complexity: "O(1) for strings", summary: "Copies a key's value, with its TTL, to another key, in this or another database.", fn: cmdCopy},
		{name: "move", arity: 3, flags: write | fast | allDBs, acl: aclKeyspace, keys: key1,
			group: "generic", since: "1.0.0", complexity: "O(1)", summary: "Moves a key to another database.", fn: cmdMove},
		{name: "expire", arity: -3, flags: write | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "1.0.0", complexity: "O(1)", summary: "Sets a key's time to live in seconds (NX, XX, GT, LT).", fn: cmdExpire},
		{name: "pexpire", arity: -3, flags: write | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "2.6.0", complexity: "O(1)", summary: "Sets a key's time to live in milliseconds (NX, XX, GT, LT).", fn: cmdExpire},
		{name: "expireat", arity: -3, flags: write | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "1.2.0", complexity: "O(1)", summary: "Sets a key's expiry time as a Unix time in seconds (NX, XX, GT, LT).", fn: cmdExpire},
		{name: "pexpireat", arity: -3, flags: write | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "2.6.0", complexity: "O(1)", summary: "Sets a key's expiry time as a Unix time in milliseconds (NX, XX, GT, LT).", fn: cmdExpire},
		{name: "ttl", arity: 2, flags: readonly | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "1.0.0", tips: []string{"nondeterministic_output"},
			complexity: "O(1)", summary: "Returns a key's time to live in seconds.", fn: cmdTTL},
		{name: "pttl", arity: 2, flags: readonly | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "2.6.0", tips: []string{"nondeterministic_output"},
			complexity: "O(1)", summary: "Returns a key's time to live in milliseconds.", fn: cmdTTL},
		{name: "expiretime", arity: 2, flags: readonly | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "7.0.0", complexity: "O(1)", summary: "Returns a key's expiry time as a Unix time in seconds.", fn: cmdExpireTime},
		{name: "pexpiretime", arity: 2, flags: readonly | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "7.0.0", complexity: "O(1)", summary: "Returns a key's expiry time as a Unix time in milliseconds.", fn: cmdExpireTime},
		{name: "persist", arity: 2, flags: write | fast, acl: aclKeyspace, keys: key1,
			group: "generic", since: "2.2.0", complexity: "O(1)", summary: "Removes a key's expiry.", fn: cmdPersist},

		// String.
		{name: "get", arity: 2, flags: readonly | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)", summary: "Returns a key's string value.", fn: cmdGet},
		{name: "set", arity: -3, flags: write | denyOOM, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)",
			summary: "Sets a key's string value (NX, XX, GET, EX, PX, EXAT, PXAT, KEEPTTL).",
			note:    "Also takes Redis 8.4's IFEQ, IFNE, IFDEQ and IFDNE conditions.", fn: cmdSet},
		{name: "setnx", arity: 3, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)", summary: "Sets a key's value unless the key exists.", fn: cmdSetNX},
		{name: "setex", arity: 4, flags: write | denyOOM, acl: aclString, keys: key1,
			group: "string", since: "2.0.0", complexity: "O(1)", summary: "Sets a key's value and its time to live in seconds.", fn: cmdSetEX},
		{name: "psetex", arity: 4, flags: write | denyOOM, acl: aclString, keys: key1,
			group: "string", since: "2.6.0", complexity: "O(1)", summary: "Sets a key's value and its time to live in milliseconds.", fn: cmdSetEX},
		{name: "getset", arity: 3, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", deprecated: "6.2.0", complexity: "O(1)",
			summary: "Sets a key's value and returns the old one (deprecated: SET ... GET).", fn: cmdGetSet},
		{name: "getdel", arity: 2, flags: write | fast, acl: aclString, keys: key1,
			group: "string", since: "6.2.0", complexity: "O(1)", summary: "Returns a key's value and deletes the key.", fn: cmdGetDel},
		{name: "getex", arity: -2, flags: write | fast, acl: aclString, keys: key1,
			group: "string", since: "6.2.0", complexity: "O(1)", summary: "Returns a key's value and sets or removes its expiry.", fn: cmdGetEX},
		{name: "mget", arity: -2, flags: readonly | fast, acl: aclString, keys: keySpec{1, -1, 1, 0},
			group: "string", since: "1.0.0", tips: []string{"request_policy:multi_shard"},
			complexity: "O(N) where N is the number of keys", summary: "Returns the values of several keys.", fn: cmdMGet},
		{name: "mset", arity: -3, flags: write | denyOOM, acl: aclString, keys: keySpec{1, -1, 2, 0},
			group: "string", since: "1.0.1", tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"},
			complexity: "O(N) where N is the number of keys", summary: "Sets several keys at once.", fn: cmdMSet},
		{name: "msetnx", arity: -3, flags: write | denyOOM, acl: aclString, keys: keySpec{1, -1, 2, 0},
			group: "string", since: "1.0.1", tips: []string{"request_policy:multi_shard", "response_policy:agg_min"},
			complexity: "O(N) where N is the number of keys", summary: "Sets several keys at once, only if none of them exists.", fn: cmdMSet},
		{name: "getrange", arity: 4, flags: readonly, acl: aclString, keys: key1,
			group: "string", since: "2.4.0", complexity: "O(N) where N is the length of the result",
			summary: "Returns a substring of a key's value.", fn: cmdGetRange},
		{name: "substr", arity: 4, flags: readonly, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", deprecated: "2.0.0", complexity: "O(N) where N is the length of the result",
			summary: "Returns a substring of a key's value (deprecated: GETRANGE).", fn: cmdGetRange},
		{name: "setrange", arity: 4, flags: write | denyOOM, acl: aclString, keys: key1,
			group: "string", since: "2.2.0", complexity: "O(M) where M is the length of the value written",
			summary: "Overwrites part of a key's value from an offset, padding with zero bytes.", fn: cmdSetRange},
		{name: "strlen", arity: 2, flags: readonly | fast, acl: aclString, keys: key1,
			group: "string", since: "2.2.0", complexity: "O(1)", summary: "Returns the length of a key's value.", fn: cmdStrlen},
		{name: "append", arity: 3, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "2.0.0", complexity: "O(M) where M is the length of the result",
			summary: "Appends a string to a key's value.", fn: cmdAppend},
		{name: "lcs", arity: -3, flags: readonly, acl: aclString, keys: keySpec{1, 2, 1, 0},
			group: "string", since: "7.0.0", complexity: "O(N*M) where N and M are the lengths of the two strings",
			summary: "Returns the longest common subsequence of two keys' values, its length, or the ranges that match (IDX).", fn: cmdLCS},
		{name: "incr", arity: 2, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)", summary: "Adds 1 to a key's integer value.", fn: cmdIncr},
		{name: "decr", arity: 2, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)", summary: "Subtracts 1 from a key's integer value.", fn: cmdIncr},
		{name: "incrby", arity: 3, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)", summary: "Adds an integer to a key's integer value.", fn: cmdIncrBy},
		{name: "decrby", arity: 3, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "1.0.0", complexity: "O(1)", summary: "Subtracts an integer from a key's integer value.", fn: cmdIncrBy},
		{name: "incrbyfloat", arity: 3, flags: write | denyOOM | fast, acl: aclString, keys: key1,
			group: "string", since: "2.6.0", complexity: "O(1)",
			summary: "Adds a floating-point number to a key's value, in 80-bit precision as Redis on x86-64.", fn: cmdIncrByFloat},
		{name: "digest", arity: 2, flags: readonly | fast, acl: aclString, keys: key1,
			group: "string", since: "8.4.0", complexity: "O(N) where N is the length of the value",
			summary: "Returns the XXH3 digest of a key's value, in 16 hexadecimal digits.",
			note:    "Redis 8.4's; not in Redis 7.0.", fn: cmdDigest},
		{name: "delex", arity: -2, flags: write | fast, acl: aclString, keys: key1,
			group: "string", since: "8.4.0", complexity: "O(1)",
			summary: "Deletes a key, if its value is (IFEQ) or is not (IFNE) the one given, or its digest is (IFDEQ) or is not (IFDNE).",
			note:    "Redis 8.4's; not in Redis 7.0.", fn: cmdDelEx},
		{name: "msetex", arity: -4, flags: write | denyOOM | movableKeys, acl: aclString, keys: keySpec{step: 2, numkeys: 1},
			group: "string", since: "8.4.0", complexity: "O(N) where N is the number of keys",
			summary: "Sets several keys with one expiration, all or none (NX, XX).",
			note:    "Redis 8.4's; not in Redis 7.0.", fn: cmdMSetEX},

		// Transactions.
		{name: "multi", arity: 1, flags: noScript | loading | stale | fast | allowBusy | noQueue, acl: aclTransaction,
			group: "transactions", since: "1.2.0", complexity: "O(1)", summary: "Starts a transaction.", fn: cmdMulti},
		{name: "exec", arity: 1, flags: noScript | loading | stale | skipSlowlog | noQueue, acl: aclTransaction,
			group: "transactions", since: "1.2.0", complexity: "Depends on the commands of the transaction",
			summary: "Runs the queued commands atomically, unless a watched key changed.", fn: cmdExec},
		{name: "discard", arity: 1, flags: noScript | loading | stale | fast | allowBusy | noQueue, acl: aclTransaction,
			group: "transactions", since: "2.0.0", complexity: "O(N) where N is the number of queued commands",
			summary: "Discards the queued commands and ends the transaction.", fn: cmdDiscard},
		{name: "watch", arity: -2, flags: noScript | loading | stale | fast | allowBusy | noQueue, acl: aclTransaction,
			keys: keySpec{1, -1, 1, 0}, group: "transactions", since: "2.2.0", complexity: "O(1) per key",
			summary: "Makes the next EXEC fail if any of the keys changes (or expires) first.", fn: cmdWatch},
		{name: "unwatch", arity: 1, flags: noScript | loading | stale | fast | allowBusy, acl: aclTransaction,
			group: "transactions", since: "2.2.0", complexity: "O(1)", summary: "Forgets every watched key.", fn: cmdUnwatch},

		// Connection.
		{name: "ping", arity: -1, flags: fast, acl: aclConnection,
			group: "connection", since: "1.0.0", tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			complexity: "O(1)", summary: "Returns PONG, or the message given.", fn: cmdPing},
		{name: "echo", arity: 2, flags: loading | stale | fast, acl: aclConnection,
			group: "connection", since: "1.0.0", complexity: "O(1)", summary: "Returns the message given.", fn: cmdEcho},
		{name: "hello", arity: -1, flags: noScript | loading | stale | fast | noAuth | allowBusy, acl: aclConnection,
			group: "connection", since: "6.0.0", complexity: "O(1)",
			summary: "Selects RESP2 or RESP3, optionally authenticates and names the connection, and describes the server.", fn: cmdHello},
		{name: "auth", arity: -2, flags: noScript | loading | stale | fast | noAuth | allowBusy, acl: aclConnection,
			group: "connection", since: "1.0.0", complexity: "O(1)",
			summary: "Authenticates the connection as the default user with the server's password.", fn: cmdAuth},
		{name: "quit", arity: -1, flags: noScript | loading | stale | fast | noAuth | allowBusy | noQueue, acl: aclConnection,
			group: "connection", since: "1.0.0", complexity: "O(1)", summary: "Closes the connection after replying.", fn: cmdQuit},
		{name: "reset", arity: 1, flags: noScript | loading | stale | fast | noAuth | allowBusy | noQueue, acl: aclConnection,
			group: "connection", since: "6.2.0", complexity: "O(1)",
			summary: "Resets the connection: ends MULTI and WATCH, selects database 0, forgets its name and authentication.", fn: cmdReset},
		{name: "select", arity: 2, flags: loading | stale | fast | allDBs, acl: aclConnection,
			group: "connection", since: "1.0.0", complexity: "O(1)",
			summary: "Selects the database (0 to 15) of the connection, or, inside a script, of the script.", fn: cmdSelect},
		{name: "client", arity: -2, group: "connection", since: "2.4.0", complexity: "Depends on the subcommand",
			summary: "Inspects and configures client connections."},
		{name: "client|id", arity: 2, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "5.0.0", complexity: "O(1)", summary: "Returns the connection's id.", fn: cmdClientID},
		{name: "client|getname", arity: 2, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "2.6.9", complexity: "O(1)", summary: "Returns the connection's name.", fn: cmdClientGetName},
		{name: "client|setname", arity: 3, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "2.6.9", complexity: "O(1)", summary: "Names the connection.", fn: cmdClientSetName},
		{name: "client|setinfo", arity: 4, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "7.2.0", complexity: "O(1)",
			summary: "Records the client library's name or version, which CLIENT INFO and LIST show.",
			note:    "Redis 7.2's; not in Redis 7.0.", fn: cmdClientSetInfo},
		{name: "client|tracking", arity: -3, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "6.0.0", complexity: "O(1)",
			summary: "Turns server-assisted client-side caching on or off.",
			note:    "Accepted, but no invalidation messages are sent: clients must not rely on it.", fn: cmdClientTracking},
		{name: "client|caching", arity: 3, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "6.0.0", complexity: "O(1)",
			summary: "Says whether the next command's keys are tracked (OPTIN and OPTOUT tracking).", fn: cmdClientCaching},
		{name: "client|info", arity: 2, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "6.2.0", tips: []string{"nondeterministic_output"},
			complexity: "O(1)", summary: "Describes the connection.", fn: cmdClientInfo},
		{name: "client|list", arity: -2, flags: admin | noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "2.4.0", tips: []string{"nondeterministic_output"},
			complexity: "O(N) where N is the number of connections", summary: "Describes every connection.", fn: cmdClientList},
		{name: "client|no-evict", arity: 3, flags: admin | noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "7.0.0", complexity: "O(1)",
			summary: "Exempts the connection from client eviction (nxkv evicts no clients).", fn: cmdClientOnOff},
		{name: "client|no-touch", arity: 3, flags: noScript | loading | stale, acl: aclConnection,
			group: "connection", since: "7.2.0", complexity: "O(1)",
			summary: "Keeps the connection's commands from changing keys' access times (nxkv keeps none).",
			note:    "Redis 7.2's; not in Redis 7.0.", fn: cmdClientOnOff},

		// Server.
		{name: "dbsize", arity: 1, flags: readonly | fast, acl: aclKeyspace,
			group: "server", since: "1.0.0", tips: []string{"request_policy:all_shards", "response_policy:agg_sum"},
			complexity: "O(1)", summary: "Returns the number of keys in the database.", fn: cmdDBSize},
		{name: "flushdb", arity: -1, flags: write, acl: aclKeyspace | aclDangerous,
			group: "server", since: "1.0.0", tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			complexity: "O(N) where N is the number of keys in the database",
			summary:    "Deletes every key of the database (ASYNC and SYNC both delete at once).", fn: cmdFlushDB},
		{name: "flushall", arity: -1, flags: write | allDBs, acl: aclKeyspace | aclDangerous,
			group: "server", since: "1.0.0", tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			complexity: "O(N) where N is the number of keys in all databases",
			summary:    "Deletes every key of every database (ASYNC and SYNC both delete at once).", fn: cmdFlushDB},
		{name: "swapdb", arity: 3, flags: write | fast | allDBs, acl: aclKeyspace | aclDangerous,
			group: "server", since: "4.0.0", complexity: "O(N) where N is the number of keys of both databases",
			summary: "Swaps the keys of two databases.",
			note:    "Moves every key between the databases' engines (O(N)), where Redis swaps two pointers.", fn: cmdSwapDB},
		{name: "time", arity: 1, flags: loading | stale | fast,
			group: "server", since: "2.6.0", tips: []string{"nondeterministic_output"},
			complexity: "O(1)", summary: "Returns the server's time (frozen inside scripts and transactions).", fn: cmdTime},
		{name: "info", arity: -1, flags: loading | stale | allDBs, acl: aclDangerous,
			group: "server", since: "1.0.0", tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			complexity: "O(1)", summary: "Describes the server, its clients, memory, statistics and keyspace.", fn: cmdInfo},
		{name: "command", arity: -1, flags: loading | stale, acl: aclConnection,
			group: "server", since: "2.8.13", tips: []string{"nondeterministic_output_order"},
			complexity: "O(N) where N is the number of commands", summary: "Describes every command.", fn: cmdCommand},
		{name: "command|count", arity: 2, flags: loading | stale, acl: aclConnection,
			group: "server", since: "2.8.13", complexity: "O(1)", summary: "Returns the number of commands.", fn: cmdCommandCount},
		{name: "command|list", arity: -2, flags: loading | stale, acl: aclConnection,
			group: "server", since: "7.0.0", tips: []string{"nondeterministic_output_order"},
			complexity: "O(N) where N is the number of commands",
			summary:    "Lists the commands' names, optionally only those of an ACL category or matching a pattern.", fn: cmdCommandList},
		{name: "command|info", arity: -2, flags: loading | stale, acl: aclConnection,
			group: "server", since: "2.8.13", tips: []string{"nondeterministic_output_order"},
			complexity: "O(N) where N is the number of commands named", summary: "Describes commands.", fn: cmdCommandInfo},
		{name: "command|docs", arity: -2, flags: loading | stale, acl: aclConnection,
			group: "server", since: "7.0.0", tips: []string{"nondeterministic_output_order"},
			complexity: "O(N) where N is the number of commands named", summary: "Documents commands.",
			note: "No arguments, history or replaced_by; the summaries and complexities are nxkv's.", fn: cmdCommandDocs},
		{name: "command|getkeys", arity: -4, flags: loading | stale, acl: aclConnection,
			group: "server", since: "2.8.13", complexity: "O(N) where N is the number of arguments",
			summary: "Returns the keys of a command and its arguments.", fn: cmdCommandGetKeys},
		{name: "config", arity: -2, group: "server", since: "2.0.0", complexity: "Depends on the subcommand",
			summary: "Reads and changes the configuration."},
		{name: "config|get", arity: -3, flags: admin | noScript | loading | stale,
			group: "server", since: "2.0.0", complexity: "O(N) where N is the number of parameters",
			summary: "Returns the configuration parameters that match glob patterns.", fn: cmdConfigGet},
		{name: "config|set", arity: -4, flags: admin | noScript | loading | stale,
			group: "server", since: "2.0.0", tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
			complexity: "O(N) where N is the number of parameters",
			summary:    "Changes configuration parameters.",
			note:       "Only requirepass changes anything; save, appendonly, appendfsync and loglevel are accepted and ignored.", fn: cmdConfigSet},
		{name: "config|resetstat", arity: 2, flags: admin | noScript | loading | stale,
			group: "server", since: "2.0.0", complexity: "O(1)",
			summary: "Resets the statistics INFO reports.", fn: cmdConfigResetStat},

		// Scripting.
		{name: "eval", arity: -3, flags: noScript | stale | skipMonitor | noMandatoryKeys | movableKeys, acl: aclScripting,
			keys: keySpec{numkeys: 2}, group: "scripting", since: "2.6.0", complexity: "Depends on the script",
			summary: "Runs a Lua script atomically.", note: "A script is stopped after five seconds.", fn: cmdEval},
		{name: "evalsha", arity: -3, flags: noScript | stale | skipMonitor | noMandatoryKeys | movableKeys, acl: aclScripting,
			keys: keySpec{numkeys: 2}, group: "scripting", since: "2.6.0", complexity: "Depends on the script",
			summary: "Runs a cached Lua script, named by its SHA1, atomically.", fn: cmdEval},
		{name: "eval_ro", arity: -3, flags: readonly | noScript | stale | skipMonitor | noMandatoryKeys | movableKeys, acl: aclScripting,
			keys: keySpec{numkeys: 2}, group: "scripting", since: "7.0.0", complexity: "Depends on the script",
			summary: "Runs a Lua script that may not write.", fn: cmdEval},
		{name: "evalsha_ro", arity: -3, flags: readonly | noScript | stale | skipMonitor | noMandatoryKeys | movableKeys, acl: aclScripting,
			keys: keySpec{numkeys: 2}, group: "scripting", since: "7.0.0", complexity: "Depends on the script",
			summary: "Runs a cached Lua script that may not write.", fn: cmdEval},
		{name: "script", arity: -2, group: "scripting", since: "2.6.0", complexity: "Depends on the subcommand",
			summary: "Manages the script cache."},
		{name: "script|load", arity: 3, flags: noScript | stale, acl: aclScripting,
			group: "scripting", since: "2.6.0", tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
			complexity: "O(N) where N is the length of the script", summary: "Compiles a script and caches it, returning its SHA1.", fn: cmdScriptLoad},
		{name: "script|exists", arity: -3, flags: noScript, acl: aclScripting,
			group: "scripting", since: "2.6.0", tips: []string{"request_policy:all_shards", "response_policy:agg_logical_and"},
			complexity: "O(N) where N is the number of scripts named", summary: "Says which scripts are cached.", fn: cmdScriptExists},
		{name: "script|flush", arity: -2, flags: noScript, acl: aclScripting,
			group: "scripting", since: "2.6.0", tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
			complexity: "O(N) where N is the number of cached scripts", summary: "Empties the script cache.", fn: cmdScriptFlush},
		{name: "script|kill", arity: 2, flags: noScript | allowBusy, acl: aclScripting,
			group: "scripting", since: "2.6.0", tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"},
			complexity: "O(1)", summary: "Stops the running script.",
			note: "Always NOTBUSY: a script holds its databases, so it is stopped after five seconds instead.", fn: cmdScriptKill},
		{name: "function", arity: -2, group: "scripting", since: "7.0.0", complexity: "Depends on the subcommand",
			summary: "Manages function libraries (nxkv has none)."},
		{name: "function|flush", arity: -2, flags: write | noScript, acl: aclScripting,
			group: "scripting", since: "7.0.0", tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			complexity: "O(1)", summary: "Deletes every function library: there are none, so it only replies OK.",
			note: "The only FUNCTION subcommand: nxkv has no function libraries.", fn: cmdFunctionFlush},
	}
}
