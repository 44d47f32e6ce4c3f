package workspace

import (
	"path"
	"strings"
)

// linkProblem says why a symlink at rel with the given target may not
// exist after the change, or "": an absolute target, a target outside the
// root, or one that reaches the protected set (homard's own files,
// repository metadata, the files its config names, files the owner's tools
// execute, sensitive files). The target is followed through the tree as it
// will be: symlinks of the change set first, then the real root's.
func (g *grader) linkProblem(rel, target string) (string, error) {
	if strings.HasPrefix(target, "/") {
		return "has an absolute target", nil
	}
	cur := path.Dir(rel)
	todo := strings.Split(target, "/")
	for links := 0; len(todo) > 0; {
		e := todo[0]
		todo = todo[1:]
		switch e {
		case "", ".":
			continue
		case "..":
			if cur == "." {
				return "leads outside the workspace root", nil
			}
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, e)
		if why := g.protectedTarget(next); why != "" {
			return "points into " + why, nil
		}
		var linkTarget string
		if en, ok := g.cs.Entry(next); ok {
			if en.Kind == EntryWhiteout {
				cur = next // gone: the rest is only text
				continue
			}
			if en.Kind == EntrySymlink {
				linkTarget = en.Target
			}
		} else {
			st, err := statBeneath(g.dirfd, next)
			if err != nil {
				return "", err
			}
			if st != nil && st.kind == EntrySymlink {
				linkTarget = st.target
			}
		}
		if linkTarget == "" {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "has too many levels of symlinks", nil
		}
		if strings.HasPrefix(linkTarget, "/") {
			return "leads through an absolute symlink", nil
		}
		todo = append(strings.Split(linkTarget, "/"), todo...)
	}
	return "", nil
}

// protectedTarget says which part of the protected set rel is in, or "".
func (g *grader) protectedTarget(rel string) string {
	if g.r.protectedRel(rel) {
		return "homard's own data"
	}
	if _, _, ok := gitSplit(rel); ok {
		return "repository metadata"
	}
	if why := g.protectedWhy(rel); why != "" {
		return "the protected set"
	}
	return ""
}
