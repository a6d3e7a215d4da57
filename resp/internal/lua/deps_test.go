package lua_test

import (
	"os/exec"
	"strings"
	"testing"
)

// self is this package's import path, the only one allowed to import
// gopher-lua.
const self = "github.com/nxkv/nxkv/resp/internal/lua"

// luaImporters returns the packages of listing (go list's "path: imports"
// lines) that import gopher-lua or one of its packages, test variants
// named by their package.
func luaImporters(listing string) map[string]bool {
	found := map[string]bool{}
	for _, line := range strings.Split(listing, "\n") {
		pkg, imports, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		pkg, _, _ = strings.Cut(pkg, " [") // "p [p.test]" is p's test variant
		for _, imp := range strings.Fields(imports) {
			if imp == "github.com/yuin/gopher-lua" || strings.HasPrefix(imp, "github.com/yuin/gopher-lua/") {
				found[pkg] = true
			}
		}
	}
	return found
}

// TestOnlyThisPackageImportsGopherLua: no package of the module (or of the
// bench module beside it), tests included, imports gopher-lua but this
// one, so the rest of the server reaches Lua only through this package's
// interface. The check is shown to see this package's own imports, so it
// cannot pass by reading nothing.
func TestOnlyThisPackageImportsGopherLua(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}",
		"github.com/nxkv/nxkv/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	found := luaImporters(string(out))
	if !found[self] {
		t.Fatalf("go list did not show %s importing gopher-lua; the check reads the wrong listing:\n%s", self, out)
	}
	for pkg := range found {
		if pkg != self {
			t.Errorf("%s imports gopher-lua; only %s may", pkg, self)
		}
	}
}
