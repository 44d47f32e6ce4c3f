package skill

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func goodManifest(t *testing.T) Manifest {
	t.Helper()
	m, err := Parse("weather", map[string][]byte{DocFile: []byte(goodDoc), ManifestFile: []byte(goodJSON), "run.sh": []byte(goodScript)})
	must(t, err)
	return m
}

// decodeArgs reads args as run_skill's decoder does (numbers as json.Number).
func decodeArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	must(t, dec.Decode(&m))
	return m
}

func TestCheckArgsAndArgv(t *testing.T) {
	m := goodManifest(t)
	cases := []struct {
		args    string
		argv    []string // nil: refused
		wantErr string
	}{
		{`{"city":"Paris"}`, []string{"./run.sh", "forecast", "--city=Paris"}, ""},
		{`{"metric":true,"days":3,"city":"Saint-Malo"}`, []string{"./run.sh", "forecast", "--city=Saint-Malo", "--days=3", "--metric=true"}, ""},
		{`{"city":"--help"}`, []string{"./run.sh", "forecast", "--city=--help"}, ""},
		{`{"city":"a b; rm -rf /"}`, []string{"./run.sh", "forecast", "--city=a b; rm -rf /"}, ""},
		{`{"city":"Paris","days":3.0}`, []string{"./run.sh", "forecast", "--city=Paris", "--days=3"}, ""},
		{`{"city":"Paris","units":"si"}`, nil, `parameter "units" is not declared; this skill takes city, days, metric`},
		{`{"city":"Paris","days":"3"}`, nil, "days"},
		{`{"city":"Paris","days":2.5}`, nil, "days"},
		{`{"city":"Paris","days":9}`, nil, "days"},
		{`{"city":"Paris","metric":"yes"}`, nil, "metric"},
		{`{"city":7}`, nil, "city"},
		{`{"days":3}`, nil, "city"},
		{`{"city":"a\u0000b"}`, nil, "NUL"},
		{`{"city":"` + strings.Repeat("x", 81) + `"}`, nil, "city"},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			norm, err := m.Params.CheckArgs(decodeArgs(t, c.args))
			if c.argv == nil {
				if !errors.Is(err, ErrArgs) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("CheckArgs(%s) = %v; want ErrArgs mentioning %q", c.args, err, c.wantErr)
				}
				return
			}
			must(t, err)
			argv, err := m.Argv(norm)
			must(t, err)
			if !slices.Equal(argv, c.argv) {
				t.Errorf("Argv(%s) = %q; want %q", c.args, argv, c.argv)
			}
		})
	}
}

func TestGrantGivesExactlyTheDeclaredPermissions(t *testing.T) {
	s := Skill{Manifest: goodManifest(t), Hash: strings.Repeat("a", 64), Dir: "/data/skills/weather"}
	good := Env{Roots: map[string]bool{"main": false, "notes": true}, Secrets: map[string][]string{"weather": {"api.weather.example"}, "github": {"api.github.com"}}}
	inv, err := s.Grant(good, []string{"./run.sh", "forecast", "--city=Paris"})
	must(t, err)
	if !slices.Equal(inv.Roots, []Root{{"main", "ro"}}) || !slices.Equal(inv.Hosts, []string{"api.weather.example"}) || !slices.Equal(inv.Secrets, []string{"weather"}) {
		t.Errorf("Grant = %+v; want exactly root main ro, host api.weather.example, secret weather", inv)
	}
	refused := []struct {
		name string
		edit func(e *Env, m *Manifest)
		want string
	}{
		{"root not in the workspace", func(e *Env, _ *Manifest) { delete(e.Roots, "main") }, `root "main", which is not a workspace root`},
		{"write to a read-only root", func(_ *Env, m *Manifest) { m.Perms.Roots = []Root{{"main", "rw"}} }, `write root "main", which is read-only`},
		{"secret missing", func(e *Env, _ *Manifest) { delete(e.Secrets, "weather") }, `secret "weather", which is not in the vault`},
		{"secret bound elsewhere", func(e *Env, _ *Manifest) { e.Secrets["weather"] = []string{"evil.example"} }, "bound to none of its hosts"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			env := Env{Roots: map[string]bool{"main": false}, Secrets: map[string][]string{"weather": {"api.weather.example"}}}
			sk := s
			sk.Perms.Roots = slices.Clone(s.Perms.Roots)
			c.edit(&env, &sk.Manifest)
			if _, err := sk.Grant(env, nil); !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Grant = %v; want ErrPermission containing %q", err, c.want)
			}
		})
	}
}
