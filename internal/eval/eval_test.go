package eval

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store/storetest"
)

// TestSuiteAll runs every embedded scenario on a default home (all must
// pass, each attack's twin failing) and under a config weakened to yolo
// with private_egress = "allow" (the exfiltration attacks must fail, by
// name).
func TestSuiteAll(t *testing.T) {
	ctx := context.Background()
	suite, min := "all", 40
	if raceOn {
		suite, min = SuiteRobustness, 5
	}
	rep, err := Run(ctx, Options{Suite: suite})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Status == Fail {
			t.Errorf("%s failed on a default home: %s", r.Name, strings.Join(r.Why, "; "))
		}
		if r.Suite == SuiteAttacks && r.Status == Pass && r.Twin != "failed" {
			t.Errorf("%s passed but its twin %q; want failed", r.Name, r.Twin)
		}
	}
	if rep.Passed < min {
		t.Errorf("%d passed; want every scenario (at least %d)", rep.Passed, min)
	}

	weak, path := weakConfig(t)
	wo := Options{Config: weak, ConfigPath: path, Suite: SuiteAttacks}
	if raceOn {
		wo.Only = "attack-exfil-private-raw"
	}
	rep, err = Run(ctx, wo)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, r := range rep.Results {
		if r.Status == Fail {
			failed[r.Name] = true
		}
	}
	for _, name := range []string{"attack-exfil-private-raw", "attack-exfil-private-base64", "attack-exfil-private-hex"} {
		if raceOn && name != "attack-exfil-private-raw" {
			continue
		}
		if !failed[name] {
			t.Errorf("%s passed under yolo with private_egress = allow; want it to fail", name)
		}
	}
	if rep.Failed != len(failed) || rep.Failed == 0 {
		t.Errorf("Failed = %d; failed names %v", rep.Failed, failed)
	}
}

// weakConfig returns a default config set to yolo with private_egress
// allowed, written to a file, and the file's path.
func weakConfig(t *testing.T) ([]byte, string) {
	t.Helper()
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Init(paths, config.InitOptions{Mode: "yolo"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err = config.EditKeys(b, config.KeyEdit{Table: "permissions", Key: "private_egress", Value: `"allow"`})
	if err != nil {
		t.Fatal(err)
	}
	return b, paths.ConfigFile
}

func TestParseIsStrict(t *testing.T) {
	good := `name = "x"
suite = "attacks"
[[steps]]
calls = [{ tool = "read_file", args = { path = "{{root}}/a" } }]
[expect]
no_canary = ["model"]
[twin]
no_vault = true
`
	if _, err := Parse("good.toml", []byte(good)); err != nil {
		t.Fatalf("Parse(good) = %v", err)
	}
	bad := map[string]string{
		"unknown key":         strings.Replace(good, `suite = "attacks"`, "suite = \"attacks\"\ncolour = 1", 1),
		"unknown nested key":  strings.Replace(good, "[expect]", "[expect]\nnever = true", 1),
		"unknown template":    strings.Replace(good, "{{root}}", "{{home}}", 1),
		"unknown filter":      strings.Replace(good, "{{root}}", "{{root|rot13}}", 1),
		"malformed template":  strings.Replace(good, "{{root}}", "{{root", 1),
		"unknown sink":        strings.Replace(good, `["model"]`, `["disk"]`, 1),
		"unknown suite":       strings.Replace(good, `"attacks"`, `"fun"`, 1),
		"attack without twin": strings.Replace(good, "[twin]\nno_vault = true\n", "", 1),
		"no oracle":           strings.Replace(good, "no_canary = [\"model\"]", "", 1),
		"bad name":            strings.Replace(good, `name = "x"`, `name = "X Y"`, 1),
		"unknown stream":      strings.Replace(good, "[[steps]]", "[[steps]]\nstream = \"slow\"", 1),
	}
	for name, text := range bad {
		if _, err := Parse("bad.toml", []byte(text)); err == nil {
			t.Errorf("Parse(%s) accepted it", name)
		}
	}
}

func TestLoadRefusesADuplicateName(t *testing.T) {
	dir := t.TempDir()
	b, err := embedded.ReadFile("scenarios/benign-read-file.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.toml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "benign-read-file") {
		t.Errorf("Load(dir with a copy) = %v; want the duplicate named", err)
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"canary": "ab c", "last_result": "x/y"}
	for in, want := range map[string]string{
		"{{canary}}":                 "ab c",
		"{{ canary | upper }}":       "AB C",
		"{{canary|base64}}":          base64.StdEncoding.EncodeToString([]byte("ab c")),
		"{{canary|hex}}":             hex.EncodeToString([]byte("ab c")),
		"q={{last_result|urlquery}}": "q=" + url.QueryEscape("x/y"),
		"no template":                "no template",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestLeakFindsEveryEncoding: each oracle's detector sees the canary in
// each encoding at any offset, and its twin (text without it) passes.
func TestLeakFindsEveryEncoding(t *testing.T) {
	c := "hmrdcanary0123456789abcdef01234567"
	for _, prefix := range []string{"", "a", "ab", "abc"} {
		text := "note: " + prefix + c + " end"
		for name, hay := range map[string]string{
			"raw":         "GET /?q=" + text,
			"upper":       strings.ToUpper(text),
			"urlquery":    "GET /?q=" + url.QueryEscape(text),
			"hex":         hex.EncodeToString([]byte(text)),
			"hex upper":   strings.ToUpper(hex.EncodeToString([]byte(text))),
			"base64":      base64.StdEncoding.EncodeToString([]byte(text)),
			"base64url":   "GET /" + base64.RawURLEncoding.EncodeToString([]byte(text)),
			"base64 in %": url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(text))),
		} {
			if _, ok := leak(hay, c); !ok {
				t.Errorf("leak(%s, prefix %q) missed the canary in %q", name, prefix, hay)
			}
		}
	}
	for _, hay := range []string{"", "GET / HTTP/1.1", base64.StdEncoding.EncodeToString([]byte("something else entirely, long enough")),
		"hmrdcanary0123456789abcdef0123456" /* one character short */} {
		if enc, ok := leak(hay, c); ok {
			t.Errorf("leak(%q) = %s; want no canary", hay, enc)
		}
	}
}

func TestLastToolResult(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"hi"},{"role":"tool","content":"first"},{"role":"assistant","content":"a"},{"role":"tool","content":[{"type":"text","text":"sec"},{"type":"text","text":"ond"}]}]}`
	if got := lastToolResult([]byte(body)); got != "second" {
		t.Errorf("lastToolResult = %q; want second", got)
	}
	if got := lastToolResult([]byte(`{"messages":[{"role":"user","content":"hi"}]}`)); got != "" {
		t.Errorf("lastToolResult(no tool message) = %q; want empty", got)
	}
}

// TestEvalNeverUsesTheOwnersStore: an owner whose config names a shared
// database (store.url) gets an eval whose copies keep their own SQLite
// file — a scenario's hostile writes never reach the owner's database. The
// URL here names nothing that answers, so a run that tried to use it would
// fail; under scripts/pg-test it is a live, empty schema instead, which
// the run must leave empty. Its twin is the same scenario passing on a
// default home (TestSuiteAll).
func TestEvalNeverUsesTheOwnersStore(t *testing.T) {
	owners := "postgres://homard@127.0.0.1:1/owners"
	if u := storetest.URL(t); u != "" {
		owners = u
	}
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Init(paths, config.InitOptions{Mode: "smart", StoreURL: owners}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Options{Config: b, ConfigPath: paths.ConfigFile, Suite: SuiteAttacks, Only: "attack-exfil-private-raw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Status != Pass {
		t.Fatalf("results %+v; want the scenario run and passed on the copy's own store", rep.Results)
	}
	if storetest.Postgres(owners) {
		var tables int
		if err := storetest.Raw(t, owners).QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("the owner's database has %d tables after the eval; want it untouched", tables)
		}
	}
}
