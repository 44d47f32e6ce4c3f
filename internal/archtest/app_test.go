package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// internal/app is the composition root: it wires, it holds no feature
// (DESIGN.md §5). A feature lives in its own package below app, reached
// through a small interface (internal/chats, internal/automation,
// internal/extensions, internal/owner); these floors keep app from growing
// back into the room where every feature lives.
const (
	// maxRuntimeMethods caps app.Runtime's exported methods: a front end
	// reaches a feature through its service (Runtime.Owner, …), not a
	// Runtime method per action.
	maxRuntimeMethods = 30
	// maxAppLines caps app's non-test Go lines.
	maxAppLines = 4000
)

// TestAppIsWiring fails when app.Runtime has more exported methods than
// maxRuntimeMethods or app more lines than maxAppLines, naming them.
func TestAppIsWiring(t *testing.T) {
	dir := filepath.Join("..", "app")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var methods []string
	lines := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(src), "\n")
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || receiverName(fn) != "Runtime" {
				continue
			}
			methods = append(methods, fn.Name.Name+" ("+name+")")
		}
	}
	sort.Strings(methods)
	if len(methods) > maxRuntimeMethods {
		t.Errorf("app.Runtime has %d exported methods, more than %d: put the feature in its own package and expose its service once\n%s",
			len(methods), maxRuntimeMethods, strings.Join(methods, "\n"))
	}
	if lines > maxAppLines {
		t.Errorf("internal/app has %d lines of non-test Go, more than %d: app wires; a feature goes in its own package", lines, maxAppLines)
	}
	t.Logf("app.Runtime: %d exported methods (limit %d); internal/app: %d lines (limit %d)", len(methods), maxRuntimeMethods, lines, maxAppLines)
}

// receiverName is the type name of fn's receiver, without a pointer.
func receiverName(fn *ast.FuncDecl) string {
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// carved are the features that left app, each in its own package that app
// wires and that never imports app (TestImportsFollowThePackageTable
// refuses any import of app).
var carved = []string{"internal/chats", "internal/automation", "internal/extensions", "internal/owner"}

// TestAppWiresTheCarvedFeatures: app imports each carved package (it is
// wired, not copied back into app).
func TestAppWiresTheCarvedFeatures(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.ImportPath != module+"/internal/app" {
			continue
		}
		for _, c := range carved {
			if !slices.Contains(p.Imports, module+"/"+c) {
				t.Errorf("internal/app does not import %s: the feature must be wired from its own package", c)
			}
		}
		return
	}
	t.Fatal("internal/app not listed")
}
