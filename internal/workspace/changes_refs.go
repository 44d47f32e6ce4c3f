package workspace

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"
)

// Ref updates in a change set: a branch or tag deleted, or moved to a
// commit not proven to descend from the old one (its parents walked
// through the loose objects of the change set and of the real
// repository), and a detached HEAD, are high.

// refChecks grades the ref changes of the existing git folder gitdir.
func (g *grader) refChecks(gitdir string) error {
	loose := map[string]*Change{} // ref name -> change of its loose file
	var packed, head *Change
	for i := range g.changes {
		c := &g.changes[i]
		sub, ok := strings.CutPrefix(c.Rel, gitdir+"/")
		if !ok || c.Kind == EntryDir {
			continue
		}
		switch {
		case sub == "HEAD":
			head = c
		case sub == "packed-refs":
			packed = c
		case strings.HasPrefix(sub, "refs/"):
			loose[sub] = c
		}
	}
	if head != nil {
		if head.Op == OpDelete {
			g.flag(GradeHigh, "deletes HEAD", head.Rel)
		} else if b, err := g.newContent(head); err == nil && headOutsideRefs(b) {
			g.flag(GradeCritical, "points HEAD at a file outside refs/", head.Rel)
		} else if err == nil && !bytes.HasPrefix(b, []byte("ref: ")) {
			g.flag(GradeHigh, "detaches HEAD (it no longer names a branch)", head.Rel)
		}
	}
	oldPacked, err := readBeneath(g.dirfd, path.Join(gitdir, "packed-refs"), 64<<20)
	if err != nil {
		return err
	}
	oldP, newP := parsePackedRefs(oldPacked), parsePackedRefs(oldPacked)
	names := map[string]bool{}
	for n := range loose {
		names[n] = true
	}
	if packed != nil {
		newP = map[string]string{}
		if packed.Op != OpDelete {
			b, err := g.newContent(packed)
			if err != nil {
				return err
			}
			newP = parsePackedRefs(b)
		}
		for n := range oldP {
			names[n] = true
		}
		for n := range newP {
			names[n] = true
		}
	}
	for name := range names {
		if !strings.HasPrefix(name, "refs/heads/") && !strings.HasPrefix(name, "refs/tags/") {
			continue // remote-tracking refs, stash, notes: fetch moves them freely
		}
		oldV, newV := oldP[name], newP[name]
		rel := path.Join(gitdir, name)
		b, err := readBeneath(g.dirfd, rel, 4096)
		if err != nil {
			continue
		}
		if v := strings.TrimSpace(string(b)); v != "" {
			oldV = v
			if _, changed := loose[name]; !changed {
				newV = v
			}
		}
		if c, ok := loose[name]; ok && c.Op != OpDelete {
			b, err := g.newContent(c)
			if err != nil {
				return err
			}
			newV = strings.TrimSpace(string(b))
		}
		switch {
		case oldV == "" || oldV == newV || strings.HasPrefix(oldV, "ref:") || strings.HasPrefix(newV, "ref:"):
		case newV == "":
			g.flag(GradeHigh, "deletes a branch or tag", rel)
		default:
			ok, err := g.descends(gitdir, newV, oldV)
			if err != nil {
				return err
			}
			if !ok {
				g.flag(GradeHigh, "moves a branch or tag to a commit not proven to descend from the old one", rel)
			}
		}
	}
	return nil
}

// newContent reads the new content of a small file change.
func (g *grader) newContent(c *Change) ([]byte, error) {
	if c.entry < 0 {
		return nil, fmt.Errorf("%s: no new content", c.Rel)
	}
	return g.cs.ReadContent(g.cs.Entries[c.entry], 64<<20)
}

// parsePackedRefs reads "<hex> <name>" lines; peeled ("^") and comment
// lines are skipped.
func parsePackedRefs(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		if id, name, ok := strings.Cut(line, " "); ok {
			out[name] = id
		}
	}
	return out
}

// descends reports whether commit from reaches commit to through parent
// links, walking at most MaxRefWalk commits whose loose objects are in
// the change set or the real repository. Not reaching it is "not proven".
func (g *grader) descends(gitdir, from, to string) (bool, error) {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for n := 0; len(queue) > 0 && n < g.o.MaxRefWalk; n++ {
		id := queue[0]
		queue = queue[1:]
		if id == to {
			return true, nil
		}
		parents, ok := g.commitParents(gitdir, id)
		if !ok {
			continue
		}
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// commitParents reads the parent ids of a loose commit object; ok is false
// when the object is not a readable loose commit.
func (g *grader) commitParents(gitdir, id string) ([]string, bool) {
	if len(id) < 4 || len(id) > 64 {
		return nil, false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return nil, false
	}
	rel := path.Join(gitdir, "objects", id[:2], id[2:])
	var raw io.Reader
	if e, ok := g.cs.Entry(rel); ok && e.Kind == EntryFile {
		raw = g.cs.Open(e)
	} else {
		f, err := openFileBeneath(g.dirfd, rel)
		if err != nil {
			return nil, false
		}
		defer f.Close()
		raw = f
	}
	zr, err := zlib.NewReader(raw)
	if err != nil {
		return nil, false
	}
	defer zr.Close()
	return parseCommitParents(io.LimitReader(zr, 1<<20))
}

// parseCommitParents reads a loose object's "commit <size>\x00" header and
// the parent lines of its header block.
func parseCommitParents(r io.Reader) ([]string, bool) {
	br := bufio.NewReader(r)
	hdr, err := br.ReadString(0)
	if err != nil || !strings.HasPrefix(hdr, "commit ") {
		return nil, false
	}
	var parents []string
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return parents, true
		}
		if p, ok := strings.CutPrefix(line, "parent "); ok {
			parents = append(parents, p)
		}
		if err != nil {
			return parents, true
		}
	}
}
