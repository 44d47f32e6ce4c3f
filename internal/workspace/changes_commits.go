package workspace

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"io"
	"path"
	"strings"
)

// Commits are changes too. A command that commits in the sandbox adds
// objects to .git/objects; the owner's next checkout or reset brings the
// committed files onto the disk, so a hook, a workflow or an .envrc
// committed to history is graded like the file itself. The grader reads
// the new loose objects of the change set: every new commit's tree is
// walked through the trees the change set adds (unchanged subtrees are
// old objects and are not entered), and each new file's path is checked
// against the protected set, relative to the repository's worktree. A new
// pack of objects cannot be read this cheaply and is graded high.

// maxCommitObjects bounds the objects read to judge commits.
const maxCommitObjects = 20000

// commitChecks grades the commits a change set adds to the existing
// repositories above its paths.
func (g *grader) commitChecks() error {
	budget := maxCommitObjects
	for _, rp := range g.repos {
		if rp.gitdir == "" {
			continue
		}
		prefix := rp.gitdir + "/objects/"
		var commits []string
		for i := range g.changes {
			c := &g.changes[i]
			sub, ok := strings.CutPrefix(c.Rel, prefix)
			if !ok || c.Op != OpCreate || c.Kind != EntryFile {
				continue
			}
			if strings.HasPrefix(sub, "pack/") && strings.HasSuffix(sub, ".pack") {
				g.flag(GradeHigh, "adds a pack of git objects, whose commits homard does not read (a checkout could bring any file onto the disk)", c.Rel)
				continue
			}
			id := strings.ReplaceAll(sub, "/", "")
			if len(sub) < 3 || sub[2] != '/' || !isHex(id) {
				continue
			}
			if kind, _, ok := g.newObject(rp.gitdir, id); ok && kind == "commit" {
				commits = append(commits, id)
			}
		}
		for _, id := range commits {
			_, body, ok := g.newObject(rp.gitdir, id)
			if !ok {
				continue
			}
			tree := commitTree(body)
			if tree == "" {
				continue
			}
			if err := g.walkNewTree(rp, tree, "", &budget); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkNewTree checks the entries of tree (a new object) under prefix.
func (g *grader) walkNewTree(rp *repo, tree, prefix string, budget *int) error {
	if *budget--; *budget < 0 {
		g.flag(GradeHigh, "adds more git objects than homard reads to judge its commits", rp.gitdir)
		return nil
	}
	kind, body, ok := g.newObject(rp.gitdir, tree)
	if !ok || kind != "tree" {
		return nil
	}
	idLen := 20
	if len(tree) == 64 {
		idLen = 32
	}
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+1+idLen {
			return nil // malformed: git would refuse it too
		}
		mode, name := string(body[:sp]), string(body[sp+1:nul])
		id := hex.EncodeToString(body[nul+1 : nul+1+idLen])
		body = body[nul+1+idLen:]
		p := path.Join(prefix, name)
		if !g.isNewObject(rp.gitdir, id) {
			continue // an old object: already in the owner's history
		}
		if mode == "40000" {
			if err := g.walkNewTree(rp, id, p, budget); err != nil {
				return err
			}
			continue
		}
		rel := path.Join(rp.work, p)
		why := g.protectedWhy(rel)
		if _, _, git := gitSplit(p); git && why == "" {
			why = "adds repository metadata"
		}
		if mode == "160000" { // a submodule: its own repository
			why = "adds a submodule"
		}
		if why != "" {
			g.flag(GradeCritical, "commits to history what a checkout brings onto the disk: "+why, rel)
		}
	}
	return nil
}

// isNewObject reports whether object id is a loose object of the change
// set.
func (g *grader) isNewObject(gitdir, id string) bool {
	if len(id) < 4 {
		return false
	}
	_, ok := g.cs.Entry(path.Join(gitdir, "objects", id[:2], id[2:]))
	return ok
}

// newObject reads a loose object of the change set: its type and body.
func (g *grader) newObject(gitdir, id string) (kind string, body []byte, ok bool) {
	if len(id) < 4 || !isHex(id) {
		return "", nil, false
	}
	e, found := g.cs.Entry(path.Join(gitdir, "objects", id[:2], id[2:]))
	if !found || e.Kind != EntryFile {
		return "", nil, false
	}
	zr, err := zlib.NewReader(g.cs.Open(e))
	if err != nil {
		return "", nil, false
	}
	defer zr.Close()
	br := bufio.NewReader(io.LimitReader(zr, 16<<20))
	hdr, err := br.ReadString(0)
	if err != nil {
		return "", nil, false
	}
	kind, _, _ = strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	if kind != "commit" && kind != "tree" {
		return kind, nil, true // blobs and tags: the type is enough
	}
	body, err = io.ReadAll(br)
	if err != nil {
		return "", nil, false
	}
	return kind, body, true
}

// commitTree returns the tree id of a commit body.
func commitTree(body []byte) string {
	line, _, _ := bytes.Cut(body, []byte("\n"))
	id, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !isHex(string(id)) {
		return ""
	}
	return string(id)
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
