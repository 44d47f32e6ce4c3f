package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad feeds Load any file: it never panics, and a file it accepts
// renders (Render validates it again) and loads back to the same Config —
// so what homard accepts it also writes back faithfully (`homard setup`,
// config edits).
func FuzzLoad(f *testing.F) {
	f.Add(baseConfig)
	f.Add(baseConfig + "\n[browser]\nenabled = true\nidle_timeout = \"1m\"\n")
	f.Add(baseConfig + "\n[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\nlog_model_inputs = true\n")
	f.Add(baseConfig + "\n[[rules]]\nid = \"r\"\ntool = \"http_get\"\nhost = \"*.example.org\"\neffect = \"allow\"\n")
	f.Add("owner = \"x\"\n[permissions]\nmode = \"yolo\"\ntotp = \"network\"\n")
	f.Add("[model]\nprovider = \"anthropic\"\n[channels.telegram]\nenabled = true\ngroups = [-100123]\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			return
		}
		data, err := Render(c)
		if err != nil {
			t.Fatalf("Load accepted a config Render refuses: %v\n%s", err, content)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := Load(path)
		if err != nil {
			t.Fatalf("Load(Render(c)): %v\nrendered:\n%s\nfrom:\n%s", err, data, content)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("Load(Render(c)) differs from c\nc     = %+v\nagain = %+v\nfrom:\n%s", c, again, content)
		}
	})
}
