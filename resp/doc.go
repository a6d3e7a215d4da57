// Package resp serves an nxkv engine over the Redis protocol, so that code
// written for Redis (go-redis, redigo, bsm/redislock, go-redsync/redsync,
// redis-cli) runs against nxkv unchanged: in tests, in place of a real Redis
// or miniredis, and as a small lock server (cmd/nxkv-server). Code that waits
// for the server to push does not yet: see CLIENT TRACKING below.
//
// # Model
//
// A Server holds 16 databases (SELECT 0-15). Database 0 is the engine in
// Options.Engine, or one the server creates; the others are created on
// first use with the same clock. A caller that passes its own engine shares
// it: keys, locks and waiters are the same whether reached through the
// engine's Go API (for example a lockapi client on the in-process backend)
// or through RESP.
//
// On Linux, TCP and unix-socket connections are served by event loops (one
// per two cores), as Redis serves them: a loop waits on epoll for readable
// sockets, reads what arrived, runs every complete request and writes the
// replies, so pipelined requests cost one read and one write. Elsewhere,
// and for the in-memory connections of Dial, each connection has a
// goroutine doing the same. Requests are parsed as RESP2/RESP3 multibulk
// or inline commands. Malformed input gets Redis's protocol error reply
// and closes only that connection. Requests are held to Redis's limits (512
// MB bulk strings, 2^31-1 arguments, 64 KB inline requests and headers, and
// 10 arguments of at most 16 KB before AUTH when a password is set); memory
// grows only with the bytes a client actually sends, never with a length it
// declares.
//
// # Failures
//
// A command that panics (a defect of nxkv; no input should make one) is
// contained as net/http contains a handler: the panic is recovered, the
// engine sections the command held are released on the way out, its client
// gets an error reply ("ERR internal error in '<command>' command ...") and
// its connection is closed, and every other client is served as before. A
// command called by a Lua script is contained where the script calls it, and
// that script's connection closes after its reply. A panic in the Go code of
// the Lua runtime itself (a builtin such as string.find) stops the script
// there, whatever pcall it runs under, and is contained as a panic of the
// script's command (EVAL, EVALSHA, ...). The stack of the first
// panic of each command is logged (Options.ErrorLog); each panic is counted
// in Stats and, as an error reply, in INFO errorstats. NewT and RunT fail
// the test when a panic happened in their server.
//
// # Atomicity and time
//
// A single-key command is one engine call: atomic and linearizable, with
// the clock read once, inside it. Multi-key commands (MGET, MSET, RENAME,
// COPY, ...) run in one engine section (engine.Update) over their keys.
// MULTI/EXEC and Lua scripts run in one section over the whole database
// (every database, when the transaction or script may reach others through
// SELECT, MOVE, COPY, FLUSHALL or INFO), with one frozen time per database,
// as in Redis: they are atomic against every other client and every direct
// engine call. WATCH uses the engine's change notifications; EXEC also aborts when
// a watched key expired, as Redis 7 does.
//
// Time comes from the engine's clock: the wall clock by default, so keys
// expire on their own (lazily on access, and by the engine's reaper); or an
// injected clock (engine.Options.Clock, or Options.Clock for an engine the
// server creates), so a test moves time and keys expire, and waiters wake,
// at once. TIME reports that clock, frozen inside scripts and transactions.
// So are TTL and PTTL, as in Redis 7.2; Redis 7.0 froze the time for expiry
// only, so a script that runs for a while sees its TTLs fall there, and not
// here.
//
// # Replies
//
// Replies, error texts and RESP2/RESP3 shapes are Redis 7.0.15's (the
// version RedisVersion reports), compared byte for byte with a real
// redis-server by the package's differential test. Commands of the types
// nxkv lacks (streams, HyperLogLog, geo) and any command not implemented
// reply Redis's unknown-command error, never a wrong answer. Bitmaps are
// strings, as in Redis: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP and
// BITFIELD read and write string values bit by bit, but a write copies the
// value (nxkv's strings are immutable), so SETBIT and BITFIELD cost O(N)
// in the value's length where Redis's cost O(1).
//
// INFO errorstats counts error replies as Redis does (an error a command
// replies inside a script once, where it is replied); past 128 different
// error codes it stops adding codes and shows ERRORSTATS_DISABLED, as Redis
// 7.2 does and 7.0 did not, so that invented codes cannot grow the table
// without bound.
//
// DUMP and RESTORE move values to and from Redis: RESTORE reads every
// encoding of RDB versions up to 10 (Redis 7.0's listpacks, intsets and
// quicklists, LZF-compressed strings, and Redis 6's ziplists), and DUMP
// writes the plain encodings, uncompressed, which every Redis restores; a
// payload is never trusted (a malformed one is "Bad data format", a
// member twice too).
//
// # Types
//
// Every key has a type: a string, a hash, a list, a set or a sorted set,
// with Redis 7.0's commands, WRONGTYPE from every command of every type
// (inside MULTI and Lua too), and OBJECT ENCODING's names for the small
// and large forms. A string is the engine's own value; the other types
// are engine Objects (see package engine): the key's entry and deadline
// are a string's, so expiry, WATCH, the change feed, DEL, RENAME, COPY,
// MOVE, SWAPDB, SCAN and FLUSH treat every type alike, and the value is
// read and changed only in an engine section holding the key, one per
// command or the transaction's or script's. Each change reports Redis's
// keyspace event ("hset", "lpush", "zadd", ..., "new" for a key created,
// "del" for a value emptied). Structures and their costs per element
// (measured by BenchmarkTypeMemory with 100,000 elements: the live heap
// besides the elements' own bytes; a key adds the engine's entry and
// index slot and an Objects map entry, about 100 bytes):
//
//	hash        listpack: a slice of fields and values in insertion order, searched
//	            linearly (while at most hash-max-listpack-entries, 128): 38 bytes a field;
//	            then a hash table, the slice plus an index, O(1): 73 bytes a field
//	set         intset: a sorted slice of int64, O(log n) lookups (while at most
//	            set-max-intset-entries, 512): 9 bytes a member; then a hash table, O(1):
//	            54 bytes a member
//	list        quicklist (as Redis 7.0 names every list): a ring buffer, O(1) at both
//	            ends and by index: 21 bytes an element (16 to 64 as it fills and drains)
//	sorted set  listpack: a sorted slice (while at most 128): 27 bytes an element; then
//	            a skip list with spans (O(log n) inserts, deletes, ranks and range
//	            starts) and a member table: 148 bytes an element
//
// A small form converts to the large one at Redis's limits, which CONFIG
// SET changes, and never back, as in Redis; a structure's memory shrinks
// as it drains. Replies come in Redis's order wherever Redis's is defined
// by the value (listpacks, intsets, sorted sets, lists); where it is a
// hash table's, nxkv's order differs. HSCAN, SSCAN and ZSCAN return a
// small value whole, as Redis does, and walk a large one with a cursor
// that never misses an element present for the whole scan.
//
// The blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP) wait as Redis's do: a waiting client reads no further
// request; the waiters of a key are served in the order they blocked,
// once the command that gave the key data has finished (all of EXEC or
// of a script); each element goes to one client; a timeout, in fractions
// of a second, runs on the server's clock (an injected clock drives it);
// CLIENT UNBLOCK ends a wait; a client that closes while waiting leaves
// nothing behind. Inside MULTI and scripts they never wait.
//
// Deviations: OBJECT ENCODING names a string's encoding by its length
// (Redis's raw for a short string built by APPEND or SETRANGE is embstr
// here); OBJECT IDLETIME is 0 and FREQ is Redis's error for a server
// without an LFU policy; MEMORY USAGE is an estimate from these layouts;
// HRANDFIELD, SRANDMEMBER and ZRANDMEMBER refuse a negative count past
// 16M elements (Redis would build the reply); DUMP and RESTORE are not
// implemented. SORT and SORT_RO compare strings byte by byte (Redis's
// strcoll in the C locale), and elements whose BY values tie keep their
// value's order, which for a hash-table set is not Redis's. There are no
// function libraries: FUNCTION FLUSH succeeds with nothing to flush (so
// harnesses that clear a server between tests run) and the other FUNCTION
// subcommands are unknown. The databases are engines of their own, and
// database 0 may be the caller's engine: so SWAPDB moves the keys of both
// databases between their engines (O(N), where Redis swaps two pointers),
// and every moved key is a change that WATCH and Go watchers see. Beyond 7.0 it
// implements Redis 8.4's compare-and-set family (SET IFEQ/IFNE/IFDEQ/IFDNE,
// DELEX, DIGEST, whose XXH3 digests come from github.com/zeebo/xxh3, and
// MSETEX) and CLIENT SETINFO (7.2).
//
// Time over RESP is Redis's: milliseconds. The engine's clock counts
// nanoseconds, so a deadline given in milliseconds (EXAT, PXAT, EXPIREAT,
// PEXPIREAT) is held as the last nanosecond of that millisecond: the key
// lives while the time, in milliseconds, is at most its deadline, as in
// Redis, and PTTL and TTL count the deadline's millisecond less the current
// one. A script that sets PXAT to its own TIME keeps the key, with PTTL 0.
// A deadline beyond the engine's range (after the year 2262), which Redis
// would accept, is an error rather than a different deadline.
//
// Keys under "nxkv:" (engine.ReservedPrefix) are the lock clients'
// bookkeeping. Clients see them as any other key, as Redis would show a
// lock library's keys: DBSIZE counts them, KEYS and SCAN list them, FLUSHDB
// and FLUSHALL delete them. One thing differs: to INCR, INCRBY, DECR and
// DECRBY such a key, when absent, counts not as 0 but as the largest value
// they ever gave a reserved key of its engine shard, so that a fencing
// counter deleted by FLUSHALL or DEL never hands out a token twice. The
// guarantee covers counters the lock clients keep; a client that writes
// such keys itself takes lock state into its own hands, as in Redis, where
// any client may SET a fencing counter back: a reserved key SET near
// 2^63-1 and incremented raises its shard's mark there for the life of
// the database's engine, after which INCR of an absent reserved key of
// that shard replies the overflow error until the server restarts; and
// RENAME, MOVE, COPY and SWAPDB carry a counter's value but not the mark
// of the shard it came from, so a counter moved into a database and then
// deleted there may resume below the value it was moved with.
//
// # Memory
//
// maxmemory, maxmemory-policy and maxmemory-samples (CONFIG SET and GET
// with Redis's units and errors, and nxkv-server's configuration) bound
// every database together, as in Redis: the databases are engines sharing
// one engine.Budget (Options.Budget). It counts each key as the engine does
// (see "Memory bound" in package engine: key and value rounded up to 8
// bytes, plus 64, plus 16 for a TTL; a hash, list, set or sorted set
// adds an estimate of its elements' bytes, from eight sampled elements,
// renewed at each write of the key) and each database's overhead, its
// empty shards (about 60 KB a database of 16 shards); INFO's used_memory
// reports that count, not the process's heap (used_memory_rss is the Go
// runtime's memory from the system). The bytes thus differ from Redis's,
// which counts its allocator's, client buffers included; a bound of 1 byte
// is exceeded before any key is written, as in Redis. Before each command
// the server evicts by the policy down to the bound, as Redis's
// processCommand does, and if it cannot, it refuses with Redis's OOM error
// a command that may add memory (Redis's deny-oom commands, a script whose
// shebang line declares neither no-writes nor allow-oom, an EXEC of such
// commands), any command queued in MULTI but EXEC, DISCARD, QUIT and RESET
// (which dooms the transaction), and, inside a script, the first command
// that may add memory, unless the script has written already or declares
// allow-oom. Reads and deletes are never refused outside MULTI. An admitted
// command runs whole: an MSET or a script may take the databases past the
// bound, which the next command evicts back to. Eviction compares
// maxmemory-samples keys of one shard of one database, drawn in proportion
// to what each database holds, where Redis pools samples of every database.
// Evicted keys count in INFO's evicted_keys (reset by CONFIG RESETSTAT),
// are reported to the engines' change feed as engine.KindEvicted, and
// wake WATCH. Commands Redis runs whatever the memory (RENAME, MOVE,
// SWAPDB, a blocked client served) run in engine sections no bound refuses,
// so they move every value whole; SWAPDB keeps a lock the caller's engine
// took (engine.Tx.Held) a held lock, never evicted, in either database.
// maxmemory-eviction-tenacity is accepted and has no effect
// (eviction ends before the command runs). A database 0 given in
// Options.Engine counts only if it was created with a budget, which the
// other databases then share; otherwise it is outside the bound.
//
// # Pushes: pub/sub, client-side caching, keyspace events, MONITOR
//
// What Redis sends a client that did not ask for it in a reply is sent
// here too, in the same order relative to the client's replies: pub/sub
// messages (SUBSCRIBE, PSUBSCRIBE, the shard channels' SSUBSCRIBE;
// PUBLISH from clients, scripts and Server.Publish), client-side caching's
// invalidations (CLIENT TRACKING in every mode: default, BCAST with
// prefixes, OPTIN and OPTOUT with CLIENT CACHING, NOLOOP, REDIRECT, RESP3
// pushes and RESP2 messages on __redis__:invalidate, a null invalidation
// for a flush, the table bounded by tracking-table-max-keys), keyspace
// notifications (notify-keyspace-events, __keyspace@<db>__:<key> and
// __keyevent@<db>__:<event>, with Redis's events for each command of
// every type, "keymiss" for a read's miss, and "expired" when a key is
// reclaimed) and MONITOR's lines. A RESP2 client in pub/sub mode may run
// only the commands Redis allows there; CLIENT REPLY OFF or SKIP silences
// replies, never pushes.
//
// Another client's output is pushed to the receiving client's outbox,
// which never blocks: a subscriber or monitor that does not read is closed
// at the pub/sub client-output-buffer-limit (32 MB, or 8 MB for 60
// seconds; CONFIG SET changes it), and never slows a publisher. Output a
// client's own command causes goes into its own reply stream where Redis
// puts it: a message it publishes to itself, or a keyspace event of its own
// write, before the command's reply, or after it for the commands Redis
// replies first (HSET, LPUSH, ZADD, the STOREs: flag repliesFirst in the
// table), inside it for the sorted-set pops; its own invalidations after
// it (after a transaction's or script's whole reply, and after a blocked
// client's reply when another client's push serves it). Keyspace notifications and
// invalidations come from the change feed of each database's engine
// (engine.Listen), so writes through the engine's Go API on
// Options.Engine publish and invalidate as commands do; the listener is
// installed only while notifications or a tracking client need it. To
// tell a client's own changes from others', a command of a client that
// tracks keys (or receives pushes in RESP3) runs in an engine section over
// its keys, tagged with the client (engine.Tx.SetTag), which also makes a
// read and the remembering of its keys atomic. The tracking table is one
// for all databases, as Redis's. Two differences remain: the order of
// UNSUBSCRIBE's notifications without arguments, of the messages for
// several matching patterns, and of PUBSUB CHANNELS follows subscription
// order or is sorted, where Redis follows its hash tables; and a monitor
// is bounded like a subscriber (Redis leaves monitors unbounded).
//
// # Commands
//
// The commands the server implements are listed, by group, with the Redis
// version that introduced each and where nxkv's differs, in COMMANDS.md
// (https://github.com/nxkv/nxkv/blob/main/resp/COMMANDS.md), which is
// generated from the server's command table. The same table answers
// COMMAND (COUNT, LIST, INFO, DOCS, GETKEYS), whose facts (arity, flags,
// key positions, ACL categories, group, version) are Redis 7.0.15's; it
// does not describe key specifications or arguments, and its summaries are
// nxkv's. INFO commandstats counts each command's calls, time, rejected
// and failed calls as Redis does.
//
// # Lua
//
// Scripts run on github.com/yuin/gopher-lua with Redis 7's environment:
// the same globals (bit, cjson and cmsgpack included; struct is not
// provided), read-only globals, libraries and metatables (pairs, next,
// rawget and getmetatable see them as in Redis, and every write is
// refused with Redis's error), redis.call, pcall, error_reply,
// status_reply, sha1hex, log and setresp, and Redis's conversions between
// Lua values and replies. A script may open with Redis 7's "#!lua
// flags=..." line: the flags are checked as Redis checks them,
// no-writes makes the script read-only (only such a flagged script runs
// under EVAL_RO), and allow-oom lets it write over maxmemory (see
// Memory). Each script is compiled once and each interpreter
// instantiates it once; interpreters are pooled and
// reused, and one whose shared tables a script managed to change is
// discarded. tonumber, tostring, string.format, string.char,
// table.concat, math.random and error are the server's own, checked
// against Redis's Lua: numbers print as "%.14g" (math.huge is infinity),
// strings convert as the C library reads them ("1e2", "0x1p4", "inf"),
// format's conversions are C's, a builtin's error carries the caller's
// position only when a Lua function called it, and the string and table
// functions take numeric strings for integers (string.sub(s, 1, ARGV[1]))
// and convert integers as Lua 5.1's C ints (NaN and 2^32 are 0).
// math.random and math.randomseed share one lrand48 generator across every
// script of the server, never reset, so a seeded script gets Redis's
// numbers. pcall catches an error table with an err field (what
// redis.call raises) as that field's text, as Redis's pcall does. The
// operators follow Lua 5.1 where gopher-lua's virtual machine does not:
// arithmetic reads strings as the C library does ("010" + 0 is 10, "1_000"
// is not a number), the .. operator prints numbers as "%.14g" and its
// errors name the operand ("attempt to concatenate local 'x' (a nil
// value)"), a numeric for takes numeric strings as bounds (for i = 1,
// ARGV[1]), and loadstring compiles with the same rules and names chunks
// as Lua does ([string "..."]); as in Redis it reads every string as
// source, so the binary chunk string.dump returns (Lua 5.1's header and
// the function's description, without bytecode) does not load. To do so
// each chain of .. becomes one call of a builtin when a script is
// compiled; it needs two registers more than Lua's instruction, so a
// function within a few registers of gopher-lua's limit of 200 fails to
// compile sooner. Only tables take a
// metatable from setmetatable, as in Lua. Arithmetic on what is not a
// number fails with Lua's message, but names no variable ("attempt to
// perform arithmetic on a nil value", where Lua may add "local 'x'").
// Calling nil, a boolean, a number or a string fails with Lua's message,
// also naming no variable ("attempt to call a nil value"). Other error
// texts of the Lua implementation (most syntax errors, "attempt to index
// ...", calling a table, arithmetic on two tables or negating one, the
// argument errors of the other builtins) are gopher-lua's, and an argument
// error in a method call (("%d"):format("x")) counts the receiver as
// argument 1, where Lua does not. pairs and next visit a table's keys in
// gopher-lua's order (array part, then the order keys were added), not
// in Lua's hash order.
//
// cjson (lua-cjson 2.1.0) and cmsgpack (lua-cmsgpack 0.4.0) are the
// server's own implementations of the libraries Redis builds in, checked
// against Redis's on fixed and random values: number formats, escapes,
// sparse arrays, nesting limits and Lua's stack limit, cjson.null, the
// configuration functions (whose settings every script shares until
// SCRIPT FLUSH, as in Redis), MessagePack's integer, float and double
// types, 16-deep tables (circular ones), unpack_one and unpack_limit, and
// their errors. The members of a JSON object and the entries of a
// MessagePack map come in the order pairs visits the table's keys.
// gopher-lua keeps integer keys in a table's array part, filling it with
// nils up to the largest: nxkv lowers its limit to 2^20 (process-wide;
// larger keys go to the hash part, as Lua keeps them), so t[60000000] = 1
// no longer allocates a gigabyte in one instruction, and cmsgpack.unpack
// refuses an input whose maps' integer keys would make it fill more than 4
// million array slots in all.
//
// A script that runs longer than busy-reply-threshold (lua-time-limit, 5
// seconds by default; CONFIG SET changes it) makes the server busy, as in
// Redis: until it ends, every other client's command gets BUSY, except
// those Redis allows then (SCRIPT KILL, MULTI, DISCARD, UNWATCH, AUTH,
// HELLO, QUIT, RESET; WATCH gets BUSY here, since it would wait for the
// script's locks), and SCRIPT KILL stops a busy script that has not written
// (UNKILLABLE otherwise). A script is found busy within a millisecond of
// the threshold, at the earliest 10 ms into its run. A busy script on an
// event loop hands the loop's other connections to a new goroutine, so they
// are answered meanwhile. Where Redis would let a script run for ever (only
// SHUTDOWN NOSAVE ends one that has written), nxkv stops any script after
// five seconds with an error (first, when the threshold is longer). The
// limit is checked between Lua instructions, so the
// built-ins that could run long or allocate without bound inside one call
// have Lua 5.1's limits (string.rep up to the bulk-string limit, unpack
// and string.byte up to 8,000 results, coroutines nested up to 200 deep),
// and a reply that would grow past the bulk-string limit (a table nested
// in itself) is an error. The pattern functions (string.find, match,
// gmatch, gsub) are the server's own implementation of Lua 5.1's: their
// results are checked against Redis's Lua, they stop with the script when
// a pattern backtracks past the time limit, gsub takes linear time and its
// result is held to the bulk-string limit, and a pattern that nests more
// than 200 levels of matching is an error ("pattern too complex", as in Lua
// 5.2 and later). gopher-lua accounts no memory, so a script that runs
// past 10 ms is watched: once it has grown the process heap by more than
// 1 GiB it is stopped with an error ("Script killed: it grew the heap ..."),
// which keeps one script from exhausting the machine's memory (Redis caps
// no script's memory either). The watch sees the whole process, and one
// instruction may overshoot it by what it allocates. Every distinct script
// stays cached until SCRIPT FLUSH, as in Redis 7.0.
//
// # Tests
//
// RunT and NewT start a server on a free loopback port and close it with
// the test (failing it if a command panicked); Dial connects without any socket (go-redis's Options.Dialer);
// Get, Set, SetTTL, TTL, Del, Keys and FlushAll read and steer state
// directly; Publish publishes, Subscribe and PSubscribe show what was
// published (keyspace notifications included) without a client, and
// ConfigSet sets what CONFIG SET sets (notify-keyspace-events, for one);
// InjectFault and SetError make commands fail or connections drop.
package resp

//go:generate go test -run ^TestCommandsDocUpToDate$ -update .

// Layout. The files follow Redis's source (networking.c, server.c, db.c,
// t_string.c, expire.c, multi.c, eval.c, ...), one subsystem each, in
// layers. A file calls functions and methods, and uses variables and
// constants, only of its own layer and the layers below; TestLayers checks
// it against this table. The Server, client (conn) and call structs are
// shared by all layers: they hold each subsystem's state.
//
//	layer     files
//	util      util.go glob.go splitargs.go longdouble.go cpu_unix.go cpu_other.go dense.go deque.go skiplist.go
//	protocol  reader.go writer.go
//	state     server_state.go client.go outbox.go db.go
//	call      table.go call.go recover.go
//	commands  object.go t_string.go bitops.go rdb.go cluster.go t_hash.go t_set.go t_list.go t_zset.go blocked.go sort.go cas.go keys.go databases.go expire.go multi.go eval.go evict.go functions.go connection.go info.go config.go command.go pubsub.go notify.go tracking.go monitor.go
//	serving   commands.go dispatch.go networking.go loop_linux.go loop_other.go pipe.go faults.go
//	api       server.go testhelper.go doc.go
//
// util: text and number helpers, as Redis's util.c and sds.c (string2ll,
// glob matching, argument splitting, long double arithmetic).
// protocol: request parsing and reply encoding, the RESP halves of
// networking.c; writer.go also counts error replies (INFO errorstats).
// state: the Server's state and a client's, the client's outbox (outbox.go:
// output other goroutines push to it, and its output limits), and the
// keyspace (db.go):
// stores, databases, and the atomic sections transactions and scripts run
// in, one frozen time per database.
// call: the command table's machinery and lookup (table.go), a command's
// execution with its statistics (call.go, Redis's call) and the containment
// of a command that panics (recover.go). EXEC and scripts run commands
// through it.
// commands: the commands, one file per subsystem. eval.go is the only file
// that knows of Lua: the runtime is package internal/lua, which nothing
// else imports and which knows nothing of the server but the Caller
// eval.go gives it.
// serving: the command declarations (commands.go, which name every
// command's function), the dispatcher (dispatch.go, Redis's
// processCommand), client I/O and event loops, the in-memory dialer and
// fault injection.
// api: New, Close and Stats, and the test helpers.
