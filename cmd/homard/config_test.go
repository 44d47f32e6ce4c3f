package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// v0Home makes a home with `homard init` and puts in place of its config
// the file init wrote before config_version existed
// (internal/config/testdata/config-v0.toml), its workspace root moved to
// this home. The file's time is set an hour back so that a write shows.
// It returns the home and the config's bytes.
func v0Home(t *testing.T) (string, []byte) {
	t.Helper()
	home := t.TempDir()
	useTestStore(t, home)
	homardIn(t, home, "", "init")
	v0, err := os.ReadFile(filepath.Join("..", "..", "internal", "config", "testdata", "config-v0.toml"))
	if err != nil {
		t.Fatal(err)
	}
	v0 = bytes.ReplaceAll(v0, []byte("/tmp/cfgv0/workspace"), []byte(filepath.Join(home, "workspace")))
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, v0, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return home, v0
}

// configFiles is the config file and its backups in home: name → mode,
// time and bytes, to tell whether anything was written.
func configFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(home, "config.toml*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		fi, err := os.Stat(n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = fi.Mode().String() + " " + fi.ModTime().String() + "\n" + string(b)
	}
	return out
}

// A config from before config_version loads; --dry-run and doctor show
// the migration and write nothing; the first command that opens the home
// migrates it once, after a byte-identical backup; migrate then has
// nothing to do.
func TestConfigMigrateVersion0(t *testing.T) {
	home, v0 := v0Home(t)
	path := filepath.Join(home, "config.toml")
	before := configFiles(t, home)

	out := homardIn(t, home, "", "config", "migrate", "--dry-run")
	for _, want := range []string{path + ": config_version 0 → 1", "0 → 1: adds config_version = 1", "\n owner = \"owner\"\n+config_version = 1\n", "dry run: nothing was written", path + ".bak-v0"} {
		if !strings.Contains(out, want) {
			t.Errorf("config migrate --dry-run printed\n%s\nwant it to hold %q", out, want)
		}
	}
	js := decodeStrict[migrateJSON](t, "config migrate --dry-run --json", []byte(homardIn(t, home, "", "config", "migrate", "--dry-run", "--json")))
	if js.From != 0 || js.To != 1 || js.Written || js.Backup != "" || len(js.Steps) != 1 || !strings.Contains(js.Diff, "+config_version = 1\n") {
		t.Errorf("config migrate --dry-run --json = %+v", js)
	}
	code, doctorOut, _ := homardExit(home, "", "doctor", "--offline")
	if !strings.Contains(doctorOut, "--   config     would migrate "+path+": config_version 0 → 1") {
		t.Errorf("doctor (exit %d) does not report the migration:\n%s", code, doctorOut)
	}
	if got := configFiles(t, home); !reflect.DeepEqual(got, before) {
		t.Fatalf("--dry-run or doctor wrote: %v; want %v", keysOf(got), keysOf(before))
	}

	// A command that opens the home migrates, once.
	code, _, stderr := homardExit(home, "", "tool", "list")
	if code != 0 || !strings.Contains(stderr, "homard: migrated "+path+": config_version 0 → 1 (adds config_version = 1; no setting changes meaning); the file as it was is in "+path+".bak-v0") {
		t.Fatalf("tool list: exit %d, stderr %q; want the migration's note", code, stderr)
	}
	backup, err := os.ReadFile(path + ".bak-v0")
	if err != nil || !bytes.Equal(backup, v0) {
		t.Fatalf("backup (%v) is not byte-identical to the original", err)
	}
	for _, p := range []string{path, path + ".bak-v0"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v (%v); want mode 0600", p, fi.Mode(), err)
		}
	}
	now, _ := os.ReadFile(path)
	if want := bytes.Replace(v0, []byte("owner = \"owner\"\n"), []byte("owner = \"owner\"\nconfig_version = 1\n"), 1); !bytes.Equal(now, want) {
		t.Errorf("migrated config is not the original plus config_version = 1:\n%s", now)
	}
	migrated := configFiles(t, home)
	if code, _, stderr := homardExit(home, "", "tool", "list"); code != 0 || strings.Contains(stderr, "migrat") {
		t.Errorf("second tool list: exit %d, stderr %q; want no note", code, stderr)
	}
	if out := homardIn(t, home, "", "config", "migrate"); !strings.Contains(out, "config_version 1, this homard's: nothing to migrate") {
		t.Errorf("config migrate after the migration printed %q", out)
	}
	if got := configFiles(t, home); !reflect.DeepEqual(got, migrated) {
		t.Error("a current config was written again")
	}
}

func TestConfigMigrateWrites(t *testing.T) {
	home, v0 := v0Home(t)
	path := filepath.Join(home, "config.toml")
	js := decodeStrict[migrateJSON](t, "config migrate --json", []byte(homardIn(t, home, "", "config", "migrate", "--json")))
	if !js.Written || js.Backup != path+".bak-v0" || js.From != 0 {
		t.Errorf("config migrate --json = %+v; want written, backup %s.bak-v0", js, path)
	}
	if b, err := os.ReadFile(js.Backup); err != nil || !bytes.Equal(b, v0) {
		t.Errorf("backup (%v) is not byte-identical to the original", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte("\nconfig_version = 1\n")) {
		t.Error("config.toml was not migrated")
	}
}

// The twin: a home init writes now is current: no note, no backup.
func TestConfigCurrentNoMigration(t *testing.T) {
	home := t.TempDir()
	useTestStore(t, home)
	homardIn(t, home, "", "init")
	before := configFiles(t, home)
	if len(before) != 1 {
		t.Fatalf("init left %v; want config.toml alone", keysOf(before))
	}
	if code, _, stderr := homardExit(home, "", "tool", "list"); code != 0 || stderr != "" {
		t.Errorf("tool list on a new home: exit %d, stderr %q; want nothing", code, stderr)
	}
	if _, out, _ := homardExit(home, "", "doctor", "--offline"); strings.Contains(out, "migrate") {
		t.Errorf("doctor on a new home speaks of a migration:\n%s", out)
	}
	if got := configFiles(t, home); !reflect.DeepEqual(got, before) {
		t.Errorf("a current config was written: %v", keysOf(got))
	}
}

func TestConfigNewerVersionRefused(t *testing.T) {
	home := t.TempDir()
	useTestStore(t, home)
	homardIn(t, home, "", "init")
	path := filepath.Join(home, "config.toml")
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte("config_version = 1"), []byte("config_version = 7"), 1)
	if err := os.WriteFile(path, append(b, "\n[from_the_future]\nx = 1\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	before := configFiles(t, home)
	for _, args := range [][]string{{"tool", "list"}, {"config", "migrate"}, {"config", "migrate", "--dry-run"}} {
		code, _, stderr := homardExit(home, "", args...)
		if code != exitFailure || !strings.Contains(stderr, "config_version = 7") || !strings.Contains(stderr, "upgrade homard") {
			t.Errorf("homard %s: exit %d, stderr %q; want 1 and upgrade homard", strings.Join(args, " "), code, stderr)
		}
	}
	if got := configFiles(t, home); !reflect.DeepEqual(got, before) {
		t.Error("a newer config was written")
	}
}

func TestConfigUnknownKeySuggests(t *testing.T) {
	home := t.TempDir()
	useTestStore(t, home)
	homardIn(t, home, "", "init")
	path := filepath.Join(home, "config.toml")
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte("\nmode = \"smart\""), []byte("\nmdoe = \"smart\""), 1)
	b = bytes.Replace(b, []byte("\n[sandbox]"), []byte("\n[sandbxo]"), 1)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	lineOf := func(s string) string {
		i := bytes.Index(b, []byte(s))
		return path + ":" + strconv.Itoa(bytes.Count(b[:i], []byte("\n"))+2) + ":1: "
	}
	code, _, stderr := homardExit(home, "", "tool", "list")
	for _, want := range []string{
		lineOf("\nmdoe") + "unknown key permissions.mdoe: did you mean mode? allowed in [permissions]: mode,",
		lineOf("\n[sandbxo]") + "unknown key sandbxo: did you mean [sandbox]? allowed at the top level: config_version, owner,",
	} {
		if code != exitFailure || !strings.Contains(stderr, want) {
			t.Errorf("tool list: exit %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// setup edits an older config as migrated and keeps the backup first.
func TestConfigSetupMigrates(t *testing.T) {
	home, v0 := v0Home(t)
	path := filepath.Join(home, "config.toml")
	out := homardIn(t, home, "", "setup", "--non-interactive", "--provider", "vllm", "--model", "Qwen/Qwen3-8B", "--skip-test")
	if !strings.Contains(out, "migrated  "+path+": config_version 0 → 1") || !strings.Contains(out, path+".bak-v0") {
		t.Errorf("setup printed\n%s\nwant the migration's note", out)
	}
	if b, err := os.ReadFile(path + ".bak-v0"); err != nil || !bytes.Equal(b, v0) {
		t.Errorf("backup (%v) is not byte-identical to the original", err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{"\nconfig_version = 1\n", "provider = \"vllm\"", "# The owner's id."} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("config after setup lacks %q", want)
		}
	}
}
