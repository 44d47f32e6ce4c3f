package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sortFuncAllowed are the production calls of slices.SortFunc and
// SortStableFunc kept on purpose: their element types share a shape with
// an instantiation the standard library already links (string, int32,
// [2]int, an interface), or the sort is on a hot path (canonical JSON's
// members).
var sortFuncAllowed = map[string]bool{
	"internal/tool/canon.go":        true,
	"internal/secrets/redact.go":    true,
	"internal/secrets/transform.go": true,
	"internal/egress/proxycred.go":  true,
	"internal/workspace/read.go":    true,
}

// TestNoStructShapedSortFunc keeps the binary's bytes: every struct
// element type given to slices.SortFunc or SortStableFunc instantiates
// the whole pdqsort (about 12 KB of code each; eleven of them weighed
// 184 KB). sort.Slice and sort.SliceStable share one implementation.
func TestNoStructShapedSortFunc(t *testing.T) {
	call := regexp.MustCompile(`slices\.Sort(Stable)?Func\(`)
	root := filepath.Join("..", "..")
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "testdata") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if call.Match(src) && !sortFuncAllowed[rel] {
				t.Errorf("%s calls slices.SortFunc or SortStableFunc: use sort.Slice or sort.SliceStable (a struct-shaped instantiation costs about 12 KB of binary), or add it to sortFuncAllowed saying why", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
