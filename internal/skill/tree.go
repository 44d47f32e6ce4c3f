package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/homard/homard/internal/termtext"
)

// Caps on a skill tree.
const (
	MaxFiles     = 200     // files and folders
	MaxFileBytes = 1 << 20 // one file
	MaxTreeBytes = 8 << 20 // all files
	maxPathBytes = 512
)

// File is one entry of a skill tree.
type File struct {
	Path string // slash-separated, relative to the skill's folder
	Dir  bool
	Exec bool // a file with any executable bit; installed 0755, others 0644
	Data []byte
}

// Tree is a skill folder read into memory, in path order, and its hash.
type Tree struct {
	Files []File
	Hash  string // hex SHA-256 over every path, kind, executable bit and content
}

// treeErr is a refusal naming the offending path.
func treeErr(rel, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrTree, termtext.Line(rel), fmt.Sprintf(format, args...))
}

// ReadTree reads the folder dir: folders and regular files only, names a
// person can read, within the caps. Files are opened through an os.Root
// without following a final symlink, and checked again on the open file,
// so a file swapped for a symlink after the walk is refused too.
func ReadTree(dir string) (Tree, error) {
	info, err := os.Lstat(dir)
	if err != nil {
		return Tree{}, fmt.Errorf("read skill folder: %w", err)
	}
	if !info.IsDir() {
		return Tree{}, treeErr(dir, "not a folder (a symlink to a folder is refused too: give its real path)")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Tree{}, fmt.Errorf("read skill folder: %w", err)
	}
	defer root.Close()
	var t Tree
	total := 0
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read skill folder: %w", err)
		}
		if rel == "." {
			return nil
		}
		if err := checkName(rel); err != nil {
			return err
		}
		if len(t.Files) >= MaxFiles {
			return treeErr(rel, "the skill has more than %d files and folders", MaxFiles)
		}
		switch mode := d.Type(); {
		case mode&fs.ModeSymlink != 0:
			return treeErr(rel, "is a symlink; a skill holds only its own files (copy the file in)")
		case mode.IsDir():
			t.Files = append(t.Files, File{Path: rel, Dir: true})
			return nil
		case !mode.IsRegular():
			return treeErr(rel, "is a special file (%s); a skill holds only folders and regular files", kind(mode))
		}
		f, err := readFile(root, rel)
		if err != nil {
			return err
		}
		if total += len(f.Data); total > MaxTreeBytes {
			return treeErr(rel, "the skill's files add up to more than %d MiB", MaxTreeBytes>>20)
		}
		t.Files = append(t.Files, f)
		return nil
	})
	if err != nil {
		return Tree{}, err
	}
	t.Hash = hashFiles(t.Files)
	return t, nil
}

// readFile reads one regular file of the tree without following a symlink.
func readFile(root *os.Root, rel string) (File, error) {
	fh, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return File{}, treeErr(rel, "is a symlink; a skill holds only its own files")
		}
		return File{}, fmt.Errorf("read skill file %s: %w", termtext.Line(rel), err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return File{}, fmt.Errorf("read skill file %s: %w", termtext.Line(rel), err)
	}
	if !st.Mode().IsRegular() {
		return File{}, treeErr(rel, "is a special file (%s); a skill holds only folders and regular files", kind(st.Mode()))
	}
	if st.Size() > MaxFileBytes {
		return File{}, treeErr(rel, "is %d bytes; a skill file may be at most %d MiB", st.Size(), MaxFileBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("read skill file %s: %w", termtext.Line(rel), err)
	}
	if len(data) > MaxFileBytes {
		return File{}, treeErr(rel, "grew past %d MiB while being read", MaxFileBytes>>20)
	}
	return File{Path: rel, Exec: st.Mode().Perm()&0o111 != 0, Data: data}, nil
}

// checkName refuses a path a person could misread: invalid UTF-8, control
// or invisible characters, spaces at either end of a name, or too long.
func checkName(rel string) error {
	if len(rel) > maxPathBytes {
		return treeErr(rel[:64]+"…", "path is longer than %d bytes", maxPathBytes)
	}
	if !utf8.ValidString(rel) {
		return treeErr(strconv.Quote(rel), "name is not valid UTF-8")
	}
	if strings.ContainsFunc(rel, hidden) {
		return treeErr(strconv.Quote(rel), "name holds control or invisible characters")
	}
	for part := range strings.SplitSeq(rel, "/") {
		if strings.TrimSpace(part) != part {
			return treeErr(strconv.Quote(rel), "a name starts or ends with a space")
		}
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// hashFiles hashes entries in path order: for each, its kind and path,
// NUL-terminated (paths hold no NUL), then for a file its executable bit
// and the SHA-256 of its content. Only the executable bit is hashed
// because it is the only mode a copy keeps.
func hashFiles(files []File) string {
	files = slices.Clone(files)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	h := sha256.New()
	for _, f := range files {
		switch {
		case f.Dir:
			fmt.Fprintf(h, "d %s\x00", f.Path)
		default:
			x := "-"
			if f.Exec {
				x = "x"
			}
			sum := sha256.Sum256(f.Data)
			fmt.Fprintf(h, "f%s %s\x00%x\n", x, f.Path, sum)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// write copies t into dir, which must not exist yet: folders 0755, files
// 0644 or 0755. It writes the bytes that were read and hashed, never the
// source again.
func (t Tree) write(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("install skill: %w", err)
	}
	for _, f := range t.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if f.Dir {
			if err := os.Mkdir(p, 0o755); err != nil {
				return fmt.Errorf("install skill: %w", err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
		if err != nil {
			return fmt.Errorf("install skill: %w", err)
		}
		if _, err := fh.Write(f.Data); err != nil {
			fh.Close()
			return fmt.Errorf("install skill: %w", err)
		}
		if err := fh.Chmod(mode); err != nil { // the umask may have narrowed it
			fh.Close()
			return fmt.Errorf("install skill: %w", err)
		}
		if err := fh.Close(); err != nil {
			return fmt.Errorf("install skill: %w", err)
		}
	}
	return nil
}

// files maps the tree's file paths to contents.
func (t Tree) files() map[string][]byte {
	m := make(map[string][]byte, len(t.Files))
	for _, f := range t.Files {
		if !f.Dir {
			m[f.Path] = f.Data
		}
	}
	return m
}
