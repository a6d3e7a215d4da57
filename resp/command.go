package resp

// This file holds COMMAND and its subcommands (COUNT, LIST, INFO, DOCS,
// GETKEYS), which describe the command table to clients as Redis 7's do.

import (
	"strings"
)

// lookupName finds a command by its full name ("get", "client|list"),
// case-insensitively, as COMMAND INFO and DOCS name them; nil if none.
func lookupName(name []byte) *command {
	base, sub, hasSub := strings.Cut(string(name), "|")
	c := find(commandTable, []byte(base))
	if c == nil || !hasSub {
		return c
	}
	if c.subs == nil || strings.Contains(sub, "|") {
		return nil
	}
	return find(c.subs, []byte(sub))
}

func cmdCommand(x *call) {
	if len(x.args) > 1 {
		// Only the subcommands of the table exist; lookup rejected the
		// others.
		x.w.errorReply("ERR unknown subcommand '" + sanitize(truncate(string(x.args[1]), 128)) + "'. Try COMMAND HELP.")
		return
	}
	names := commandNames()
	x.w.array(len(names))
	for _, n := range names {
		writeCommandInfo(x.w, commandTable[n])
	}
}

func cmdCommandCount(x *call) { x.w.int(int64(len(commandTable))) }

// cmdCommandList is COMMAND LIST [FILTERBY MODULE name|ACLCAT category|
// PATTERN pattern]: the names of the commands and subcommands; no command
// belongs to a module.
func cmdCommandList(x *call) {
	keep := func(*command) bool { return true }
	for i := 2; i < len(x.args); i += 3 {
		if !equalFold(x.args[i], "filterby") || len(x.args)-1-i != 2 {
			x.w.errorReply(errSyntax)
			return
		}
		arg := strings.ToLower(string(x.args[i+2]))
		switch {
		case equalFold(x.args[i+1], "module"):
			keep = func(*command) bool { return false }
		case equalFold(x.args[i+1], "aclcat"):
			cat := aclCategory(arg)
			keep = func(c *command) bool { return cat != 0 && c.categories()&cat != 0 }
		case equalFold(x.args[i+1], "pattern"):
			keep = func(c *command) bool { return globMatch(arg, c.name) }
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	var names []string
	for _, n := range commandNames() {
		c := commandTable[n]
		for _, c := range append([]*command{c}, c.subcommands()...) {
			if keep(c) {
				names = append(names, c.name)
			}
		}
	}
	x.w.array(len(names))
	for _, n := range names {
		x.w.bulkString(n)
	}
}

// aclCategory returns the ACL category named name (lower case), 0 if
// none.
func aclCategory(name string) aclCats {
	for i, n := range aclNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

func cmdCommandInfo(x *call) {
	names := x.args[2:]
	if len(names) == 0 {
		cmdCommand(&call{s: x.s, c: x.c, w: x.w, args: x.args[:1]})
		return
	}
	x.w.array(len(names))
	for _, n := range names {
		if c := lookupName(n); c != nil {
			writeCommandInfo(x.w, c)
		} else {
			x.w.null()
		}
	}
}

// writeCommandInfo writes one COMMAND INFO entry, Redis 7's ten fields:
// name, arity, flags, first key, last key, key step, ACL categories, tips,
// key specifications (none: nxkv does not describe them) and subcommands.
func writeCommandInfo(w replier, c *command) {
	w.array(10)
	w.bulkString(c.name)
	w.int(int64(c.arity))
	n := 0
	for _, f := range cmdFlagNames {
		if c.flags&f.flag != 0 {
			n++
		}
	}
	w.set(n)
	for _, f := range cmdFlagNames {
		if c.flags&f.flag != 0 {
			w.simple(f.name)
		}
	}
	first, last, step := c.keys.legacy()
	w.int(int64(first))
	w.int(int64(last))
	w.int(int64(step))
	cats := c.categories()
	n = 0
	for i := range aclNames {
		if cats&(1<<i) != 0 {
			n++
		}
	}
	w.set(n)
	for i, name := range aclNames {
		if cats&(1<<i) != 0 {
			w.simple("@" + name)
		}
	}
	w.set(len(c.tips))
	for _, t := range c.tips {
		w.bulkString(t)
	}
	w.set(0) // key specifications
	subs := c.subcommands()
	if subs == nil {
		w.set(0)
		return
	}
	w.array(len(subs))
	for _, s := range subs {
		writeCommandInfo(w, s)
	}
}

// cmdCommandDocs is COMMAND DOCS [name ...]: every command's documentation,
// or that of the commands named, unknown names left out.
func cmdCommandDocs(x *call) {
	var cmds []*command
	if len(x.args) == 2 {
		for _, n := range commandNames() {
			cmds = append(cmds, commandTable[n])
		}
	} else {
		for _, n := range x.args[2:] {
			if c := lookupName(n); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	x.w.mapHeader(len(cmds))
	for _, c := range cmds {
		x.w.bulkString(c.name)
		writeCommandDocs(x.w, c)
	}
}

// writeCommandDocs writes a command's documentation as Redis 7's COMMAND
// DOCS does, without what nxkv does not carry (arguments, history,
// replaced_by).
func writeCommandDocs(w replier, c *command) {
	n := 4 // summary, since, group, complexity
	if c.deprecated != "" {
		n += 2 // doc_flags, deprecated_since
	}
	subs := c.subcommands()
	if subs != nil {
		n++
	}
	w.mapHeader(n)
	w.bulkString("summary")
	w.bulkString(c.summary)
	w.bulkString("since")
	w.bulkString(c.since)
	w.bulkString("group")
	w.bulkString(c.group)
	w.bulkString("complexity")
	w.bulkString(c.complexity)
	if c.deprecated != "" {
		w.bulkString("doc_flags")
		w.set(1)
		w.simple("deprecated")
		w.bulkString("deprecated_since")
		w.bulkString(c.deprecated)
	}
	if subs != nil {
		w.bulkString("subcommands")
		w.mapHeader(len(subs))
		for _, s := range subs {
			w.bulkString(s.name)
			writeCommandDocs(w, s)
		}
	}
}

// cmdCommandGetKeys is COMMAND GETKEYS command [arg ...]: the keys of that
// command's arguments, with Redis's errors.
func cmdCommandGetKeys(x *call) {
	args := x.args[2:]
	cmd, msg := lookup(args)
	switch {
	case cmd == nil:
		x.w.errorReply("ERR Invalid command specified")
		return
	case cmd.keys == keySpec{}:
		x.w.errorReply("ERR The command has no key arguments")
		return
	case msg != "":
		x.w.errorReply("ERR Invalid number of arguments specified for command")
		return
	}
	pos, ok := cmd.keys.positions(args)
	if cmd.findKeys != nil {
		pos = cmd.findKeys(args)
	}
	if !ok && cmd.flags&noMandatoryKeys == 0 {
		x.w.errorReply("ERR Invalid arguments specified for command")
		return
	}
	x.w.array(len(pos))
	for _, p := range pos {
		x.w.bulk(args[p])
	}
}
