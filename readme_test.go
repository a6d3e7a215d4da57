// Package nxkv_test checks that the README's Go snippets are code that
// compiles and runs: each is the body of a runnable Example somewhere in
// the module (go test compiles it, runs it and checks its output), or a
// whole test function, which go test compiles and runs.
package nxkv_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlock is a fenced Go code block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// exampleBodies returns the body of every Example function under root,
// dedented one level, without its output comment, and the whole source of
// every Test and Example function, each keyed by its text.
func exampleBodies(t *testing.T, root string) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			where := path + ": " + fn.Name.Name
			switch name := fn.Name.Name; {
			case strings.HasPrefix(name, "Example"):
				body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
				bodies[normalize(body, "\t")] = where
				fallthrough
			case strings.HasPrefix(name, "Test"):
				whole := string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset])
				bodies[strings.TrimSpace(whole)] = where
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

// normalize removes indent from every line of body (a function body's
// one tab; nothing for a README block), drops an "// Output:" comment and
// what follows, and trims blank lines at the ends, so that a function body
// and a README block can be compared.
func normalize(body, indent string) string {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) == "// Output:" {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, indent))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func TestReadmeSnippetsAreExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go snippet; this test would check nothing")
	}
	bodies := exampleBodies(t, ".")
	for _, b := range blocks {
		snippet := normalize(b[1], "")
		if where, ok := bodies[snippet]; ok {
			t.Logf("README snippet is %s", where)
			continue
		}
		t.Errorf("README snippet is neither the body of an Example function nor a whole test function (keep it in one, so that CI compiles and runs it):\n%s", snippet)
	}
}

// TestReadmeCheckCatchesEdits shows the check fails for a snippet edited
// without its example: one changed line is enough.
// Every body is edited in turn (one-line bodies included: the line is
// added after the first one, or at the end).
func TestReadmeCheckCatchesEdits(t *testing.T) {
	bodies := exampleBodies(t, ".")
	if len(bodies) == 0 {
		t.Fatal("no Example functions found")
	}
	for body := range bodies {
		first, rest, _ := strings.Cut(body, "\n")
		edited := first + "\nx := 1\n" + rest
		if _, ok := bodies[strings.TrimSpace(edited)]; ok {
			t.Fatalf("an edited body still matches an example: %q", edited)
		}
	}
}
