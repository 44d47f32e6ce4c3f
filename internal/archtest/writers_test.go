package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// The one gate for every write (internal/changeset): nothing outside
// internal/workspace and internal/changeset may write into a workspace
// root. workspace's own writers are unexported except the ones below, and
// those are reached only through the gate; os.OpenRoot is workspace's
// alone. A new package that wants to write into a root must go through
// changeset.Gate, or this test fails.

// rootWriters are the workspace methods that change a root.
var rootWriters = []string{"ApplyChanges", "RollbackCheckpoint", "RecoverChanges", "SweepTemp"}

// gateKeepers may call them.
var gateKeepers = []string{"internal/workspace", "internal/changeset"}

// rootReaders may open an os.Root to read a folder that is not a
// workspace root, with the reason.
var rootReaders = map[string]string{
	"internal/skill": "ReadTree reads a skill's own folder through root.FS(), read-only, to hash and install it",
}

// rootWriteCalls returns a description of every call in f that writes into
// a root from outside the gate: a call of a method named like one of
// rootWriters, or of os.OpenRoot outside internal/workspace. It works on
// names, without types: a method of another type with one of these names
// is refused too, which keeps the names the gate's.
func rootWriteCalls(pkgName string, fset *token.FileSet, f *ast.File) []string {
	if slices.Contains(gateKeepers, pkgName) && pkgName == "internal/workspace" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pos := fset.Position(call.Pos())
		where := filepath.Base(pos.Filename) + ":" + itoa(pos.Line)
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && sel.Sel.Name == "OpenRoot" && rootReaders[pkgName] == "" {
			out = append(out, pkgName+" "+where+": os.OpenRoot outside internal/workspace")
		}
		if slices.Contains(rootWriters, sel.Sel.Name) && !slices.Contains(gateKeepers, pkgName) {
			out = append(out, pkgName+" "+where+": calls "+sel.Sel.Name+", which writes into a workspace root; go through changeset.Gate")
		}
		return true
	})
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestOnlyTheGateWritesIntoRoots(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, p := range listPackages(t) {
		name := rel(p.ImportPath)
		for _, file := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, file), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", file, err)
			}
			checked++
			for _, v := range rootWriteCalls(name, fset, f) {
				t.Error(v)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files; is go list reporting GoFiles and Dir?", checked)
	}
}

// TestRootWriteCallsCatchesViolations proves the rule is not vacuous: a
// violation added by hand is found, and its twins (the same call inside
// the gate, an ordinary os.WriteFile for homard's own data) are not.
func TestRootWriteCallsCatchesViolations(t *testing.T) {
	src := `package tools
import "os"
func f(ws W, cs C) {
	ws.ApplyChanges(nil, "main", cs, t, o)
	r, _ := os.OpenRoot("/tmp")
	_ = r
	ws.RollbackCheckpoint("id", "hash")
	os.WriteFile("/data/homard/x", nil, 0o600)
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "v.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := rootWriteCalls("internal/tools", fset, f); len(got) != 3 {
		t.Errorf("violations in internal/tools = %q; want ApplyChanges, os.OpenRoot and RollbackCheckpoint", got)
	}
	if got := rootWriteCalls("internal/changeset", fset, f); len(got) != 1 {
		t.Errorf("violations in internal/changeset = %q; want only os.OpenRoot", got)
	}
	if got := rootWriteCalls("internal/workspace", fset, f); len(got) != 0 {
		t.Errorf("violations in internal/workspace = %q; want none", got)
	}
}
