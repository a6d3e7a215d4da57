package resp

// This file holds FUNCTION (Redis 7's function libraries, functions.c).
// nxkv has no function libraries: FUNCTION FLUSH succeeds with nothing to
// flush, so that tools which clear a server between tests (Redis's own test
// harness among them) run; every other FUNCTION subcommand is unknown.

// cmdFunctionFlush is FUNCTION FLUSH [ASYNC|SYNC].
func cmdFunctionFlush(x *call) {
	switch {
	case len(x.args) > 3:
		x.w.errorReply("ERR unknown subcommand or wrong number of arguments for '" +
			sanitize(truncate(string(x.args[1]), 128)) + "'. Try FUNCTION HELP.")
	case len(x.args) == 3 && !equalFold(x.args[2], "sync") && !equalFold(x.args[2], "async"):
		x.w.errorReply("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
	default:
		x.w.simple("OK")
	}
}
