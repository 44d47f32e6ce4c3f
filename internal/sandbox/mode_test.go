package sandbox

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// confining returns every sandboxed backend, failing under CI when one is
// missing (see requireBwrap).
func confining(t *testing.T) []Backend {
	t.Helper()
	out := []Backend{requireBwrap(t)}
	l := NewLandlock()
	if err := l.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("landlock backend unavailable in CI: %v", err)
		}
		t.Logf("landlock unavailable: %v", err)
	} else {
		out = append(out, l)
	}
	return out
}

func sh(script string, args ...string) (string, []string) {
	return "/bin/sh", append([]string{"-c", script, "sh"}, args...)
}

// TestReadOnlyModeCannotWrite: a command run as a read sees the root
// read-only, whatever it really does; its twin, reading, still works.
func TestReadOnlyModeCannotWrite(t *testing.T) {
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			writeFile(t, filepath.Join(root, "notes.txt"), "hello\n")
			writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
			p, a := sh(`cat notes.txt; echo pwned > notes.txt; echo new > new.txt; mkdir -p .git/hooks && echo x > .git/hooks/pre-commit; echo done`)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeReadOnly})
			if !strings.Contains(string(res.Output), "hello") {
				t.Errorf("read-only run could not read notes.txt: %q", res.Output)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(got) != "hello\n" {
				t.Errorf("notes.txt = %q after a read-only run", got)
			}
			for _, p := range []string{"new.txt", ".git/hooks"} {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("%s exists after a read-only run (output %q)", p, res.Output)
				}
			}
			if res.Changes != nil {
				t.Error("a read-only run returned a change set")
			}
		})
	}
}

// TestHiddenPathsCannotBeRead: a sensitive file is masked by a mount in
// both backends and in both modes, so `cat .env` fails whatever the
// command was classed as; the ordinary file next to it reads.
func TestHiddenPathsCannotBeRead(t *testing.T) {
	for _, b := range confining(t) {
		for _, mode := range []Mode{ModeReadOnly, ModeOverlay} {
			t.Run(b.Name()+"/"+mode.String(), func(t *testing.T) {
				root := workspace(t)
				writeFile(t, filepath.Join(root, ".env"), "API_KEY=TOPSECRET\n")
				writeFile(t, filepath.Join(root, ".ssh", "id_ed25519"), "TOPSECRET-KEY\n")
				writeFile(t, filepath.Join(root, "config.txt"), "ordinary\n")
				p, a := sh(`cat config.txt; cat .env; cat .ssh/id_ed25519; ls .ssh; chmod 644 .env; cat .env; rm -f .env; echo end`)
				res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: mode,
					Hide: []string{filepath.Join(root, ".env"), filepath.Join(root, ".ssh")}})
				out := string(res.Output)
				if !strings.Contains(out, "ordinary") || !strings.Contains(out, "end") {
					t.Errorf("the ordinary file next to .env did not read: %q", out)
				}
				if strings.Contains(out, "TOPSECRET") {
					t.Errorf("a hidden file was read: %q", out)
				}
				if res.Changes != nil {
					res.Changes.Close()
				}
				if got, _ := os.ReadFile(filepath.Join(root, ".env")); string(got) != "API_KEY=TOPSECRET\n" {
					t.Errorf(".env on the host = %q", got)
				}
			})
		}
	}
}

// TestOverlayKeepsChangesAside: in overlay mode nothing reaches the real
// root; the change set lists what the command did.
func TestOverlayKeepsChangesAside(t *testing.T) {
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			writeFile(t, filepath.Join(root, "old.txt"), "old\n")
			writeFile(t, filepath.Join(root, "edit.txt"), "v1\n")
			writeFile(t, filepath.Join(root, "dir", "gone.txt"), "x\n")
			writeFile(t, filepath.Join(root, "sub", "keep.txt"), "k\n")
			p, a := sh(`set -e; echo new > new.txt; rm old.txt; echo v2 > edit.txt; rm -r dir; mkdir dir; echo y > dir/fresh.txt; mkdir -p sub/deep; echo d > sub/deep/f; ln -s edit.txt link; cd sub && pwd`)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d: %q", res.ExitCode, res.Output)
			}
			// The real root is untouched.
			if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
				t.Error("new.txt reached the real root")
			}
			if got, _ := os.ReadFile(filepath.Join(root, "edit.txt")); string(got) != "v1\n" {
				t.Errorf("edit.txt = %q on the host", got)
			}
			if _, err := os.Stat(filepath.Join(root, "old.txt")); err != nil {
				t.Error("old.txt was deleted on the host")
			}
			got := readChanges(t, res.Changes)
			want := map[string]string{
				"new.txt":       "file new\n",
				"edit.txt":      "file v2\n",
				"old.txt":       "whiteout",
				"dir/":          "dir opaque",
				"dir/fresh.txt": "file y\n",
				"sub/":          "dir",
				"sub/deep/":     "dir",
				"sub/deep/f":    "file d\n",
				"link":          "symlink edit.txt",
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("change %s = %q; want %q", name, got[name], w)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("unexpected change %s = %q", name, got[name])
				}
			}
		})
	}
}

// readChanges summarises a change-set tar: name → kind and content.
func readChanges(t *testing.T, f *os.File) map[string]string {
	t.Helper()
	if f == nil {
		t.Fatal("no change set")
	}
	defer f.Close()
	out := map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read change set: %v", err)
		}
		switch h.Typeflag {
		case tar.TypeReg:
			b, _ := io.ReadAll(tr)
			out[h.Name] = "file " + string(b)
		case tar.TypeDir:
			out[h.Name] = "dir"
			if h.PAXRecords["SCHILY.xattr.user.overlay.opaque"] == "y" {
				out[h.Name] = "dir opaque"
			}
		case tar.TypeChar:
			if h.Devmajor == 0 && h.Devminor == 0 {
				out[h.Name] = "whiteout"
			} else {
				out[h.Name] = "chardev"
			}
		case tar.TypeSymlink:
			out[h.Name] = "symlink " + h.Linkname
		default:
			out[h.Name] = string(h.Typeflag)
		}
	}
	return out
}

// TestOverlayRunLeavesNoProcess: a child that detaches (setsid, in the
// background) does not outlive the run, in either backend, and what it
// would have written later is not in the change set.
func TestOverlayRunLeavesNoProcess(t *testing.T) {
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			marker := "homard-outlive-" + strings.ReplaceAll(t.Name(), "/", "-")
			writeFile(t, filepath.Join(root, marker), "#!/bin/sh\nsleep 1\necho late > late.txt\nexec sleep 300\n")
			if err := os.Chmod(filepath.Join(root, marker), 0o755); err != nil {
				t.Fatal(err)
			}
			p, a := sh(`setsid -f ./` + marker + ` </dev/null >/dev/null 2>&1; echo started`)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay})
			if !strings.Contains(string(res.Output), "started") {
				t.Fatalf("output %q", res.Output)
			}
			got := readChanges(t, res.Changes)
			time.Sleep(1500 * time.Millisecond)
			if _, ok := got["late.txt"]; ok {
				t.Error("the detached child's late write is in the change set")
			}
			if _, err := os.Stat(filepath.Join(root, "late.txt")); err == nil {
				t.Error("the detached child wrote to the real root")
			}
			if pids := processesWith(marker); len(pids) > 0 {
				t.Errorf("processes outlived the run: %v", pids)
			}
		})
	}
}

// processesWith lists the pids whose command line mentions s.
func processesWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	sort.Strings(out)
	return out
}

// TestOverlayMountFailureFailsTheCommand: when the overlay cannot be
// mounted the command does not run at all, never on the real root.
func TestOverlayMountFailureFailsTheCommand(t *testing.T) {
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := filepath.Join(workspace(t), "a,b")
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			p, a := sh(`echo ran > ran.txt`)
			res, err := b.Run(t.Context(), Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, Timeout: 20 * time.Second})
			if err == nil {
				t.Errorf("overlay on an unmountable root ran: exit %d %q", res.ExitCode, res.Output)
			}
			if _, serr := os.Stat(filepath.Join(root, "ran.txt")); serr == nil {
				t.Error("the command wrote to the real root")
			}
			// Twin: the same root read-only still works.
			res2 := run(t, b, Spec{Path: "/bin/true", Dir: root, Root: root, Mode: ModeReadOnly})
			if res2.ExitCode != 0 {
				t.Errorf("read-only run on the same root: exit %d %q", res2.ExitCode, res2.Output)
			}
		})
	}
}

// TestCleanHome: HOME and the caches point at a fresh folder outside the
// root, not at anything the workspace or the owner planted.
func TestCleanHome(t *testing.T) {
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			p, a := sh(`echo "home=$HOME"; echo "go=$GOTOOLCHAIN/$GOENV"; echo hi > "$HOME/x" && cat "$HOME/x"`)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, Env: []string{"HOME=" + root, "GOTOOLCHAIN=auto"}})
			out := string(res.Output)
			if strings.Contains(out, "home="+root) || !strings.Contains(out, "go=local/off") || !strings.Contains(out, "\nhi\n") {
				t.Errorf("environment: %q", out)
			}
			got := readChanges(t, res.Changes)
			if len(got) != 0 {
				t.Errorf("writes to HOME landed in the change set: %v", got)
			}
		})
	}
}
