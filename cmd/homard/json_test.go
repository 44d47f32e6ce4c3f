package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/eval"
)

// jsonObjects maps a section of docs/JSON.md to the struct whose JSON it
// documents. Sections other helpers add (approval, run, …) are theirs to
// test; each section here must exist.
var jsonObjects = map[string]any{
	"memory":         memoryJSON{},
	"token":          tokenJSON{},
	"secret":         secretJSON{},
	"checkpoint":     checkpointJSON{},
	"session":        sessionJSON{},
	"audit":          app.AuditJSON{},
	"audit anchor":   anchorJSON{},
	"approval":       app.ApprovalJSON{},
	"grant":          app.GrantJSON{},
	"suggestion":     app.SuggestionJSON{},
	"channel":        app.ChannelStatus{},
	"pair":           pairJSON{},
	"task":           taskJSON{},
	"task run":       taskRunJSON{},
	"task plan":      taskPlanJSON{},
	"mcp":            mcpJSON{},
	"mcp tool":       mcpToolJSON{},
	"mcp login":      mcpLoginJSON{},
	"skill":          app.SkillJSON{},
	"eval":           eval.Report{},
	"eval result":    eval.Result{},
	"config migrate": migrateJSON{},
}

// docKeys reads docs/JSON.md: for each "## name" section, the keys of its
// table ("| `key` | type | meaning |").
func docKeys(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "JSON.md"))
	if err != nil {
		t.Fatalf("read docs/JSON.md: %v", err)
	}
	row := regexp.MustCompile("^\\| `([a-z0-9_]+)` \\|")
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(name)
			continue
		}
		if m := row.FindStringSubmatch(line); m != nil && section != "" {
			out[section] = append(out[section], m[1])
		}
	}
	return out
}

// structKeys lists the JSON keys of v's fields, in order.
func structKeys(v any) []string {
	var keys []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// TestJSONDocMatchesStructs keeps docs/JSON.md and the --json structs
// equal: same keys, same order, and every key snake_case and never
// omitted (no omitempty: a documented key is always there).
func TestJSONDocMatchesStructs(t *testing.T) {
	doc := docKeys(t)
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for name, v := range jsonObjects {
		t.Run(name, func(t *testing.T) {
			got, ok := doc[name]
			if !ok {
				t.Fatalf("docs/JSON.md has no \"## %s\" section with a key table; document %T there", name, v)
			}
			want := structKeys(v)
			if !slices.Equal(got, want) {
				t.Errorf("docs/JSON.md \"## %s\" documents keys %v;\n%T prints %v\nupdate the table or the struct so they agree", name, got, v, want)
			}
			rt := reflect.TypeOf(v)
			for i := range rt.NumField() {
				tag := rt.Field(i).Tag.Get("json")
				if strings.Contains(tag, "omitempty") {
					t.Errorf("%T.%s has omitempty: a documented key must always be present (use null for a time that did not happen)", v, rt.Field(i).Name)
				}
				if key, _, _ := strings.Cut(tag, ","); !snake.MatchString(key) {
					t.Errorf("%T.%s key %q is not snake_case", v, rt.Field(i).Name, key)
				}
			}
		})
	}
}

// homardIn runs the CLI in this process on home and returns stdout; it
// fails the test on a non-zero exit.
func homardIn(t *testing.T, home, stdin string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb); code != 0 {
		t.Fatalf("homard %s: exit %d\nstderr: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// decodeStrict decodes one JSON value into a new T, refusing a key T
// does not have, and checks every documented key is present in it.
func decodeStrict[T any](t *testing.T, what string, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: decode %s into %T: %v", what, raw, v, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, k := range structKeys(v) {
		if _, ok := keys[k]; !ok {
			t.Errorf("%s: key %q missing from %s", what, k, raw)
		}
	}
	return v
}

// decodeArray decodes a JSON array of T strictly, element by element.
func decodeArray[T any](t *testing.T, what, out string) []T {
	t.Helper()
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(out), &raws); err != nil {
		t.Fatalf("%s: stdout is not one JSON array: %v\n%s", what, err, out)
	}
	var list []T
	for _, r := range raws {
		list = append(list, decodeStrict[T](t, what, r))
	}
	return list
}

// TestListJSON runs each --json list against a real home with one item of
// each kind and decodes it strictly into the documented struct.
func TestListJSON(t *testing.T) {
	home := t.TempDir()
	useTestStore(t, home)
	homardIn(t, home, "", "init", "--mode", "autopilot")
	// Empty lists are [] (not null, not a sentence).
	for _, args := range [][]string{{"memory", "list"}, {"token", "list"}, {"secret", "list"}, {"checkpoint", "list"}, {"session", "list"}} {
		if out := homardIn(t, home, "", append(args, "--json")...); strings.TrimSpace(out) != "[]" {
			t.Errorf("homard %s --json on an empty home = %q; want []", strings.Join(args, " "), out)
		}
	}

	homardIn(t, home, "", "memory", "add", "Prefers oolong tea", "--kind", "preference", "--ttl-days", "3")
	tokenOutput := homardIn(t, home, "", "token", "create", "--name", "laptop")
	homardIn(t, home, "zebraSECRETvalue", "secret", "set", "weather", "--host", "api.weather.example", "--allow-http")
	if err := os.WriteFile(filepath.Join(home, "workspace", "doc.txt"), []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	homardIn(t, home, "", "tool", "call", "write_file", `{"path":"doc.txt","content":"two\n"}`, "--session", "writer")

	t.Run("memory", func(t *testing.T) {
		list := decodeArray[memoryJSON](t, "memory list", homardIn(t, home, "", "memory", "list", "--json"))
		if len(list) != 1 || list[0].Kind != "preference" || list[0].Text != "Prefers oolong tea" || list[0].Expires == nil ||
			list[0].Created.Location().String() != "UTC" || list[0].Expired {
			t.Errorf("memory list --json = %+v; want the one preference, expiring, times in UTC", list)
		}
		found := decodeArray[memoryJSON](t, "memory search", homardIn(t, home, "", "memory", "search", "oolong", "--json"))
		if len(found) != 1 || found[0].ID != list[0].ID {
			t.Errorf("memory search --json = %+v; want the unit %s", found, list[0].ID)
		}
	})
	t.Run("token", func(t *testing.T) {
		out := homardIn(t, home, "", "token", "list", "--json")
		list := decodeArray[tokenJSON](t, "token list", out)
		if len(list) != 1 || list[0].Name != "laptop" || list[0].Status != "valid" || list[0].LastUsedAt != nil || list[0].RevokedAt != nil {
			t.Errorf("token list --json = %+v; want laptop, valid, never used", list)
		}
		secret := strings.TrimSpace(tokenOutput)
		if secret == "" || strings.Contains(out, secret) || strings.Contains(out, secret[strings.LastIndex(secret, "_")+1:]) {
			t.Errorf("token list --json shows the token's secret:\n%s", out)
		}
		homardIn(t, home, "", "token", "revoke", list[0].ID)
		list = decodeArray[tokenJSON](t, "token list", homardIn(t, home, "", "token", "list", "--json"))
		if len(list) != 1 || list[0].Status != "revoked" || list[0].RevokedAt == nil {
			t.Errorf("after revoke: %+v; want status revoked with revoked_at", list)
		}
	})
	t.Run("secret", func(t *testing.T) {
		out := homardIn(t, home, "", "secret", "list", "--json")
		list := decodeArray[secretJSON](t, "secret list", out)
		if len(list) != 1 || list[0].Name != "weather" || !slices.Equal(list[0].Hosts, []string{"api.weather.example"}) ||
			!slices.Equal(list[0].Schemes, []string{"https", "http"}) {
			t.Errorf("secret list --json = %+v; want weather for api.weather.example over https and http", list)
		}
		if strings.Contains(out, "zebra") {
			t.Errorf("secret list --json shows the value:\n%s", out)
		}
	})
	t.Run("checkpoint", func(t *testing.T) {
		list := decodeArray[checkpointJSON](t, "checkpoint list", homardIn(t, home, "", "checkpoint", "list", "--json"))
		// A file tool's write is a change set through the gate: one
		// pinned checkpoint holding the old content (4 bytes).
		if len(list) != 1 || list[0].Kind != "changes" || list[0].Bytes != 4 || len(list[0].SHA256) != 64 || list[0].Paths != 1 {
			t.Errorf("checkpoint list --json = %+v; want one change-set checkpoint of 1 path, 4 bytes", list)
		}
	})
	t.Run("session", func(t *testing.T) {
		list := decodeArray[sessionJSON](t, "session list", homardIn(t, home, "", "session", "list", "--json"))
		// Replacing a file shows the model its old content: the session
		// has read the owner's data.
		if len(list) != 1 || list[0].ID != "writer" || list[0].PrivateSince == nil || list[0].PrivateSince.Location().String() != "UTC" {
			t.Errorf("session list --json = %+v; want the writer session, private since a UTC time", list)
		}
	})
	t.Run("audit", func(t *testing.T) {
		out := homardIn(t, home, "", "audit", "--json")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for i, l := range lines {
			rec := decodeStrict[app.AuditJSON](t, "audit line", []byte(l))
			if rec.Seq != int64(i+1) || rec.Time.Location().String() != "UTC" {
				t.Errorf("audit line %d: seq %d, time %v; want seq %d in UTC", i, rec.Seq, rec.Time, i+1)
			}
		}
		last := decodeStrict[app.AuditJSON](t, "audit line", []byte(lines[len(lines)-1]))
		if last.Tool != "write_file" || last.Decision != "ran" || last.Session != "writer" || last.Hash == "" {
			t.Errorf("last audit record = %+v; want write_file ran in session writer, with its hash", last)
		}
	})
}
