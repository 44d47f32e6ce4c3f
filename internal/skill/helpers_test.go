package skill

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homard/homard/internal/store/storetest"
)

const goodDoc = `---
name: weather
description: Look up the weather forecast for a city.
---
# Weather

Call run_skill with city and days.
`

const goodJSON = `{
  "entrypoint": ["./run.sh", "forecast"],
  "parameters": {
    "type": "object",
    "properties": {
      "city": {"type": "string", "description": "city name", "maxLength": 80},
      "days": {"type": "integer", "minimum": 1, "maximum": 7},
      "metric": {"type": "boolean"}
    },
    "required": ["city"],
    "additionalProperties": false
  },
  "permissions": {
    "roots": [{"name": "main", "access": "ro"}],
    "hosts": ["api.weather.example"],
    "secrets": ["weather"]
  }
}`

const goodScript = "#!/bin/sh\nprintf 'forecast for %s\\n' \"$2\"\n"

// writeSkill writes a skill folder named dir under parent with the good
// files, overridden or extended by extra (a "" value deletes the file).
func writeSkill(t *testing.T, parent, dir string, extra map[string]string) string {
	t.Helper()
	root := filepath.Join(parent, dir)
	files := map[string]string{"SKILL.md": goodDoc, "skill.json": goodJSON, "run.sh": goodScript}
	for k, v := range extra {
		files[k] = v
	}
	for name, body := range files {
		if body == "" {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(name) == ".sh" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// newLibrary returns a library in a fresh data folder with a real store.
func newLibrary(t *testing.T) *Library {
	t.Helper()
	data := t.TempDir()
	st := storetest.Open(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	return NewLibrary(Folder(data), st, func() time.Time { return now })
}

// install inspects and installs the skill at src, failing the test on error.
func install(t *testing.T, l *Library, src string) Candidate {
	t.Helper()
	c, err := Inspect(src)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", src, err)
	}
	if err := l.Install(context.Background(), c); err != nil {
		t.Fatalf("Install(%s): %v", c.Manifest.Name, err)
	}
	return c
}
