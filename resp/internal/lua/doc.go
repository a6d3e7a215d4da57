// Package lua is the Lua 5.1 runtime of nxkv-server's scripts, as Redis's
// script_lua.c is Redis's: interpreters (github.com/yuin/gopher-lua) set up
// with Redis 7's environment (the cjson and cmsgpack libraries included),
// Lua 5.1's library where gopher-lua differs from it, the limits that keep
// one script from taking the server down, and Redis's conversions between
// Lua values and replies. No other package of nxkv imports gopher-lua.
//
// # Model
//
// A server creates one Runtime and compiles each distinct script body once
// (Compile) into a Function, which it caches by SHA1 (SHA1Hex) as it
// likes. Run runs a Function with KEYS and ARGV on an interpreter from the
// Runtime's pool: the script's redis.call and redis.pcall go to the Caller
// the server passes, which runs the command and writes its reply to a
// Reply, which makes it a Lua value; the script's result, or its error, is
// converted to a reply and written to the server's Writer. The server holds
// whatever atomic section the script needs for as long as Run lasts; the
// package knows nothing of commands, databases or clients.
//
// A script is stopped with an error past its time limit (Input.Timeout,
// five seconds by default) or once it has grown the process heap past its
// memory limit (Input.Memory, 1 GiB by default), or when its Watcher,
// told once the script has run Input.BusyAfter, asks (Redis's SCRIPT
// KILL); no builtin runs or allocates without bound inside one call. An
// interpreter a script killed,
// or whose shared tables it changed, is discarded rather than reused.
// Every Go function a script can reach, this package's builtins and
// gopher-lua's library alike, contains its panics (a defect, which
// gopher-lua would turn into a Lua error that pcall could catch): the
// script is stopped at once, Run returns a *PanicError and writes no
// reply, and the interpreter is discarded.
//
// Flush makes interpreters forget the Functions they instantiated (SCRIPT
// FLUSH) and resets the global cjson's configuration. Every script of a
// Runtime shares one math.random generator, never reset, and one cjson
// configuration, as in Redis.
//
// The behaviour scripts see, and where it differs from Redis's, is
// described in the documentation of package resp, under Lua.
package lua
