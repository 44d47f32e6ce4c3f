// Package langscan reads Go and script source for internal/lang's tests:
// the catalog keys a package uses and the user-facing literals it leaves
// outside the catalog. Only tests import it (go/parser would weigh on
// the binary).
package langscan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Found is what Scan found in a package's source: the catalog keys it
// uses and the user-facing literals it leaves outside the catalog.
type Found struct {
	// Keys maps each key (the English text passed to a Printer or N) to
	// where it is used ("file.go:12").
	Keys map[string]string
	// Loose lists user-facing literals outside the catalog: "file.go:12:
	// "text"".
	Loose []string
}

// printerMethods are the Printer methods whose format is a key, with the
// index of that argument.
var printerMethods = map[string]int{"T": 0, "Sprintf": 0, "Errorf": 0, "Fprintf": 1, "Fprintln": 1}

// logMethods are logger calls whose literals are log keys and messages
// for the operator's log, which stays English.
var logMethods = map[string]bool{"Debug": true, "Info": true, "Warn": true, "Error": true,
	"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true, "Log": true, "LogAttrs": true}

// Scan reads the non-test Go files of dir. It is the catalog tests'
// reader, exported so each catalogued package's own test can call it.
func Scan(dir string) (Found, error) {
	found := Found{Keys: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return found, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return found, err
		}
		scanFile(fset, f, name, &found)
	}
	sort.Strings(found.Loose)
	return found, nil
}

func scanFile(fset *token.FileSet, f *ast.File, name string, found *Found) {
	englishLines := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.Contains(c.Text, "lang:en") {
				englishLines[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	skip := map[*ast.BasicLit]bool{}
	where := func(n ast.Node) string { return name + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) }
	for _, imp := range f.Imports {
		skip[imp.Path] = true
	}
	for _, decl := range f.Decls {
		var doc *ast.CommentGroup
		switch d := decl.(type) {
		case *ast.FuncDecl:
			doc = d.Doc
		case *ast.GenDecl:
			doc = d.Doc
		}
		if doc != nil && strings.Contains(doc.Text(), "lang:en") {
			ast.Inspect(decl, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok {
					skip[lit] = true
				}
				return true
			})
			continue
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if n.Tag != nil {
					skip[n.Tag] = true
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				if pkg != nil && pkg.Name == "lang" && sel.Sel.Name == "N" && len(n.Args) == 1 {
					if lit := stringLit(n.Args[0]); lit != nil {
						skip[lit] = true
						found.Keys[unquote(lit)] = where(lit)
					}
					return true
				}
				if logMethods[sel.Sel.Name] && (pkg == nil || pkg.Name != "errors") {
					for _, a := range n.Args {
						ast.Inspect(a, func(m ast.Node) bool {
							if lit, ok := m.(*ast.BasicLit); ok {
								skip[lit] = true
							}
							return true
						})
					}
					return true
				}
				i, ok := printerMethods[sel.Sel.Name]
				if !ok || (pkg != nil && pkg.Name == "fmt") || len(n.Args) <= i {
					return true
				}
				if lit := stringLit(n.Args[i]); lit != nil {
					skip[lit] = true
					found.Keys[unquote(lit)] = where(lit)
				}
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || skip[lit] || englishLines[fset.Position(lit.Pos()).Line] {
			return true
		}
		if s := unquote(lit); UserFacing(s) {
			found.Loose = append(found.Loose, where(lit)+": "+strconv.Quote(s))
		}
		return true
	})
}

func stringLit(e ast.Expr) *ast.BasicLit {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		return lit
	}
	return nil
}

func unquote(lit *ast.BasicLit) string {
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return lit.Value
	}
	return s
}

var (
	sqlStart = regexp.MustCompile(`^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|WITH|PRAGMA|BEGIN|ALTER|DROP)\b`)
	word     = regexp.MustCompile(`[A-Za-z]{3,}`)
)

// UserFacing reports whether s reads as text for a person: a word of
// three letters or more and a space between words, or any Han character.
// SQL, paths, identifiers and bare formats are not.
func UserFacing(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	if sqlStart.MatchString(s) || !word.MatchString(s) {
		return false
	}
	t := strings.TrimSpace(s)
	return strings.Contains(t, " ")
}

// jsKey is a call of the web UI's t("…") with a plain double-quoted key.
var jsKey = regexp.MustCompile(`\bt\("((?:[^"\\]|\\.)*)"`)

// ScanJS returns the keys a script passes to t("…").
func ScanJS(src string) []string {
	var keys []string
	for _, m := range jsKey.FindAllStringSubmatch(src, -1) {
		k, err := strconv.Unquote(`"` + m[1] + `"`)
		if err != nil {
			k = m[1]
		}
		keys = append(keys, k)
	}
	return keys
}

// verbRe matches a fmt verb with its optional explicit argument index.
var verbRe = regexp.MustCompile(`%(\[(\d+)\])?[-+# 0]*\d*(\.\d*)?([a-zA-Z%])`)

// Verbs lists format's verbs as "index:verb" in argument order, so a
// translation that reorders with %[2]s still matches: two formats take
// the same arguments when their sorted Verbs are equal.
func Verbs(format string) []string {
	var out []string
	next := 1
	for _, m := range verbRe.FindAllStringSubmatch(format, -1) {
		if m[4] == "%" {
			continue
		}
		i := next
		if m[2] != "" {
			i, _ = strconv.Atoi(m[2])
		}
		out = append(out, strconv.Itoa(i)+":"+m[4])
		next = i + 1
	}
	sort.Strings(out)
	return out
}
