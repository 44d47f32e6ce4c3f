package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
)

// walkMaxVisits caps how many entries one glob or grep visits, so a huge
// tree cannot stall a turn.
const walkMaxVisits = 100_000

// errStop ends a walk early without an error.
var errStop = errors.New("stop walking")

// walk visits the tree under base in fsys (workspace.Workspace.FS, which
// leaves homard's own files out and refuses them) in lexical order,
// calling fn with each entry's path relative to base. fs.WalkDir never
// follows symlinked directories. Directories named .git are skipped unless
// skipGit is false; directories deeper than maxDepth elements below base
// are not entered (maxDepth < 0: no limit). Entries that cannot be read
// are skipped. It reports whether the visit budget ran out.
func walk(ctx context.Context, fsys fs.FS, base string, skipGit bool, maxDepth int, fn func(rel string, d fs.DirEntry) error) (exhausted bool, err error) {
	visits := 0
	err = fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base {
				return err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == base {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		visits++
		if visits > walkMaxVisits {
			exhausted = true
			return errStop
		}
		rel := p
		if base != "." {
			rel = strings.TrimPrefix(p, base+"/")
		}
		if d.IsDir() && skipGit && strings.EqualFold(d.Name(), ".git") {
			return fs.SkipDir
		}
		if err := fn(rel, d); err != nil {
			return err
		}
		if d.IsDir() && maxDepth >= 0 && strings.Count(rel, "/")+1 >= maxDepth {
			return fs.SkipDir
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return exhausted, err
}

// join is path.Join that keeps "." for the root.
func join(base, rel string) string {
	if base == "." {
		return rel
	}
	return path.Join(base, rel)
}
