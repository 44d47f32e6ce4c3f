package skill

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: Parse never panics, and whatever it accepts keeps the
// manifest's invariants.
func FuzzParse(f *testing.F) {
	f.Add(goodDoc, goodJSON)
	f.Add("---\nname: a\ndescription: b\n---\n", `{"entrypoint":["./run.sh"],"parameters":{"type":"object","properties":{},"additionalProperties":false},"permissions":{}}`)
	f.Add("---\nname: a\n", `{"entrypoint":[]}`)
	f.Fuzz(func(t *testing.T, doc, js string) {
		m, err := Parse("", map[string][]byte{DocFile: []byte(doc), ManifestFile: []byte(js), "run.sh": []byte(goodScript)})
		if err != nil {
			return
		}
		if !nameRe().MatchString(m.Name) || utf8.RuneCountInString(m.Description) > MaxDescription || strings.ContainsFunc(m.Description, hidden) {
			t.Errorf("accepted name %q description %q", m.Name, m.Description)
		}
		if len(m.Entrypoint) == 0 || m.Entrypoint[0] != "./run.sh" {
			t.Errorf("accepted entrypoint %q", m.Entrypoint)
		}
		for name, p := range m.Params.Properties {
			if !paramRe().MatchString(name) || p.Type == "" {
				t.Errorf("accepted parameter %q %+v", name, p)
			}
		}
		if _, err := m.Params.CheckArgs(map[string]any{"zz_undeclared_zz": "x"}); err == nil {
			t.Errorf("an undeclared parameter passed CheckArgs")
		}
	})
}
