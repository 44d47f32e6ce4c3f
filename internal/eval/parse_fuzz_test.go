package eval

import (
	"io/fs"
	"testing"
)

// FuzzParse feeds Parse any scenario file (an owner's own, with --dir):
// it never panics, and a file it accepts has a name, a suite and steps a
// run can use.
func FuzzParse(f *testing.F) {
	files, _ := fs.Glob(embedded, "scenarios/*.toml")
	for _, p := range files {
		if b, err := fs.ReadFile(embedded, p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("name = \"x\"\nsuite = \"benign\"\n")
	f.Fuzz(func(t *testing.T, data string) {
		s, err := Parse("fuzz.toml", []byte(data))
		if err != nil {
			return
		}
		if s == nil || s.Name == "" || s.Suite == "" {
			t.Fatalf("Parse accepted a scenario without a name or suite: %+v\n%s", s, data)
		}
	})
}
