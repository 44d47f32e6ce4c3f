package workspace

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// A change set is what a command run on an overlay left in the overlay's
// upper directory, read from the tar stream the sandbox serialises it to
// (see WriteUpperTar for the format). ReadChanges parses the stream into
// Entries, the upper's own view; Grade compares them with the real root
// and lists Changes (create, modify, delete) with a Grade; ApplyChanges
// applies them through a journal; Rollback undoes them.

// EntryKind is what an upper entry is.
type EntryKind int

// Entry kinds. Whiteout and Opaque mean deletions of lower content; the
// special kinds are never applied.
const (
	EntryFile EntryKind = iota
	EntryDir
	EntrySymlink
	EntryWhiteout // the command deleted the lower path
	EntryFIFO
	EntrySocket
	EntryDevice
)

// entryKindNames are the kinds' names, by EntryKind.
var entryKindNames = [...]string{
	EntryFile:     "file",
	EntryDir:      "folder",
	EntrySymlink:  "symlink",
	EntryWhiteout: "deletion",
	EntryFIFO:     "named pipe",
	EntrySocket:   "socket",
	EntryDevice:   "device",
}

func (k EntryKind) String() string { return enumName(entryKindNames[:], k, "EntryKind") }

// enumName is the name of v in names (indexed by value), or type(v) for
// a value without one.
func enumName[E ~int](names []string, v E, typ string) string {
	if v >= 0 && int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// special reports kinds that are refused outright.
func (k EntryKind) special() bool { return k == EntryFIFO || k == EntrySocket || k == EntryDevice }

// Entry is one entry of the upper directory.
type Entry struct {
	Rel  string // clean slash path relative to the root
	Kind EntryKind
	// Mode is the permission bits as on the upper, including setuid,
	// setgid and sticky (fs.ModeSetuid...), never the type bits.
	Mode fs.FileMode
	// Opaque marks a folder that replaced a lower folder: nothing of the
	// lower folder's content survives except what the upper lists.
	Opaque bool
	// Target is a symlink's raw target.
	Target string
	// LinkOf names the earlier entry this regular file is a second name
	// of (a hard link in the upper); it is applied as a copy.
	LinkOf string
	// Size and SHA256 (hex) describe a regular file's content.
	Size   int64
	SHA256 string

	off int64 // offset of the content in the change set's spool file
}

// ChangeSet is a parsed upper directory, with the content of its files
// spooled to an unlinked temp file. Close it when done. A ChangeSet is not
// safe for concurrent use.
type ChangeSet struct {
	Entries []Entry
	// Bytes is the total size of the regular files' content.
	Bytes int64

	spool  spool
	byName map[string]int // Rel -> index in Entries
}

// ReadOptions bound what ReadChanges accepts. Zero fields take defaults.
type ReadOptions struct {
	// SpoolDir holds the (immediately unlinked) temp file the content is
	// copied to. Empty means os.TempDir().
	SpoolDir string
	// MaxEntries caps the number of entries. Zero means 100000.
	MaxEntries int
	// MaxBytes caps the total content. Zero means 1 GiB.
	MaxBytes int64
	// MaxDepth caps the number of path elements. Zero means 64.
	MaxDepth int
	// Memory keeps the content in memory instead of a spool file: for a
	// stream already held in memory and small (a file tool's write, at
	// most the file size limit), where two temp files would cost more than
	// grading it.
	Memory bool
}

// Defaults of ReadOptions and TarLimits.
const (
	DefaultMaxChangeEntries = 100000
	DefaultMaxChangeBytes   = 1 << 30
	DefaultMaxChangeDepth   = 64
)

func (o ReadOptions) withDefaults() ReadOptions {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxChangeEntries
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxChangeBytes
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxChangeDepth
	}
	return o
}

// PAX records with a meaning for change sets.
const (
	paxOpaque = "SCHILY.xattr.user.overlay.opaque"
	paxKind   = "HOMARD.kind"
)

// ReadChanges parses a change-set stream. It refuses a malformed stream
// (ErrBadChangeStream): names that are not clean relative paths, an entry
// whose parent is missing or not a folder, duplicates, or a stream over
// the limits (ErrChangeSetTooLarge). Entries that are legal in the stream
// but never applied (FIFOs, sockets, devices, names with control
// characters) are kept, so that Grade can report them.
func ReadChanges(r io.Reader, o ReadOptions) (cs *ChangeSet, err error) {
	o = o.withDefaults()
	var sp spool = &memSpool{}
	if !o.Memory {
		dir := o.SpoolDir
		if dir == "" {
			dir = os.TempDir()
		}
		f, err := os.CreateTemp(dir, ".homard-changes-*")
		if err != nil {
			return nil, fmt.Errorf("read changes: spool file: %w", err)
		}
		// Unlinked at once: the content lives as long as the descriptor,
		// and a crash leaves nothing behind.
		os.Remove(f.Name())
		sp = f
	}
	cs = &ChangeSet{spool: sp, byName: make(map[string]int)}
	defer func() {
		if err != nil {
			cs.Close()
			cs = nil
		}
	}()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return cs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read changes: %w: %w", ErrBadChangeStream, err)
		}
		if len(cs.Entries) >= o.MaxEntries {
			return nil, fmt.Errorf("read changes: %w: more than %d entries", ErrChangeSetTooLarge, o.MaxEntries)
		}
		e, err := entryOf(h)
		if err != nil {
			return nil, fmt.Errorf("read changes: %w", err)
		}
		if err := cs.place(e, o.MaxDepth); err != nil {
			return nil, fmt.Errorf("read changes: %w", err)
		}
		if e.LinkOf != "" {
			c := cs.Entries[cs.byName[e.LinkOf]]
			e.off, e.Size, e.SHA256, e.Mode = c.off, c.Size, c.SHA256, c.Mode
		}
		if e.Kind == EntryFile && e.LinkOf == "" {
			if cs.Bytes+h.Size > o.MaxBytes {
				return nil, fmt.Errorf("read changes: %w: content over %d bytes", ErrChangeSetTooLarge, o.MaxBytes)
			}
			if err := cs.spoolContent(&e, tr, h.Size); err != nil {
				return nil, fmt.Errorf("read changes: %s: %w", e.Rel, err)
			}
		}
		cs.byName[e.Rel] = len(cs.Entries)
		cs.Entries = append(cs.Entries, e)
	}
}

// entryOf turns a tar header into an Entry, without content.
func entryOf(h *tar.Header) (Entry, error) {
	name := strings.TrimSuffix(h.Name, "/")
	if name == "" || name == "." || strings.HasPrefix(name, "/") || path.Clean(name) != name ||
		name == ".." || strings.HasPrefix(name, "../") || strings.ContainsRune(name, 0) {
		return Entry{}, fmt.Errorf("%w: entry name %q is not a clean relative path", ErrBadChangeStream, h.Name)
	}
	e := Entry{Rel: name, Mode: modeBits(h.Mode)}
	switch h.Typeflag {
	case tar.TypeReg:
		e.Kind = EntryFile
		if h.Size < 0 {
			return Entry{}, fmt.Errorf("%w: %q has a negative size", ErrBadChangeStream, name)
		}
	case tar.TypeDir:
		e.Kind = EntryDir
		e.Opaque = h.PAXRecords[paxOpaque] == "y"
	case tar.TypeSymlink:
		e.Kind = EntrySymlink
		e.Target = h.Linkname
		if e.Target == "" || strings.ContainsRune(e.Target, 0) {
			return Entry{}, fmt.Errorf("%w: symlink %q has an empty target", ErrBadChangeStream, name)
		}
	case tar.TypeLink:
		e.Kind = EntryFile
		e.LinkOf = strings.TrimSuffix(h.Linkname, "/")
	case tar.TypeChar:
		e.Kind = EntryDevice
		if h.Devmajor == 0 && h.Devminor == 0 {
			e.Kind = EntryWhiteout
		}
	case tar.TypeBlock:
		e.Kind = EntryDevice
	case tar.TypeFifo:
		e.Kind = EntryFIFO
		if h.PAXRecords[paxKind] == "socket" {
			e.Kind = EntrySocket
		}
	default:
		return Entry{}, fmt.Errorf("%w: %q has tar type %q, which a change set never holds", ErrBadChangeStream, name, h.Typeflag)
	}
	return e, nil
}

// modeBits keeps the permission and setuid/setgid/sticky bits of a tar
// mode.
func modeBits(m int64) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// place checks e's name against the entries already read: no duplicate,
// the parent (if any) read before and a folder, a hard link naming an
// earlier regular file.
func (cs *ChangeSet) place(e Entry, maxDepth int) error {
	if _, dup := cs.byName[e.Rel]; dup {
		return fmt.Errorf("%w: %q appears twice", ErrBadChangeStream, e.Rel)
	}
	if n := strings.Count(e.Rel, "/") + 1; n > maxDepth {
		return fmt.Errorf("%w: %q is deeper than %d levels", ErrChangeSetTooLarge, e.Rel, maxDepth)
	}
	if dir := path.Dir(e.Rel); dir != "." {
		i, ok := cs.byName[dir]
		if !ok || cs.Entries[i].Kind != EntryDir {
			return fmt.Errorf("%w: %q comes without its parent folder before it", ErrBadChangeStream, e.Rel)
		}
	}
	if e.LinkOf != "" {
		i, ok := cs.byName[e.LinkOf]
		if !ok || cs.Entries[i].Kind != EntryFile {
			return fmt.Errorf("%w: hard link %q names %q, which is not an earlier file", ErrBadChangeStream, e.Rel, e.LinkOf)
		}
	}
	return nil
}

// spool holds a change set's content: an unlinked temp file, or memory.
type spool interface {
	io.Writer
	io.ReaderAt
	io.Seeker
	Close() error
}

// memSpool is a spool in memory. Only Seek(0, io.SeekEnd) is used.
type memSpool struct{ b []byte }

func (m *memSpool) Write(p []byte) (int, error) { m.b = append(m.b, p...); return len(p), nil }
func (m *memSpool) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekEnd {
		return 0, errors.New("memory spool: only Seek(0, SeekEnd)")
	}
	return int64(len(m.b)), nil
}
func (m *memSpool) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (m *memSpool) Close() error { m.b = nil; return nil }

// spoolContent copies a file's content to the spool and hashes it.
func (cs *ChangeSet) spoolContent(e *Entry, r io.Reader, size int64) error {
	off, err := cs.spool.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(cs.spool, h), io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%w: content is %d bytes, the header says %d", ErrBadChangeStream, n, size)
	}
	e.off, e.Size, e.SHA256 = off, size, hex.EncodeToString(h.Sum(nil))
	cs.Bytes += size
	return nil
}

// Entry returns the entry named rel.
func (cs *ChangeSet) Entry(rel string) (Entry, bool) {
	i, ok := cs.byName[rel]
	if !ok {
		return Entry{}, false
	}
	return cs.Entries[i], true
}

// Open returns a reader of a file entry's content (a hard link's content
// is the content of the file it names).
func (cs *ChangeSet) Open(e Entry) io.Reader {
	return io.NewSectionReader(cs.spool, e.off, e.Size)
}

// ReadContent returns a file entry's content, up to max bytes.
func (cs *ChangeSet) ReadContent(e Entry, max int64) ([]byte, error) {
	if e.Size > max {
		return nil, fmt.Errorf("read %s: %w", e.Rel, ErrTooLarge)
	}
	b := make([]byte, e.Size)
	_, err := io.ReadFull(cs.Open(e), b)
	return b, err
}

// Close releases the spooled content.
func (cs *ChangeSet) Close() error {
	if cs == nil || cs.spool == nil {
		return nil
	}
	err := cs.spool.Close()
	cs.spool = nil
	return err
}
