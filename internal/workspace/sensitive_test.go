package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSensitive(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{".env", true},
		{".env.local", true},
		{"app/.env.production", true},
		{".ENV", true}, // case-insensitive file systems
		{"id_rsa", true},
		{"keys/id_ed25519", true},
		{"id_ed25519_sk", true},
		{"id_rsa.old", true},
		{"id_work", true},
		{"server.pem", true},
		{"tls/server.KEY", true},
		{"cert.p12", true},
		{"cert.pfx", true},
		{".ssh", true},
		{"home/.ssh/config", true},
		{".aws/credentials", true},
		{".gnupg/private-keys-v1.d/x.key", true},
		{".netrc", true},
		{".npmrc", true},
		{".pypirc", true},
		{".git-credentials", true},
		{".docker/config.json", true},
		{"x/.kube/config", true},
		{"login.keychain-db", true},
		{"backup/Default/Login Data", true},
		{"backup/Default/Cookies", true},
		{"backup/Profile 2/Network/Cookies", true},
		{".mozilla/firefox/abc.default/cookies.sqlite", true},
		{"profile.default-release/logins.json", true},

		{".", false},
		{"notes.txt", false},
		{".envrc", false}, // a file host tools run, not a secret
		{".environment.md", false},
		{"env/.gitignore", false},
		{"id_rsa.pub", false},
		{".ssh.md", false},
		{"id_test.go", false},
		{"id_generator/main.go", false},
		{"src/keyboard.go", false},
		{"cookies/recipe.md", false},
		{".docker/daemon.json", false},
		{"config.json", false},
		{"kube/config", false},
	} {
		if got := Sensitive(c.rel); got != c.want {
			t.Errorf("Sensitive(%q) = %v; want %v", c.rel, got, c.want)
		}
	}
}

// sensitiveFixture has sensitive files, symlinks to them, the owner's own
// pattern "*.secret" and two allowed paths.
func sensitiveFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, func(o *Options) {
		o.Sensitive = []string{"*.secret"}
		o.AllowSensitive = []string{"fixtures/.env", "docs:keys"}
	})
	write(t, f.root, ".env", "TOKEN=canary")
	write(t, f.root, "notes.txt", "ordinary notes")
	write(t, f.root, ".envrc", "use nix")
	write(t, f.root, "id_rsa.pub", "ssh-ed25519 AAAA")
	write(t, f.root, "sub/.ssh/config", "Host x")
	write(t, f.root, "sub/.ssh/id_ed25519", "PRIVATE")
	write(t, f.root, "db.secret", "owner pattern")
	write(t, f.root, "fixtures/.env", "TEST=1")
	write(t, f.docs, "keys/test.pem", "test key")
	symlink(t, ".env", filepath.Join(f.root, "innocent.txt"))
	symlink(t, "sub/.ssh", filepath.Join(f.root, "sshdir"))
	return f
}

func TestSensitiveFilesRefused(t *testing.T) {
	f := sensitiveFixture(t)
	refused := []string{".env", ".ENV", "innocent.txt", "sub/.ssh/config", "sub/.ssh/id_ed25519", "sshdir/config", "db.secret"}
	for _, rel := range refused {
		p := Path{Root: "main", Rel: rel, inDefault: true}
		if err := f.ws.CheckRead(p); !errors.Is(err, ErrSensitive) {
			t.Errorf("CheckRead(%s) = %v; want ErrSensitive", rel, err)
		}
		if rel == ".ENV" {
			continue // no such file on a case-sensitive file system
		}
		data, err := f.ws.ReadFile(p)
		if !errors.Is(err, ErrSensitive) || len(data) > 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrSensitive", rel, data, err)
		}
		if err != nil && !strings.Contains(err.Error(), "allow_sensitive") {
			t.Errorf("ReadFile(%s) error %q does not say how the owner can allow the file", rel, err)
		}
		// A symlink is never written through, whatever it points to.
		if _, err := f.ws.writeFile(p, []byte("x")); !errors.Is(err, ErrSensitive) && !(rel == "innocent.txt" && errors.Is(err, ErrSymlink)) {
			t.Errorf("WriteFile(%s) = %v; want ErrSensitive", rel, err)
		}
	}
	if got := readString(t, filepath.Join(f.root, ".env")); got != "TOKEN=canary" {
		t.Errorf(".env now holds %q; a refused write changed it", got)
	}
	// A new file under a symlinked sensitive folder, and under a folder
	// that only a symlink makes sensitive.
	for _, rel := range []string{"sshdir/new", "sub/.ssh/new", ".env.local"} {
		p := Path{Root: "main", Rel: rel, inDefault: true}
		if err := f.ws.CheckWrite(p); !errors.Is(err, ErrSensitive) {
			t.Errorf("CheckWrite(%s) = %v; want ErrSensitive", rel, err)
		}
		if _, err := f.ws.writeFile(p, []byte("x")); !errors.Is(err, ErrSensitive) {
			t.Errorf("WriteFile(%s) = %v; want ErrSensitive", rel, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.root, "sub/.ssh/new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sub/.ssh/new exists after refused writes (%v)", err)
	}
	for _, rel := range []string{"sub/.ssh", "sshdir"} {
		if _, err := f.ws.ReadDir(Path{Root: "main", Rel: rel, inDefault: true}); !errors.Is(err, ErrSensitive) {
			t.Errorf("ReadDir(%s) = %v; want ErrSensitive", rel, err)
		}
	}
	fsys, err := f.ws.FS("main")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(fsys, "innocent.txt"); !errors.Is(err, ErrSensitive) {
		t.Errorf("fs.ReadFile(innocent.txt) = %q, %v; want ErrSensitive", data, err)
	}
	var walked []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if _, rerr := fs.ReadFile(fsys, p); rerr == nil {
				walked = append(walked, p)
			}
		}
		return nil
	})
	if want := []string{".envrc", "fixtures/.env", "id_rsa.pub", "notes.txt"}; !slices.Equal(walked, want) {
		t.Errorf("files readable in a walk: %q; want %q", walked, want)
	}
}

// TestSensitiveTwins: what sits next to a sensitive file, and what the
// owner allowed, still works.
func TestSensitiveTwins(t *testing.T) {
	f := sensitiveFixture(t)
	for _, c := range []struct{ root, rel, want string }{
		{"main", "notes.txt", "ordinary notes"},
		{"main", ".envrc", "use nix"},
		{"main", "id_rsa.pub", "ssh-ed25519 AAAA"},
		{"main", "fixtures/.env", "TEST=1"},
		{"docs", "keys/test.pem", "test key"},
	} {
		p, err := f.ws.PathIn(c.root, c.rel)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.ws.CheckRead(p); err != nil {
			t.Errorf("CheckRead(%s) = %v", p, err)
		}
		if got, err := f.ws.ReadFile(p); err != nil || string(got) != c.want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", p, got, err, c.want)
		}
	}
	if _, err := f.ws.writeFile(Path{Root: "main", Rel: "sub/notes.md", inDefault: true}, []byte("next to .ssh")); err != nil {
		t.Errorf("WriteFile(sub/notes.md) = %v", err)
	}
	if _, err := f.ws.writeFile(Path{Root: "main", Rel: "fixtures/.env", inDefault: true}, []byte("TEST=2")); err != nil {
		t.Errorf("WriteFile(fixtures/.env) = %v; the owner allowed it", err)
	}
	entries, err := f.ws.ReadDir(Path{Root: "main", Rel: ".", inDefault: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, ".env") || !slices.Contains(names, "notes.txt") {
		t.Errorf("ReadDir(.) = %q; want sensitive entries listed (callers mark them) beside the rest", names)
	}
	for _, c := range []struct {
		root, rel string
		want      bool
	}{
		{"main", ".env", true},
		{"main", "db.secret", true},
		{"main", "fixtures/.env", false},
		{"main", "fixtures/.ENV", true}, // allowances are exact
		{"docs", "keys/test.pem", false},
		{"main", "keys/test.pem", true}, // allowed in docs only
		{"nope", ".env", true},
	} {
		if got := f.ws.Sensitive(c.root, c.rel); got != c.want {
			t.Errorf("Sensitive(%s, %s) = %v; want %v", c.root, c.rel, got, c.want)
		}
	}
}

func TestSensitiveOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{Sensitive: []string{"/abs"}},
		{Sensitive: []string{"a/../b"}},
		{Sensitive: []string{"[x"}},
		{AllowSensitive: []string{"nope:.env"}},
		{AllowSensitive: []string{"../.env"}},
		{AllowSensitive: []string{"."}},
	} {
		dir := t.TempDir()
		o.Roots = []Root{{Name: "main", Path: dir}}
		o.CheckpointDir = filepath.Join(t.TempDir(), "cp")
		if ws, err := Open(o); err == nil {
			ws.Close()
			t.Errorf("Open(Sensitive %q, AllowSensitive %q) succeeded; want an error", o.Sensitive, o.AllowSensitive)
		}
	}
}
