package skill

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadTreeRefuses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"symlink at the top", func(t *testing.T, dir string) {
			must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")))
		}, "passwd: is a symlink"},
		{"symlink deep inside", func(t *testing.T, dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "lib", "deep"), 0o755))
			must(t, os.Symlink("../../run.sh", filepath.Join(dir, "lib", "deep", "same.sh")))
		}, "lib/deep/same.sh: is a symlink"},
		{"symlink to a folder", func(t *testing.T, dir string) {
			must(t, os.Symlink("/tmp", filepath.Join(dir, "tmp")))
		}, "tmp: is a symlink"},
		{"FIFO", func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
		}, "pipe: is a special file (a FIFO)"},
		{"socket", func(t *testing.T, dir string) {
			l, err := net.Listen("unix", filepath.Join(dir, "sock"))
			must(t, err)
			t.Cleanup(func() { l.Close() })
		}, "sock: is a special file (a socket)"},
		{"control character in a name", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "a\x1b[2Jb"), []byte("x"), 0o644))
		}, "name holds control or invisible characters"},
		{"invisible character in a name", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "run\u200b.sh"), []byte("x"), 0o644))
		}, "name holds control or invisible characters"},
		{"trailing space in a name", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "run.sh "), []byte("x"), 0o644))
		}, "a name starts or ends with a space"},
		{"file over the cap", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, MaxFileBytes+1), 0o644))
		}, "big.bin: is 1048577 bytes"},
		{"too many files", func(t *testing.T, dir string) {
			for i := range MaxFiles {
				must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644))
			}
		}, "more than 200 files and folders"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeSkill(t, t.TempDir(), "weather", nil)
			c.setup(t, dir)
			_, err := ReadTree(dir)
			if !errors.Is(err, ErrTree) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadTree = %v; want ErrTree containing %q", err, c.want)
			}
			if _, err := Inspect(dir); !errors.Is(err, ErrTree) {
				t.Errorf("Inspect = %v; want ErrTree too", err)
			}
		})
	}
}

func TestReadTreeRefusesASymlinkedSkillFolder(t *testing.T) {
	dir := writeSkill(t, t.TempDir(), "weather", nil)
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(dir, link))
	if _, err := ReadTree(link); !errors.Is(err, ErrTree) {
		t.Errorf("ReadTree(symlink to a skill) = %v; want ErrTree", err)
	}
	// Twin: the real folder, with a subfolder and an executable, reads.
	must(t, os.MkdirAll(filepath.Join(dir, "lib"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "lib", "helper.py"), []byte("print(1)\n"), 0o644))
	tr, err := ReadTree(dir)
	if err != nil {
		t.Fatalf("ReadTree(real folder) = %v", err)
	}
	var paths []string
	for _, f := range tr.Files {
		paths = append(paths, f.Path)
	}
	if got, want := strings.Join(paths, " "), "SKILL.md lib lib/helper.py run.sh skill.json"; got != want {
		t.Errorf("tree paths = %s; want %s", got, want)
	}
}

func TestHashChangesWithAnyChange(t *testing.T) {
	base := func(t *testing.T) (string, string) {
		dir := writeSkill(t, t.TempDir(), "weather", map[string]string{"lib/a.txt": "a"})
		tr, err := ReadTree(dir)
		must(t, err)
		return dir, tr.Hash
	}
	changes := map[string]func(t *testing.T, dir string){
		"content": func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "lib", "a.txt"), []byte("b"), 0o644))
		},
		"one byte added": func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "lib", "a.txt"), []byte("a\n"), 0o644))
		},
		"new file":      func(t *testing.T, dir string) { must(t, os.WriteFile(filepath.Join(dir, "b.txt"), nil, 0o644)) },
		"new empty dir": func(t *testing.T, dir string) { must(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755)) },
		"rename": func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, "lib", "a.txt"), filepath.Join(dir, "lib", "c.txt")))
		},
		"exec bit":     func(t *testing.T, dir string) { must(t, os.Chmod(filepath.Join(dir, "lib", "a.txt"), 0o755)) },
		"file removed": func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "lib", "a.txt"))) },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			dir, before := base(t)
			change(t, dir)
			tr, err := ReadTree(dir)
			must(t, err)
			if tr.Hash == before {
				t.Errorf("hash unchanged after %s: %s", name, before)
			}
		})
	}
	t.Run("same tree elsewhere, other write bits", func(t *testing.T) {
		dir, before := base(t)
		other := writeSkill(t, t.TempDir(), "weather", map[string]string{"lib/a.txt": "a"})
		must(t, os.Chmod(filepath.Join(other, "SKILL.md"), 0o664))
		tr, err := ReadTree(other)
		must(t, err)
		if tr.Hash != before {
			t.Errorf("hash of an identical tree = %s; want %s (dir %s)", tr.Hash, before, dir)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
