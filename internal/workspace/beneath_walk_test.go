package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenBeneathWalk: the element-by-element walk macOS uses answers as
// openBeneath (openat2) does on Linux — the same file, or the same error —
// for the paths change sets use, the symlinks and escapes included; and the
// legitimate opens (a nested file, a folder, the root itself, a symlink
// opened as itself with O_PATH|O_NOFOLLOW) still work.
func TestOpenBeneathWalk(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a/b/f.txt"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "top.txt"), []byte("y"), 0o644))
	must(os.Symlink("a", filepath.Join(dir, "linkdir")))
	must(os.Symlink("top.txt", filepath.Join(dir, "linkfile")))
	must(os.Symlink("/etc", filepath.Join(dir, "abs")))
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(err)
	defer unix.Close(dirfd)

	const (
		rd     = unix.O_RDONLY | unix.O_NOFOLLOW
		rdDir  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW
		pathNF = oPath | unix.O_NOFOLLOW
		parent = oPath | unix.O_DIRECTORY | unix.O_NOFOLLOW
	)
	for _, tc := range []struct {
		rel   string
		flags int
		want  error // nil: opens
	}{
		{"a/b/f.txt", rd, nil},
		{"top.txt", rd, nil},
		{"a/b", rdDir, nil},
		{"a", parent, nil},
		{".", parent, nil},
		{"a/b/f.txt", pathNF, nil},
		{"linkfile", pathNF, nil}, // the link itself
		{"missing", rd, unix.ENOENT},
		{"a/missing/f", rd, unix.ENOENT},
		{"top.txt/x", rd, unix.ENOTDIR},
		{"linkdir/b/f.txt", rd, unix.ELOOP},
		{"linkdir/b", parent, unix.ELOOP},
		{"linkfile", rd, unix.ELOOP},
		{"linkdir", parent, unix.ENOTDIR}, // O_PATH|O_NOFOLLOW opens the link; O_DIRECTORY refuses it
		{"abs/passwd", rd, unix.ELOOP},
		{"../x", rd, unix.EXDEV},
		{"a/../../x", rd, unix.EXDEV},
		{"/etc/passwd", rd, unix.EXDEV},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			wfd, werr := openBeneathWalk(dirfd, tc.rel, tc.flags, 0)
			ofd, oerr := openBeneath(dirfd, tc.rel, tc.flags, 0)
			if werr == nil {
				defer unix.Close(wfd)
			}
			if oerr == nil {
				defer unix.Close(ofd)
			}
			if !errors.Is(werr, tc.want) && !(tc.want == nil && werr == nil) {
				t.Fatalf("openBeneathWalk(%q) = %v; want %v", tc.rel, werr, tc.want)
			}
			if !errors.Is(oerr, tc.want) && !(tc.want == nil && oerr == nil) {
				t.Fatalf("openBeneath(%q) = %v; want %v (the reference disagrees with the table)", tc.rel, oerr, tc.want)
			}
			if werr != nil {
				return
			}
			var ws, os unix.Stat_t
			must(unix.Fstat(wfd, &ws))
			must(unix.Fstat(ofd, &os))
			if ws.Dev != os.Dev || ws.Ino != os.Ino {
				t.Errorf("openBeneathWalk(%q) opened inode %d; openBeneath opened %d", tc.rel, ws.Ino, os.Ino)
			}
		})
	}
}
