package resp

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update", false, "rewrite COMMANDS.md from the command table")

// groupTitles names Redis's command groups in Redis's order, as COMMANDS.md
// presents them.
var groupTitles = []struct{ group, title string }{
	{"generic", "Keys"}, {"string", "Strings"}, {"list", "Lists"}, {"set", "Sets"},
	{"sorted-set", "Sorted sets"}, {"hash", "Hashes"}, {"pubsub", "Pub/sub"},
	{"transactions", "Transactions"}, {"connection", "Connection"}, {"server", "Server"},
	{"scripting", "Scripting"}, {"bitmap", "Bitmaps"},
}

// commandsDoc renders COMMANDS.md from the command table.
func commandsDoc() []byte {
	cmds := commands()
	subs := 0
	for _, c := range cmds {
		if strings.Contains(c.name, "|") {
			subs++
		}
	}
	var b bytes.Buffer
	b.WriteString("# Commands of nxkv-server\n\n")
	b.WriteString("<!-- Generated from resp/commands.go by `go generate ./resp`; do not edit. -->\n\n")
	fmt.Fprintf(&b, "The server (package `resp`, `cmd/nxkv-server`) implements these %d commands "+
		"and %d subcommands, with the replies of Redis %s. Any other command gets Redis's "+
		"unknown-command error. *Since* is the Redis version that introduced the command; "+
		"*notes* say where nxkv differs from Redis. `COMMAND DOCS` and `COMMAND INFO` describe the same "+
		"table at run time.\n", len(cmds)-subs, subs, RedisVersion)
	for _, g := range groupTitles {
		var rows []*command
		for _, c := range cmds {
			if c.group == g.group {
				rows = append(rows, c)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", g.title)
		b.WriteString("| Command | Since | Summary | Complexity | Notes |\n| --- | --- | --- | --- | --- |\n")
		for _, c := range rows {
			name := strings.ToUpper(strings.ReplaceAll(c.name, "|", " "))
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", name, c.since, c.summary, c.complexity, c.note)
		}
	}
	return b.Bytes()
}

// TestCommandsDocUpToDate: COMMANDS.md is what the command table renders
// (go generate ./resp rewrites it), and every command has a summary, a
// group COMMANDS.md presents and a version.
func TestCommandsDocUpToDate(t *testing.T) {
	for _, c := range commands() {
		known := false
		for _, g := range groupTitles {
			known = known || c.group == g.group
		}
		if c.summary == "" || c.since == "" || c.complexity == "" || !known {
			t.Errorf("%s: summary %q, since %q, complexity %q, group %q", c.name, c.summary, c.since, c.complexity, c.group)
		}
	}
	want := commandsDoc()
	if *updateDoc {
		if err := os.WriteFile("COMMANDS.md", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("COMMANDS.md")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("COMMANDS.md is not what the command table renders (%v): run go generate ./resp", err)
	}
}
