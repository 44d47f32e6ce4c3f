package skill

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRefusesEachMalformedField(t *testing.T) {
	rep := func(old, new string) string { return strings.Replace(goodJSON, old, new, 1) }
	cases := []struct {
		name      string
		doc, json string
		want      string // the error names the file and the field
	}{
		{"unknown top-level field", goodDoc, rep(`"entrypoint"`, `"env": {}, "entrypoint"`), `skill.json: unknown field "env"`},
		{"unknown permission field", goodDoc, rep(`"hosts"`, `"network": true, "hosts"`), `skill.json: unknown field "permissions.network"`},
		{"unknown root field", goodDoc, rep(`"access": "ro"}`, `"access": "ro", "path": "/"}`), `unknown field "permissions.roots[0].path"`},
		{"unknown parameter keyword", goodDoc, rep(`"minimum": 1`, `"minimum": 1, "default": 3`), `unknown field "parameters.properties.days.default"`},
		{"missing entrypoint", goodDoc, rep(`"entrypoint": ["./run.sh", "forecast"],`, ``), `missing required field "entrypoint"`},
		{"empty entrypoint", goodDoc, rep(`["./run.sh", "forecast"]`, `[]`), `skill.json: field entrypoint: empty`},
		{"absolute entrypoint", goodDoc, rep(`"./run.sh"`, `"/bin/sh"`), `field entrypoint[0]: "/bin/sh"`},
		{"entrypoint outside", goodDoc, rep(`"./run.sh"`, `"./../run.sh"`), `field entrypoint[0]`},
		{"entrypoint not a file", goodDoc, rep(`"./run.sh"`, `"./missing.sh"`), `field entrypoint[0]: "./missing.sh" is not a file`},
		{"parameters not object", goodDoc, rep(`"type": "object"`, `"type": "array"`), `field parameters.type`},
		{"additionalProperties true", goodDoc, rep(`"additionalProperties": false`, `"additionalProperties": true`), `field parameters.additionalProperties`},
		{"additionalProperties missing", goodDoc, rep(`,
    "additionalProperties": false`, ``), `field parameters.additionalProperties: must be false`},
		{"parameter type", goodDoc, rep(`"type": "boolean"`, `"type": "object"`), `field parameters.properties.metric.type`},
		{"parameter name", goodDoc, rep(`"metric"`, `"Metric"`), `field parameters.properties: name "Metric"`},
		{"required undeclared", goodDoc, rep(`"required": ["city"]`, `"required": ["town"]`), `field parameters.required: "town"`},
		{"root access", goodDoc, rep(`"access": "ro"`, `"access": "rwx"`), `field permissions.roots[0].access: "rwx"`},
		{"two writable roots", goodDoc, rep(`[{"name": "main", "access": "ro"}]`, `[{"name": "main", "access": "rw"}, {"name": "docs", "access": "ro"}, {"name": "notes", "access": "rw"}]`), `field permissions.roots[2]: a skill may write to one root`},
		{"root name", goodDoc, rep(`"name": "main"`, `"name": "../x"`), `field permissions.roots[0].name`},
		{"host with scheme", goodDoc, rep(`"api.weather.example"`, `"https://api.weather.example"`), `field permissions.hosts[0]`},
		{"host port zero", goodDoc, rep(`"api.weather.example"`, `"api.weather.example:0"`), `field permissions.hosts[0]`},
		{"host port too large", goodDoc, rep(`"api.weather.example"`, `"api.weather.example:65536"`), `field permissions.hosts[0]`},
		{"host port not a number", goodDoc, rep(`"api.weather.example"`, `"api.weather.example:https"`), `field permissions.hosts[0]`},
		{"host wildcard", goodDoc, rep(`"api.weather.example"`, `"*.example"`), `field permissions.hosts[0]`},
		{"secret name", goodDoc, rep(`"secrets": ["weather"]`, `"secrets": ["we ather"]`), `field permissions.secrets[0]`},
		{"secret without host", goodDoc, rep(`"hosts": ["api.weather.example"],`, ``), `field permissions.secrets: a secret is only used`},
		{"duplicate key", goodDoc, rep(`"entrypoint": ["./run.sh", "forecast"],`, `"entrypoint": ["./run.sh"], "entrypoint": ["./run.sh"],`), `duplicate key "entrypoint"`},
		{"no front matter", "# Weather\n", goodJSON, `SKILL.md: must start with front matter`},
		{"unclosed front matter", "---\nname: weather\ndescription: x\n", goodJSON, `SKILL.md: front matter is not closed`},
		{"unknown front matter", strings.Replace(goodDoc, "name: weather", "name: weather\ntools: all", 1), goodJSON, `SKILL.md: unknown front matter field "tools"`},
		{"bad name", strings.Replace(goodDoc, "name: weather", "name: Weather!", 1), goodJSON, `SKILL.md: field name: "Weather!"`},
		{"missing description", strings.Replace(goodDoc, "description: Look up the weather forecast for a city.", "", 1), goodJSON, `SKILL.md: field description: missing`},
		{"long description", strings.Replace(goodDoc, "Look up", strings.Repeat("x", 200), 1), goodJSON, `SKILL.md: field description: 233 characters; the limit is 200`},
		{"hidden description", strings.Replace(goodDoc, "Look up", "Look\u202eup", 1), goodJSON, `SKILL.md: field description: holds control`},
		{"twice", strings.Replace(goodDoc, "name: weather", "name: weather\nname: weather", 1), goodJSON, `SKILL.md: front matter field "name" appears twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string][]byte{DocFile: []byte(c.doc), ManifestFile: []byte(c.json), "run.sh": []byte(goodScript)}
			_, err := Parse("weather", files)
			if err == nil {
				t.Fatalf("Parse accepted the manifest; want an error containing %q", c.want)
			}
			if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse error = %q; want ErrManifest containing %q", err, c.want)
			}
		})
	}
}

func TestParseAcceptsTheGoodManifest(t *testing.T) {
	files := map[string][]byte{DocFile: []byte(goodDoc), ManifestFile: []byte(goodJSON), "run.sh": []byte(goodScript)}
	m, err := Parse("weather", files)
	if err != nil {
		t.Fatalf("Parse(good) = %v", err)
	}
	if m.Name != "weather" || m.Description != "Look up the weather forecast for a city." {
		t.Errorf("name, description = %q, %q", m.Name, m.Description)
	}
	if len(m.Params.Properties) != 3 || m.Perms.Roots[0] != (Root{"main", "ro"}) || m.Perms.Hosts[0] != "api.weather.example" || m.Perms.Secrets[0] != "weather" {
		t.Errorf("parsed %+v", m)
	}
	// The twin of the port refusals: a host with a valid port, as a vault
	// binding may name one.
	withPort := strings.Replace(goodJSON, `"api.weather.example"`, `"api.weather.example:8443"`, 1)
	if m, err := Parse("weather", map[string][]byte{DocFile: []byte(goodDoc), ManifestFile: []byte(withPort), "run.sh": []byte(goodScript)}); err != nil || m.Perms.Hosts[0] != "api.weather.example:8443" {
		t.Errorf("Parse(host with :8443) = %v, %v; want it accepted", m.Perms.Hosts, err)
	}
	if _, err := Parse("other", files); err == nil || !strings.Contains(err.Error(), `does not match the skill's folder "other"`) {
		t.Errorf("Parse under another folder name = %v; want a name mismatch", err)
	}
}
