//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// hashTree returns one line per entry under dir (path, mode, content hash
// or link target), sorted: equal strings mean an unchanged tree.
func hashTree(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel + " " + fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:]) + " " + fi.ModTime().String()
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// seededCache returns a Caches under a fresh folder and root's cache
// folder in it, holding one go-build entry and one module file.
func seededCache(t testing.TB, root string) (*Caches, string) {
	t.Helper()
	c := NewCaches(filepath.Join(workspace(t), "cache"), 0)
	t.Cleanup(c.Close)
	dir, err := c.Dir(root)
	if err != nil || dir == "" {
		t.Fatalf("Dir(%s) = %q, %v", root, dir, err)
	}
	writeFile(t, filepath.Join(dir, cacheGoBuild, "00", "0011-a"), "the owner's compile\n")
	writeFile(t, filepath.Join(dir, cacheGoMod, "cache", "download", "m", "@v", "v1.0.0.ziphash"), "h1:x\n")
	return c, dir
}

// TestCacheCommandCannotWrite is the boundary: a command that writes,
// changes, deletes and plants in every cache it is shown leaves the
// persistent folder exactly as it was, in both views of both confining
// backends; and (the twin) it did read the persistent entries and its
// writes did succeed in its own view.
func TestCacheCommandCannotWrite(t *testing.T) {
	script := `set -e
cat "$GOCACHE/00/0011-a"
echo planted > "$GOCACHE/00/0011-a"
echo planted > "$GOCACHE/ff-planted"
mkdir -p "$GOCACHE/ab" && echo x > "$GOCACHE/ab/abcd-d"
rm -f "$GOMODCACHE/cache/download/m/@v/v1.0.0.ziphash"
echo planted > "$GOMODCACHE/planted"
echo planted > "$npm_config_cache/planted"
echo planted > "$PIP_CACHE_DIR/planted"
cat "$GOCACHE/00/0011-a"
chmod 777 "$GOCACHE" 2>/dev/null || true
`
	for _, b := range confining(t) {
		for _, m := range []Mode{ModeReadOnly, ModeOverlay} {
			t.Run(b.Name()+"/"+m.String(), func(t *testing.T) {
				root := workspace(t)
				_, dir := seededCache(t, root)
				before := hashTree(t, dir)
				p, a := sh(script)
				res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: m, Cache: dir})
				if res.Changes != nil {
					res.Changes.Close()
				}
				out := string(res.Output)
				if res.ExitCode != 0 || out != "the owner's compile\nplanted\n" {
					t.Fatalf("the command's writes in its view: exit %d, output %q; want 0 and the entry read then rewritten", res.ExitCode, out)
				}
				if after := hashTree(t, dir); after != before {
					t.Errorf("the persistent cache changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			})
		}
	}
}

// TestCacheEnvWithoutCache: without Spec.Cache the caches stay in the
// fresh home, as before warm caches existed.
func TestCacheEnvWithoutCache(t *testing.T) {
	env := strings.Join(cleanEnv([]string{"GOCACHE=/evil", "PIP_CACHE_DIR=/evil", "NPM_CONFIG_CACHE=/evil"}, "/h", false), " ")
	for _, want := range []string{"GOCACHE=/h/.cache/go-build", "npm_config_cache=/h/.npm"} {
		if !strings.Contains(env, want) {
			t.Errorf("cleanEnv(no cache) = %s; want %s", env, want)
		}
	}
	if strings.Contains(env, "/evil") || strings.Contains(env, cacheView) {
		t.Errorf("cleanEnv(no cache) = %s; want no caller cache and no cache view", env)
	}
	env = strings.Join(cleanEnv(nil, "/h", true), " ")
	for _, want := range []string{"GOCACHE=/h/.build-cache/go-build", "GOMODCACHE=/h/.build-cache/gomod", "npm_config_cache=/h/.build-cache/npm", "PIP_CACHE_DIR=/h/.build-cache/pip"} {
		if !strings.Contains(env, want) {
			t.Errorf("cleanEnv(cache) = %s; want %s", env, want)
		}
	}
}

// TestCacheDirRefusesOverlap: a cache folder inside the root (or holding
// it) is never shown; normalize refuses one as the second line.
func TestCacheDirRefusesOverlap(t *testing.T) {
	root := workspace(t)
	c := NewCaches(filepath.Join(root, "data", "cache"), 0)
	defer c.Close()
	if dir, err := c.Dir(root); dir != "" || err != nil {
		t.Errorf("Dir(root holding the cache) = %q, %v; want \"\", nil", dir, err)
	}
	_, err := normalize(Spec{Path: "/bin/true", Root: root, Dir: root, Cache: filepath.Join(root, "c")})
	if err == nil {
		t.Errorf("normalize(cache inside the root) succeeded; want ErrInvalidSpec")
	}
	_, err = normalize(Spec{Path: "/bin/true", Root: root, Dir: root, Cache: "/tmp/c", Mode: ModeOverlay, cacheRefresh: true})
	if err == nil {
		t.Errorf("normalize(refresh on an overlay) succeeded; want ErrInvalidSpec")
	}
}
