package workspace

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Op is what a Change does to the real root.
type Op int

// Ops. A type change (a file replaced by a folder) is a Delete followed by
// a Create of the same path; a folder rename is deletes plus creates.
const (
	OpCreate Op = iota + 1
	OpModify    // new content, mode or symlink target
	OpDelete
)

// opNames are the ops' names, by Op. A journal step records them
// (step.Op): they must not change.
var opNames = [...]string{OpCreate: "create", OpModify: "modify", OpDelete: "delete"}

func (o Op) String() string { return enumName(opNames[:], o, "Op") }

// Change is one step of applying a change set to the real root.
type Change struct {
	Op   Op
	Rel  string
	Kind EntryKind // what is created or modified; for OpDelete what is deleted
	// Mode is the permission bits written (only mode&0777&^022 of the
	// upper's, or the real file's bits when the command kept them); for
	// OpDelete the deleted entry's.
	Mode fs.FileMode
	// Size and SHA256 are the new content of a file (for OpDelete: the
	// old size, no hash).
	Size   int64
	SHA256 string
	// Target is a symlink's new target (for OpDelete: the old one).
	Target string
	// Note is a remark every list of the change shows: RunsWhenBuilt for
	// a build file; empty otherwise.
	Note string
	// Refused says why this change is never applied, even when approved
	// (devices, control characters in names, homard's own files, symlinks
	// leading out of the root or into the protected set); empty otherwise.
	Refused string

	entry int       // index in ChangeSet.Entries of the new content; -1 for none
	old   *realStat // the real entry now; nil when there is none
	setid bool      // the upper mode had setuid or setgid (dropped)
}

// maxResolvedChanges caps the changes a change set may expand to (a
// deleted folder expands to every file in it).
const maxResolvedChanges = 200000

// resolver compares a change set with the real root.
type resolver struct {
	r     *root
	dirfd int
	cs    *ChangeSet
	out   []Change
	// gone holds real paths the change set deletes or replaces: their
	// real children no longer count.
	gone map[string]bool
	// opaque holds upper folders that hide the real content under them:
	// marked opaque, or below one.
	opaque map[string]bool
}

// resolve lists the changes cs makes to the root dirfd refers to, in
// apply order: stream order, a deletion before a creation at the same
// path, a deleted folder's content before the folder.
func resolve(r *root, dirfd int, cs *ChangeSet) ([]Change, error) {
	rs := &resolver{r: r, dirfd: dirfd, cs: cs, gone: map[string]bool{}, opaque: map[string]bool{}}
	for i, e := range cs.Entries {
		if err := rs.entry(i, e); err != nil {
			return nil, err
		}
	}
	return rs.out, nil
}

func (rs *resolver) add(c Change) error {
	if len(rs.out) >= maxResolvedChanges {
		return fmt.Errorf("%w: more than %d changes", ErrChangeSetTooLarge, maxResolvedChanges)
	}
	rs.out = append(rs.out, c)
	return nil
}

// goneAbove reports whether an ancestor of rel is deleted or replaced.
func (rs *resolver) goneAbove(rel string) bool {
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if rs.gone[d] {
			return true
		}
	}
	return false
}

func (rs *resolver) entry(i int, e Entry) error {
	var old *realStat
	if !rs.goneAbove(e.Rel) {
		var err error
		if old, err = statBeneath(rs.dirfd, e.Rel); err != nil {
			return err
		}
	}
	parentOpaque := rs.opaque[path.Dir(e.Rel)]
	if e.Kind == EntryWhiteout {
		if old != nil {
			return rs.deleteTree(e.Rel, old)
		}
		return nil
	}
	setid := e.Mode&(fs.ModeSetuid|fs.ModeSetgid) != 0
	c := Change{Op: OpCreate, Rel: e.Rel, Kind: e.Kind, Mode: e.Mode.Perm() &^ 0o022, entry: i, setid: setid}
	if e.Kind == EntryFile {
		c.Size, c.SHA256 = e.Size, e.SHA256
	}
	if e.Kind == EntrySymlink {
		c.Target = e.Target
	}
	if old != nil && old.kind == e.Kind && !e.Kind.special() {
		c.Op, c.old = OpModify, old
		if old.mode == e.Mode {
			c.Mode = old.mode.Perm() // the command kept the mode: keep it exactly
		}
		switch e.Kind {
		case EntryDir:
			if e.Opaque || parentOpaque {
				rs.opaque[e.Rel] = true
				if err := rs.deleteUnder(e.Rel, true); err != nil {
					return err
				}
			}
			if old.mode == e.Mode {
				return nil // copied up as a parent of a change: not a change
			}
		case EntrySymlink:
			if old.target == e.Target {
				return nil
			}
		case EntryFile:
			if old.mode == e.Mode && old.size == e.Size {
				sum, err := hashBeneath(rs.dirfd, e.Rel)
				if err != nil {
					return err
				}
				if sum == e.SHA256 {
					return nil // copied up but unchanged
				}
			}
		}
		return rs.add(c)
	}
	if old != nil {
		if err := rs.deleteTree(e.Rel, old); err != nil {
			return err
		}
	}
	if e.Kind == EntryDir {
		// A new folder hides nothing of the real root: there is nothing
		// under it now, or what was there was just deleted.
		rs.opaque[e.Rel] = e.Opaque || parentOpaque
	}
	return rs.add(c)
}

// deleteUnder deletes (deleteTree) each entry of the real folder dir. With
// stale it deletes only the entries the upper does not list again: the
// stale content of an opaque folder.
func (rs *resolver) deleteUnder(dir string, stale bool) error {
	names, err := listBeneath(rs.dirfd, dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		rel := path.Join(dir, n)
		if _, ok := rs.cs.byName[rel]; stale && ok {
			continue // the upper's entry decides
		}
		st, err := statBeneath(rs.dirfd, rel)
		if err != nil {
			return err
		}
		if st != nil {
			if err := rs.deleteTree(rel, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteTree deletes rel, and first everything under it if it is a
// folder.
func (rs *resolver) deleteTree(rel string, st *realStat) error {
	if st.kind == EntryDir {
		if err := rs.deleteUnder(rel, false); err != nil {
			return err
		}
	}
	rs.gone[rel] = true
	c := Change{Op: OpDelete, Rel: rel, Kind: st.kind, Mode: st.mode, Size: st.size, Target: st.target, entry: -1, old: st}
	if st.kind != EntryFile {
		c.Size = 0
	}
	return rs.add(c)
}

// String is a one-line description of c for a person ("create file a/b
// (12 bytes)"); the path is quoted, so control characters show escaped.
func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q", c.Op, c.Kind, c.Rel)
	switch {
	case c.Kind == EntrySymlink:
		fmt.Fprintf(&b, " -> %q", c.Target)
	case c.Kind == EntryFile && c.Op != OpDelete:
		fmt.Fprintf(&b, " (%d bytes, mode %04o)", c.Size, uint32(c.Mode.Perm()))
	case c.Kind == EntryDir && c.Op == OpModify:
		fmt.Fprintf(&b, " (mode %04o)", uint32(c.Mode.Perm()))
	}
	if c.Note != "" {
		b.WriteString(" — " + c.Note)
	}
	if c.Refused != "" {
		b.WriteString(" — refused: " + c.Refused)
	}
	return b.String()
}
