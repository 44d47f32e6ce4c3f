package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// testdata/config-v0.toml is the file `homard init --home /tmp/cfgv0`
// wrote at commit c0e59c6, the last before config_version: a real
// version-0 config, kept byte for byte.
func readV0(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "config-v0.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("config_version")) {
		t.Fatal("testdata/config-v0.toml holds config_version; it must stay as homard wrote it before the key existed")
	}
	return data
}

// writeFileT writes data to dir/config.toml with mode 0600.
func writeFileT(t *testing.T, dir string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshot is a folder's file names and contents, to tell that nothing
// was written.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fi.ModTime().String() + "\n" + string(b)
	}
	return out
}

func TestVersion0LoadsAndMigrates(t *testing.T) {
	v0 := readV0(t)
	dir := t.TempDir()
	path := writeFileT(t, dir, v0)
	before := snapshot(t, dir)

	// Load reads it as it always did and writes nothing.
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load(version 0): %v", err)
	}
	if got := snapshot(t, dir); !reflect.DeepEqual(got, before) {
		t.Fatalf("Load wrote into the folder: %v; want %v", keys(got), keys(before))
	}

	m, err := ReadMigration(path)
	if err != nil {
		t.Fatalf("ReadMigration: %v", err)
	}
	if !m.Needed() || m.From != 0 || len(m.Steps) != 1 || m.Steps[0].From != 0 {
		t.Fatalf("ReadMigration = from %d, steps %v, needed %v; want from 0, one step 0 → 1", m.From, m.Steps, m.Needed())
	}
	// The step adds one line and changes nothing else: comments, order
	// and blank lines stay.
	if got := strings.Replace(string(m.After), "config_version = 1\n", "", 1); got != string(v0) {
		t.Errorf("migrated file minus config_version differs from the original:\n%s", m.After)
	}
	if !strings.Contains(string(m.After), "owner = \"owner\"\nconfig_version = 1\n") {
		t.Errorf("config_version is not after the top-level keys:\n%.400s", m.After)
	}
	if got := snapshot(t, dir); !reflect.DeepEqual(got, before) {
		t.Fatal("ReadMigration wrote into the folder")
	}

	backup, err := m.Apply()
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if backup != path+".bak-v0" {
		t.Errorf("backup = %s; want %s.bak-v0", backup, path)
	}
	b, err := os.ReadFile(backup)
	if err != nil || !bytes.Equal(b, v0) {
		t.Fatalf("backup (%v) is not byte-identical to the original", err)
	}
	for _, p := range []string{path, backup} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v); want 0600", p, fi.Mode().Perm(), err)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(after, m.After) {
		t.Fatalf("config after Apply (%v) is not the migrated text", err)
	}
	again, err := Load(path)
	if err != nil {
		t.Fatalf("Load(migrated): %v", err)
	}
	if !reflect.DeepEqual(again, c) {
		t.Errorf("the migrated file loads differently:\nbefore %+v\nafter  %+v", c, again)
	}

	// Current now: nothing to do, and Apply does nothing.
	m2, err := ReadMigration(path)
	if err != nil || m2.Needed() {
		t.Fatalf("ReadMigration after Apply: needed %v, %v; want nothing to do", m2 != nil && m2.Needed(), err)
	}
	snap := snapshot(t, dir)
	if b, err := m2.Apply(); err != nil || b != "" {
		t.Errorf("Apply of a current file = %q, %v; want nothing", b, err)
	}
	if !reflect.DeepEqual(snapshot(t, dir), snap) {
		t.Error("Apply of a current file wrote")
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The twin: a file homard writes now is current, loads with no migration
// and leaves no backup.
func TestCurrentVersionNeedsNothing(t *testing.T) {
	dir := t.TempDir()
	data, err := Render(Default(Paths{WorkspaceDir: "/ws"}))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("\nconfig_version = 1\n")) {
		t.Fatalf("Render writes no config_version = 1:\n%.600s", data)
	}
	path := writeFileT(t, dir, data)
	before := snapshot(t, dir)
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMigration(path)
	if err != nil || m.Needed() || len(m.Steps) != 0 || !bytes.Equal(m.After, data) {
		t.Fatalf("ReadMigration(current) = %+v, %v; want nothing to do", m, err)
	}
	if _, err := m.Apply(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snapshot(t, dir), before) {
		t.Error("a current config was rewritten or backed up")
	}
}

func TestVersionRefused(t *testing.T) {
	tests := []struct {
		name, line string
		newer      bool
		want       []string
	}{
		{"newer", "config_version = 2", true, []string{"config_version = 2", "upgrade homard", "up to 1"}},
		{"far newer", "config_version = 9223372036854775807", true, []string{"upgrade homard"}},
		{"negative", "config_version = -1", false, []string{"config_version = -1", "want 1"}},
		{"string", `config_version = "1"`, false, []string{"config.toml:1:", "config_version"}},
		{"float", "config_version = 1.0", false, []string{"config.toml:1:", "config_version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A newer file may hold keys this homard does not know: the
			// version is what it is told about, not the keys.
			data := tt.line + "\n" + baseConfig + "\n[future]\nx = 1\n"
			if !tt.newer {
				data = tt.line + "\n" + baseConfig
			}
			dir := t.TempDir()
			path := writeFileT(t, dir, []byte(data))
			before := snapshot(t, dir)
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%s) accepted", tt.line)
			}
			if errors.Is(err, ErrNewerVersion) != tt.newer {
				t.Errorf("Load(%s) = %v; ErrNewerVersion %v, want %v", tt.line, err, !tt.newer, tt.newer)
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%s) = %q; want it to say %q", tt.line, err, w)
				}
			}
			if strings.Contains(err.Error(), "unknown key") {
				t.Errorf("Load(%s) = %q; want the version refused, not its keys", tt.line, err)
			}
			if _, err := ReadMigration(path); err == nil {
				t.Errorf("ReadMigration(%s) accepted", tt.line)
			}
			if !reflect.DeepEqual(snapshot(t, dir), before) {
				t.Error("a refused file was rewritten or backed up")
			}
		})
	}
}

// An error in an older file names the line of the file on disk, not of
// the migrated text, which has one line more.
func TestVersion0ErrorsNameLinesOnDisk(t *testing.T) {
	data := strings.Replace(string(readV0(t)), `mode = "smart"`, `mode = "fast"`, 1)
	data = strings.Replace(data, "[agent]\n", "[agent]\nmax_call = 3\n", 1)
	path := writeFileT(t, t.TempDir(), []byte(data))
	line := 1 + strings.Count(data[:strings.Index(data, "max_call")], "\n")
	_, err := Load(path)
	if err == nil {
		t.Fatal("Load accepted an unknown key")
	}
	if want := path + ":" + strconv.Itoa(line) + ":1: unknown key agent.max_call: did you mean max_calls?"; !strings.Contains(err.Error(), want) {
		t.Errorf("Load = %q; want %q", err, want)
	}
}

func TestMigrationBackupNeverReplaced(t *testing.T) {
	dir := t.TempDir()
	path := writeFileT(t, dir, []byte(baseConfig))
	if err := os.WriteFile(path+".bak-v0", []byte("an older backup\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	m, err := ReadMigration(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Fatalf("Apply over a different backup = %v; want it refused", err)
	}
	if !reflect.DeepEqual(snapshot(t, dir), before) {
		t.Error("a refused migration wrote")
	}
	// The same bytes there already (an interrupted migration): kept.
	if err := os.WriteFile(path+".bak-v0", []byte(baseConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(); err != nil {
		t.Fatalf("Apply beside an identical backup: %v", err)
	}
}

func TestMigrationFileChangedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	path := writeFileT(t, dir, []byte(baseConfig))
	m, err := ReadMigration(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another homard migrated it first: done, nothing more written.
	other, err := ReadMigration(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Apply(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(); err != nil {
		t.Errorf("Apply after another migrated the file: %v; want done", err)
	}
	// The owner edited it: nothing is written.
	edited := strings.Replace(baseConfig, `"smart"`, `"safe"`, 1)
	writeFileT(t, dir, []byte(edited))
	m, err = PlanMigration(path, []byte(baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("Apply over an edited file = %v; want it refused", err)
	}
	if b, _ := os.ReadFile(path); string(b) != edited {
		t.Error("Apply replaced a file edited since it was read")
	}
}

func TestMigrationKeepsLayout(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"crlf", "owner = \"o\"\r\n[model]\r\nprovider = \"openai\"\r\n", "owner = \"o\"\r\nconfig_version = 1\r\n[model]\r\nprovider = \"openai\"\r\n"},
		{"no top-level key", "# mine\n[model]\nprovider = \"openai\"\n", "config_version = 1\n# mine\n[model]\nprovider = \"openai\"\n"},
		{"explicit 0", "config_version = 0 # old\n[model]\n", "config_version = 1 # old\n[model]\n"},
		{"no final newline", "owner = \"o\"", "owner = \"o\"\nconfig_version = 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := PlanMigration("config.toml", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(m.After) != tt.want {
				t.Errorf("migrate(%q) = %q; want %q", tt.in, m.After, tt.want)
			}
		})
	}
}

func TestMigrationThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "homard.toml")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte(baseConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	m, err := ReadMigration(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced (%v)", err)
	}
	if b, _ := os.ReadFile(real); !bytes.HasPrefix(b, []byte("owner = \"owner\"\nconfig_version = 1\n")) {
		t.Errorf("the link's target was not migrated:\n%.200s", b)
	}
}

// FuzzMigrate: a migration never panics, and a file that loads migrates
// to a current file that loads to the same Config (step 0 → 1 changes no
// meaning) and needs no further migration.
func FuzzMigrate(f *testing.F) {
	f.Add(baseConfig)
	f.Add("config_version = 0\n" + baseConfig)
	f.Add("owner = \"o\"\r\n[model]\r\nprovider = \"openai\"\r\n")
	f.Add("[model]\nprovider = 'anthropic'\n[workspace]\nroots = [{name = \"m\", path = \"/w\"}]\n")
	f.Fuzz(func(t *testing.T, content string) {
		m, err := PlanMigration("config.toml", []byte(content))
		if err != nil {
			return
		}
		c, err := Check("/c/config.toml", []byte(content))
		if err != nil {
			return
		}
		again, err := Check("/c/config.toml", m.After)
		if err != nil {
			t.Fatalf("the migrated file does not load: %v\nfrom:\n%s\nmigrated:\n%s", err, content, m.After)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("the migrated file loads differently\nfrom:\n%s\nmigrated:\n%s", content, m.After)
		}
		m2, err := PlanMigration("config.toml", m.After)
		if err != nil || m2.Needed() || !bytes.Equal(m2.After, m.After) {
			t.Fatalf("the migrated file migrates again (%v):\n%s", err, m.After)
		}
	})
}

func TestMigrationDiff(t *testing.T) {
	m, err := PlanMigration("config.toml", readV0(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `@@ -4,4 +4,5 @@
 # The owner's id. Approvals and grants are bound to it.
 owner = "owner"
+config_version = 1
 
 [model]
`
	if got := m.Diff(); got != want {
		t.Errorf("Diff() =\n%s\nwant\n%s", got, want)
	}
	current, err := PlanMigration("config.toml", m.After)
	if err != nil || current.Diff() != "" {
		t.Errorf("Diff() of a current file = %q, %v; want \"\"", current.Diff(), err)
	}
}

func TestDiffHunks(t *testing.T) {
	lines := func(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }
	tests := []struct {
		name          string
		before, after []byte
		want          string
	}{
		{"two far apart", lines("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"), lines("A", "b", "c", "d", "e", "f", "g", "h", "i", "J"),
			"@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n@@ -8,3 +8,3 @@\n h\n i\n-j\n+J\n"},
		{"two close", lines("a", "b", "c", "d", "e", "f"), lines("a", "B", "c", "d", "E", "f"),
			"@@ -1,6 +1,6 @@\n a\n-b\n+B\n c\n d\n-e\n+E\n f\n"},
		{"crlf", []byte("a\r\nb\r\n"), []byte("a\r\nx\r\nb\r\n"), "@@ -1,2 +1,3 @@\n a\n+x\n b\n"},
		{"removed", lines("a", "b"), lines("a"), "@@ -1,2 +1,1 @@\n a\n-b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Migration{Before: tt.before, After: tt.after}
			if got := m.Diff(); got != tt.want {
				t.Errorf("Diff(%q → %q) =\n%s\nwant\n%s", tt.before, tt.after, got, tt.want)
			}
		})
	}
}
