package workspace

import (
	"bytes"
	"path"
	"strings"
)

// Repository shapes judged on the tree as it will be. git opens a folder
// as a repository when it holds HEAD, objects/ and refs/ (or HEAD and a
// commondir file, as a linked worktree's git folder does), whatever the
// folder is called: a bare repository such as site.git is as much a
// repository as .git, and one assembled over several steps — HEAD written
// by one tool, objects/ and refs/ made by a command later — is one as soon
// as the last piece lands. So every change is checked against the folders
// above it as they will be after the change set applies: a folder that
// becomes repository-shaped is a new repository (critical), and a change
// inside a folder that already is one is judged like a change inside .git
// (only git's own data may change unasked).

// shapeNames are the entries whose presence makes a folder a repository.
var shapeNames = []string{"HEAD", "objects", "refs", "commondir"}

// shape is what a folder holds of a repository's entries, now and after
// the change set.
type shape struct {
	before, after bool // repository-shaped
}

// isShape reports whether the presence map (by shapeNames) makes a
// repository: HEAD with objects and refs, or HEAD with commondir.
func isShape(has map[string]bool) bool {
	return has["HEAD"] && (has["objects"] && has["refs"] || has["commondir"])
}

// shapeOf returns dir's repository shape, cached per grading.
func (g *grader) shapeOf(dir string) shape {
	if s, ok := g.shapes[dir]; ok {
		return s
	}
	before, after := map[string]bool{}, map[string]bool{}
	for _, n := range shapeNames {
		rel := path.Join(dir, n)
		st, err := statBeneath(g.dirfd, rel)
		before[n] = err == nil && st != nil
		after[n] = g.existsAfter(rel, before[n])
	}
	s := shape{before: isShape(before), after: isShape(after)}
	g.shapes[dir] = s
	return s
}

// existsAfter reports whether rel exists once the change set is applied,
// given whether it exists now: the last change at rel decides (a deletion
// comes before a creation at the same path); without one, a deletion of a
// folder above it removes it.
func (g *grader) existsAfter(rel string, now bool) bool {
	if g.lastOp == nil {
		g.lastOp = make(map[string]Op, len(g.changes))
		for _, c := range g.changes {
			g.lastOp[c.Rel] = c.Op
		}
	}
	if op, ok := g.lastOp[rel]; ok {
		return op != OpDelete
	}
	if !now {
		return false
	}
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		if g.lastOp[d] == OpDelete {
			return false
		}
	}
	return true
}

// repoAbove returns the nearest folder at or above dir (the root
// included) that is repository-shaped before or after the change set,
// outside .git-like folders (judged by gitChecks), and its shape.
func (g *grader) repoAbove(dir string) (string, shape, bool) {
	for d := dir; ; d = path.Dir(d) {
		if _, _, inGit := gitSplit(d); !inGit {
			if s := g.shapeOf(d); s.before || s.after {
				return d, s, true
			}
		}
		if d == "." {
			return "", shape{}, false
		}
	}
}

// shapeChecks grades changes against the repository shapes of the folders
// above them.
func (g *grader) shapeChecks() error {
	for i := range g.changes {
		c := &g.changes[i]
		if _, _, inGit := gitSplit(c.Rel); inGit {
			continue
		}
		repoDir, s, ok := g.repoAbove(path.Dir(c.Rel))
		if !ok {
			continue
		}
		sub := strings.TrimPrefix(c.Rel, repoDir+"/")
		if repoDir == "." {
			sub = c.Rel
		}
		switch {
		case !s.before:
			g.flag(GradeCritical, "creates a git repository (a folder with HEAD, objects/ and refs/, completed by this change or with what is already there): git would open it and run its hooks and config", repoDir)
		case !s.after:
			g.flag(GradeCritical, "takes apart an existing git repository", repoDir)
		case !gitAllowed(sub):
			g.flag(GradeCritical, "changes a repository's metadata outside git's own data (hooks, config, info/, alternates, worktrees, modules, todo files) in a bare or linked repository", c.Rel)
		case sub == "HEAD" || sub == "packed-refs" || strings.HasPrefix(sub, "refs/"):
			if !g.refsSeen[repoDir] {
				g.refsSeen[repoDir] = true
				if err := g.refChecks(repoDir); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// headOutsideRefs reports whether a HEAD file's content names a symbolic
// ref outside refs/ (git would follow it anywhere in the git folder).
func headOutsideRefs(b []byte) bool {
	target, ok := bytes.CutPrefix(b, []byte("ref:"))
	if !ok {
		return false
	}
	t := strings.TrimSpace(string(target))
	return !strings.HasPrefix(t, "refs/") || strings.Contains(t, "..")
}
