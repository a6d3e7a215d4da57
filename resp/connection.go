package resp

// This file holds the connection commands (PING, ECHO, HELLO, AUTH, QUIT,
// RESET and CLIENT) and the client state they change.

import (
	"strconv"
	"strings"
	"time"
)

func cmdPing(x *call) {
	if x.c.subscribed.Load() && !x.w.resp3() && x.lua == nil && len(x.args) <= 2 {
		// RESP2 in pub/sub mode: a pong message, as Redis.
		x.w.array(2)
		x.w.bulkString("pong")
		if len(x.args) == 1 {
			x.w.bulkString("")
		} else {
			x.w.bulk(x.args[1])
		}
		return
	}
	switch len(x.args) {
	case 1:
		x.w.simple("PONG")
	case 2:
		x.w.bulk(x.args[1])
	default:
		x.w.errorReply("ERR wrong number of arguments for 'ping' command")
	}
}

func cmdEcho(x *call) { x.w.bulk(x.args[1]) }

// authenticate checks a username and password against the server's
// password (the default user); with no password any password is accepted
// for the default user, as Redis's "nopass".
func (x *call) authenticate(user, pass []byte) bool {
	if string(user) != "default" {
		return false
	}
	p := x.s.password()
	return p == "" || string(pass) == p
}

const errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."

func cmdAuth(x *call) {
	var user, pass []byte
	switch len(x.args) {
	case 2:
		x.redact = []int{1}
		if x.s.password() == "" {
			x.w.errorReply("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return
		}
		user, pass = []byte("default"), x.args[1]
	case 3:
		x.redact = []int{1, 2}
		user, pass = x.args[1], x.args[2]
	default:
		x.w.errorReply(errSyntax)
		return
	}
	if !x.authenticate(user, pass) {
		x.w.errorReply(errWrongPass)
		return
	}
	x.c.setAuthed()
	x.w.simple("OK")
}

// validName reports whether a client name or library attribute has only
// printable non-space ASCII, as Redis requires.
func validName(b []byte) bool {
	for _, c := range b {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

func cmdHello(x *call) {
	c := x.c
	ver := int64(0)
	next := 1
	if len(x.args) >= 2 {
		v, ok := parseInt(x.args[1])
		if !ok {
			x.w.errorReply("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			x.w.errorReply("NOPROTO unsupported protocol version")
			return
		}
		ver, next = v, 2
	}
	var name []byte
	for j := next; j < len(x.args); j++ {
		more := len(x.args) - 1 - j
		switch {
		case equalFold(x.args[j], "auth") && more >= 2:
			x.redact = append(x.redact, j+1, j+2)
			if !x.authenticate(x.args[j+1], x.args[j+2]) {
				x.w.errorReply(errWrongPass) // at once, as Redis: later options are not read
				return
			}
			c.setAuthed()
			j += 2
		case equalFold(x.args[j], "setname") && more >= 1:
			name = x.args[j+1]
			if !validName(name) {
				x.w.errorReply("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			j++
		default:
			x.w.errorReply("ERR Syntax error in HELLO option '" + sanitize(string(x.args[j])) + "'")
			return
		}
	}
	if !c.authed {
		x.w.errorReply("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if name != nil {
		c.setName(string(name))
	}
	if ver != 0 {
		c.w.proto = int(ver)
		c.resp.Store(int32(ver))
	}
	w := x.w
	w.mapHeader(7)
	w.bulkString("server")
	w.bulkString("redis")
	w.bulkString("version")
	w.bulkString(RedisVersion)
	w.bulkString("proto")
	w.int(int64(c.w.proto))
	w.bulkString("id")
	w.int(c.id)
	w.bulkString("mode")
	w.bulkString("standalone")
	w.bulkString("role")
	w.bulkString("master")
	w.bulkString("modules")
	w.array(0)
}

func cmdQuit(x *call) {
	x.w.simple("OK")
	x.c.quit = true
}

// cmdReset returns the connection to its initial state: no transaction or
// watches, no MONITOR, no client-side caching, no subscriptions, database
// 0, RESP2, no name, and unauthenticated if a password is set.
func cmdReset(x *call) {
	c := x.c
	if c.monitoring.Load() {
		x.s.stopMonitor(c)
	}
	x.s.disableTracking(c) // its listener goes after the command (RESET never runs in a transaction)
	c.caching = false
	c.multi = nil
	c.unwatchAll()
	c.setDB(0)
	x.db = 0 // MONITOR shows the command in the database it leaves selected, as Redis
	c.w.proto = 2
	c.resp.Store(2)
	x.s.unsubscribeAll(c)
	c.setName("")
	c.libName, c.libVer = "", ""
	if x.s.password() != "" {
		c.authed = false
		c.rd.unauth = true
	}
	c.replyMode, c.skipNext = replyOn, false
	if c.muted {
		c.held = append(c.held, "+RESET\r\n"...) // replies are on again for it
		return
	}
	x.w.simple("RESET")
}

// cmdClientReply is CLIENT REPLY ON|OFF|SKIP: OFF and SKIP reply nothing;
// ON replies OK, even to a silenced client.
func cmdClientReply(x *call) {
	c := x.c
	switch {
	case equalFold(x.args[2], "on"):
		c.replyMode, c.skipNext = replyOn, false
		if c.muted {
			c.held = append(c.held, "+OK\r\n"...) // kept as the command's pushes are
		} else {
			x.w.simple("OK")
		}
	case equalFold(x.args[2], "off"):
		c.replyMode = replyOff
	case equalFold(x.args[2], "skip"):
		if c.replyMode != replyOff {
			c.skipNext = true
		}
	default:
		x.w.errorReply(errSyntax)
	}
}

func cmdClientID(x *call) { x.w.int(x.c.id) }

func cmdClientGetName(x *call) {
	if x.c.name == "" {
		x.w.null()
		return
	}
	x.w.bulkString(x.c.name)
}

func cmdClientSetName(x *call) {
	if !validName(x.args[2]) {
		x.w.errorReply("ERR Client names cannot contain spaces, newlines or special characters.")
		return
	}
	x.c.setName(string(x.args[2]))
	x.w.simple("OK")
}

// cmdClientSetInfo is CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2),
// which clients send on connect.
func cmdClientSetInfo(x *call) {
	v := x.args[3]
	switch {
	case equalFold(x.args[2], "lib-name"):
		if !validName(v) {
			x.w.errorReply("ERR lib-name cannot contain spaces, newlines or special characters.")
			return
		}
		x.c.libName = string(v)
	case equalFold(x.args[2], "lib-ver"):
		if !validName(v) {
			x.w.errorReply("ERR lib-ver cannot contain spaces, newlines or special characters.")
			return
		}
		x.c.libVer = string(v)
	default:
		x.w.errorReply("ERR Unrecognized option '" + sanitize(string(x.args[2])) + "'")
		return
	}
	x.w.simple("OK")
}

func cmdClientOnOff(x *call) {
	if !equalFold(x.args[2], "on") && !equalFold(x.args[2], "off") {
		x.w.errorReply(errSyntax)
		return
	}
	x.w.simple("OK")
}

// infoSnapshot returns another connection's CLIENT LIST line, from the
// fields that are safe to read from outside its goroutine.
func (c *conn) infoSnapshot(cmd string) string {
	c.mu.Lock()
	name, db := c.name, c.db
	c.mu.Unlock()
	var b strings.Builder
	age := int64(time.Since(c.created) / time.Second)
	b.WriteString("id=" + strconv.FormatInt(c.id, 10))
	b.WriteString(" addr=" + c.nc.RemoteAddr().String())
	b.WriteString(" laddr=" + c.nc.LocalAddr().String())
	b.WriteString(" fd=-1 name=" + name)
	b.WriteString(" age=" + strconv.FormatInt(age, 10) + " idle=0 flags=" + c.flags(false))
	b.WriteString(" db=" + strconv.Itoa(db))
	sub, psub, ssub := c.s.subCounts(c)
	b.WriteString(" sub=" + strconv.Itoa(sub) + " psub=" + strconv.Itoa(psub) + " ssub=" + strconv.Itoa(ssub))
	_, redir := c.s.trackingFlags(c)
	b.WriteString(" cmd=" + cmd + " user=default redir=" + strconv.FormatInt(redir, 10) +
		" resp=" + strconv.Itoa(int(c.resp.Load())) + "\n")
	return b.String()
}

// flags returns the connection's CLIENT LIST flags, in Redis's order: O
// (monitor), P (pub/sub), x (in MULTI, known only to its own goroutine:
// self), t, R and B (client-side caching), or N for none.
func (c *conn) flags(self bool) string {
	var f string
	if c.monitoring.Load() {
		f += "O"
	}
	if c.subscribed.Load() {
		f += "P"
	}
	if self && c.multi != nil {
		f += "x"
	}
	t, _ := c.s.trackingFlags(c)
	f += t
	if c.unix {
		f += "U"
	}
	if f == "" {
		f = "N"
	}
	return f
}

// info returns the connection's CLIENT INFO line.
func (c *conn) info(cmd string) string {
	var b strings.Builder
	age := int64(time.Since(c.created) / time.Second)
	b.WriteString("id=" + strconv.FormatInt(c.id, 10))
	b.WriteString(" addr=" + c.nc.RemoteAddr().String())
	b.WriteString(" laddr=" + c.nc.LocalAddr().String())
	b.WriteString(" fd=-1 name=" + c.name)
	b.WriteString(" age=" + strconv.FormatInt(age, 10) + " idle=0 flags=" + c.flags(true))
	b.WriteString(" db=" + strconv.Itoa(c.db))
	sub, psub, ssub := c.s.subCounts(c)
	b.WriteString(" sub=" + strconv.Itoa(sub) + " psub=" + strconv.Itoa(psub) + " ssub=" + strconv.Itoa(ssub) + " multi=")
	if c.multi != nil {
		b.WriteString(strconv.Itoa(len(c.multi.cmds)))
	} else {
		b.WriteString("-1")
	}
	b.WriteString(" cmd=" + cmd + " user=default")
	b.WriteString(" lib-name=" + c.libName + " lib-ver=" + c.libVer)
	_, redir := c.s.trackingFlags(c)
	b.WriteString(" redir=" + strconv.FormatInt(redir, 10) + " resp=" + strconv.Itoa(c.w.proto))
	b.WriteString("\n")
	return b.String()
}

func cmdClientInfo(x *call) { x.w.verbatim(x.c.info("client|info")) }

func cmdClientList(x *call) {
	var b strings.Builder
	for _, c := range x.s.connections() {
		if c == x.c {
			b.WriteString(c.info("client|list"))
		} else {
			b.WriteString(c.infoSnapshot("NULL"))
		}
	}
	x.w.verbatim(b.String())
}
