package nxkv_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePath is this module's path.
const modulePath = "github.com/nxkv/nxkv"

// requires returns the module paths a go.mod file requires; with
// directOnly, only those not marked indirect.
func requires(t *testing.T, gomod string, directOnly bool) []string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	req := regexp.MustCompile(`^\s*(?:require\s+)?([a-z0-9.\-]+\.[a-z]+/[\w.\-/]+)\s+v\S+`)
	for _, line := range strings.Split(string(b), "\n") {
		if m := req.FindStringSubmatch(line); m != nil && !(directOnly && strings.Contains(line, "// indirect")) {
			mods = append(mods, m[1])
		}
	}
	return mods
}

// packages returns this module's packages, by directory relative to the
// root (".", "engine", "lockapi/inproc"), each with the names it declares:
// top-level names, and Type.Method and Type.Field.
func packages(t *testing.T) map[string]map[string]bool {
	t.Helper()
	pkgs := map[string]map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench") {
				return filepath.SkipDir // bench is its own module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		names := pkgs[dir]
		if names == nil {
			names = map[string]bool{}
			pkgs[dir] = names
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				rt := d.Recv.List[0].Type
				if s, ok := rt.(*ast.StarExpr); ok {
					rt = s.X
				}
				if ix, ok := rt.(*ast.IndexExpr); ok {
					rt = ix.X
				}
				if id, ok := rt.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, f := range st.Fields.List {
								for _, n := range f.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

var (
	// modRef is a module or package path of the kind go.mod requires.
	modRef = regexp.MustCompile(`\b(?:github\.com|golang\.org|go\.uber\.org|pgregory\.net|gopkg\.in|k8s\.io)/[\w.\-]+(?:/[\w.\-]+)*`)
	// inlineCode is a `span` of Markdown outside fenced blocks.
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
	fence      = regexp.MustCompile("(?s)```.*?```")
	// qualified is pkg.Name or pkg.Type.Name.
	qualified = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	// relDir is a ./dir argument of a command.
	relDir = regexp.MustCompile(`(?:^|[\s(` + "`" + `])\./([a-z][\w\-/]*\w)`)
	// tableRow is a row of the README's package table.
	tableRow = regexp.MustCompile("(?m)^\\| `([a-z][\\w/\\-]*)` \\|")
)

// checkReadmeRefs returns what README text names that does not exist: a
// module that neither go.mod requires, a package of this module that is
// not there, a name such a package does not declare, a directory a command
// names that is not there, and a package the package table leaves out.
func checkReadmeRefs(readme string, mods []string, pkgs map[string]map[string]bool) []string {
	var bad []string
	for _, ref := range slices.Compact(slices.Sorted(slices.Values(modRef.FindAllString(readme, -1)))) {
		ref = strings.TrimRight(ref, ".")
		if rest, ok := strings.CutPrefix(ref, modulePath); ok {
			if rest = strings.TrimPrefix(rest, "/"); rest != "" && pkgs[rest] == nil {
				bad = append(bad, "names package "+ref+", which does not exist")
			}
			continue
		}
		if !slices.ContainsFunc(mods, func(m string) bool { return ref == m || strings.HasPrefix(ref, m+"/") }) {
			bad = append(bad, "names "+ref+", which no go.mod requires")
		}
	}
	// Packages by name, for pkg.Name references.
	byName := map[string][]string{}
	for dir := range pkgs {
		byName[filepath.Base(dir)] = append(byName[filepath.Base(dir)], dir)
	}
	prose := fence.ReplaceAllString(readme, "")
	for _, m := range inlineCode.FindAllStringSubmatch(prose, -1) {
		for _, q := range qualified.FindAllStringSubmatch(m[1], -1) {
			dirs := byName[q[1]]
			if len(dirs) == 0 {
				continue // another project's package (redis.Options)
			}
			name := q[2]
			if q[3] != "" {
				name += "." + q[3]
			}
			if !slices.ContainsFunc(dirs, func(d string) bool { return pkgs[d][name] }) {
				bad = append(bad, "names "+q[0]+", which package "+q[1]+" does not declare")
			}
		}
	}
	for _, m := range relDir.FindAllStringSubmatch(readme, -1) {
		if fi, err := os.Stat(m[1]); err != nil || !fi.IsDir() {
			bad = append(bad, "a command names ./"+m[1]+", which is not a directory")
		}
	}
	listed := map[string]bool{}
	for _, m := range tableRow.FindAllStringSubmatch(readme, -1) {
		listed[m[1]] = true
		if pkgs[m[1]] == nil && m[1] != "bench" {
			bad = append(bad, "the package table lists "+m[1]+", which is not a package")
		}
	}
	for dir := range pkgs {
		if dir != "." && !strings.HasPrefix(dir, "internal") && !listed[dir] {
			bad = append(bad, "the package table leaves out "+dir)
		}
	}
	slices.Sort(bad)
	return bad
}

// dependencySentence is where the README lists the module's requirements.
var dependencySentence = regexp.MustCompile(`(?s)The module requires (.*?)\. The module needs`)

// TestReadmeNamesWhatExists checks the README's references against the
// code: every module it names is required by go.mod or bench/go.mod, its
// list of the module's requirements is go.mod's, every package and exported
// name of this module it names exists, and the package table lists every
// package.
func TestReadmeNamesWhatExists(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	mods := append(requires(t, "go.mod", false), requires(t, "bench/go.mod", false)...)
	pkgs := packages(t)
	for _, b := range checkReadmeRefs(string(readme), mods, pkgs) {
		t.Error("README.md " + b)
	}
	m := dependencySentence.FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("README.md does not list the module's requirements (\"The module requires ...\")")
	}
	listed := slices.Sorted(slices.Values(modRef.FindAllString(m[1], -1)))
	want := slices.Sorted(slices.Values(requires(t, "go.mod", true)))
	if !slices.Equal(listed, want) {
		t.Errorf("README.md says the module requires %v; go.mod requires %v", listed, want)
	}
}

// TestReadmeRefsCatchesPlantedNames shows each check failing on a README
// that names what does not exist.
func TestReadmeRefsCatchesPlantedNames(t *testing.T) {
	mods := requires(t, "go.mod", false)
	pkgs := packages(t)
	base := "| `engine` | x |\n"
	for dir := range pkgs {
		if dir != "." && dir != "engine" && !strings.HasPrefix(dir, "internal") {
			base += "| `" + dir + "` | x |\n"
		}
	}
	if bad := checkReadmeRefs(base, mods, pkgs); len(bad) != 0 {
		t.Fatalf("a README listing every package: %v", bad)
	}
	for _, planted := range []string{
		"uses github.com/cespare/xxhash/v3 for hashing",      // a module go.mod does not require
		"see github.com/nxkv/nxkv/lockapi/zookeeper",         // a package that does not exist
		"set `engine.Options.Hasher` to change the hash",     // a field that does not exist
		"call `lockapi.ObtainForever` to wait without limit", // a function that does not exist
		"run `go doc ./lockapi/etcd`",                        // a directory that does not exist
		"| `lockapi/etcd` | an etcd backend |",               // a table row for no package
	} {
		if bad := checkReadmeRefs(base+planted+"\n", mods, pkgs); len(bad) == 0 {
			t.Errorf("checkReadmeRefs(%q) found nothing", planted)
		}
	}
	if bad := checkReadmeRefs("| `engine` | x |\n", mods, pkgs); len(bad) == 0 {
		t.Error("checkReadmeRefs found no package missing from a one-row table")
	}
}
