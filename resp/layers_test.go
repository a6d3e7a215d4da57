package resp

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layerMap reads the table of layers from doc.go: each file's layer, bottom
// first, and the layers' names.
func layerMap(t *testing.T) (map[string]int, []string) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]int{}
	var names []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		fs := strings.Fields(strings.TrimPrefix(line, "//"))
		switch {
		case len(fs) == 2 && fs[0] == "layer" && fs[1] == "files":
			in = true
		case in && len(fs) == 0:
			in = false
		case in:
			for _, f := range fs[1:] {
				layer[f] = len(names)
			}
			names = append(names, fs[0])
		}
	}
	if len(names) == 0 {
		t.Fatal("doc.go has no table of layers")
	}
	return layer, names
}

// callGraph type-checks the package's files on this platform and returns
// its file-to-file uses of functions, methods, variables and constants
// (types are shared by every layer): edges[from][to] names what from uses.
func callGraph(t *testing.T) (files []string, edges map[string]map[string]map[string]bool) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(".", n); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, n)
		parsed = append(parsed, f)
	}
	// The imports come from the build cache's export data.
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	export := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if p, file, ok := strings.Cut(line, " "); ok {
			export[p] = file
		}
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(export[path]) }
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check("resp", fset, parsed, info)
	if err != nil {
		t.Fatal(err)
	}
	edges = map[string]map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		switch o := obj.(type) {
		case *types.Func:
			if o.Type().(*types.Signature).Recv() == nil && o.Parent() != pkg.Scope() {
				continue
			}
		case *types.Var:
			if o.IsField() || o.Parent() != pkg.Scope() {
				continue
			}
		case *types.Const:
			if o.Parent() != pkg.Scope() {
				continue
			}
		default:
			continue // types are shared by every layer
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			continue
		}
		if edges[from] == nil {
			edges[from] = map[string]map[string]bool{}
		}
		if edges[from][to] == nil {
			edges[from][to] = map[string]bool{}
		}
		edges[from][to][obj.Name()] = true
	}
	return files, edges
}

// upward returns the edges from a file of a lower layer to one of a higher
// layer, as "from (layer) -> to (layer): names", sorted.
func upward(edges map[string]map[string]map[string]bool, layer map[string]int, names []string) []string {
	var up []string
	for from, tos := range edges {
		for to, objs := range tos {
			lf, okf := layer[from]
			lt, okt := layer[to]
			if !okf || !okt || lf >= lt {
				continue
			}
			ns := slices.Sorted(maps.Keys(objs))
			up = append(up, from+" ("+names[lf]+") -> "+to+" ("+names[lt]+"): "+strings.Join(ns, " "))
		}
	}
	sort.Strings(up)
	return up
}

// TestLayers: every file of the package is in doc.go's table of layers,
// and no file calls into a layer above its own. The check is shown to see
// an upward call: with t_string.go moved to the bottom layer, its calls of
// the keyspace and the reply writer are reported.
func TestLayers(t *testing.T) {
	layer, names := layerMap(t)
	files, edges := callGraph(t)
	for _, f := range files {
		if _, ok := layer[f]; !ok {
			t.Errorf("%s is in no layer of doc.go's table", f)
		}
	}
	for _, e := range upward(edges, layer, names) {
		t.Errorf("a call from a lower layer up: %s", e)
	}
	planted := maps.Clone(layer)
	planted["t_string.go"] = 0
	up := upward(edges, planted, names)
	if !slices.ContainsFunc(up, func(e string) bool { return strings.HasPrefix(e, "t_string.go (util) -> db.go") }) {
		t.Errorf("with t_string.go in the bottom layer, the check found %q", up)
	}
}
