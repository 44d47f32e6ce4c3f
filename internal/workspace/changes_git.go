package workspace

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
)

// Repository metadata in change sets. Any path element git could take for
// ".git" starts repository metadata. Inside an existing .git folder only
// git's own data may change (gitAllowed); a new .git, gitdir file or .git
// symlink, and a folder shaped like a bare repository, are critical.

// gitLike reports whether a path element is, or could be taken by git on
// some file system for, ".git": any case, trailing dots and spaces
// (Windows drops them), an NTFS stream suffix (".git::$INDEX_ALLOCATION")
// and 8.3 short names ("GIT~1"). It matches conservatively.
func gitLike(e string) bool {
	if i := strings.IndexByte(e, ':'); i >= 0 {
		e = e[:i]
	}
	e = strings.TrimRight(e, ". ")
	le := strings.ToLower(e)
	if le == ".git" {
		return true
	}
	if rest, ok := strings.CutPrefix(le, "git~"); ok && rest != "" {
		return strings.Trim(rest, "0123456789") == ""
	}
	return false
}

// gitSplit finds the first git-like element of rel: it returns the path
// up to and including it and the rest under it ("" for the element
// itself); ok is false when there is none.
func gitSplit(rel string) (gitdir, sub string, ok bool) {
	els := strings.Split(rel, "/")
	for i, e := range els {
		if gitLike(e) {
			return strings.Join(els[:i+1], "/"), strings.Join(els[i+1:], "/"), true
		}
	}
	return "", "", false
}

// gitAllowed reports whether sub, a path inside an existing .git folder,
// is git's own data that ordinary work (add, commit, fetch, merge, gc)
// changes. Everything else is refused unasked: hooks/, config, info/
// (info/exclude too: it can hide planted files from git status),
// objects/info/alternates, worktrees/, modules/, rebase and sequencer
// todo files, commondir, gitdir, leftover *.lock files.
func gitAllowed(sub string) bool {
	first, rest, _ := strings.Cut(sub, "/")
	switch first {
	case "refs", "logs":
		return true
	case "objects":
		if info, ok := strings.CutPrefix(rest, "info/"); ok || rest == "info" {
			return info == "packs" || info == "commit-graph" || strings.HasPrefix(info, "commit-graphs/") || info == "commit-graphs"
		}
		return true
	}
	if rest != "" {
		return false
	}
	switch first {
	case "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE",
		"CHERRY_PICK_HEAD", "REVERT_HEAD", "COMMIT_EDITMSG", "index", "packed-refs", "description", "shallow":
		return true
	}
	return strings.HasPrefix(first, "sharedindex.") && !strings.HasSuffix(first, ".lock")
}

// repo is an existing repository whose worktree holds changed paths.
type repo struct {
	work   string // worktree folder, relative to the root
	gitdir string // its git folder relative to the root; "" when outside the root
	named  []namedPath
}

// namedPath is a file or folder the repository config names.
type namedPath struct {
	rel string
	key string // the config key, for the reason
}

// names returns the config key naming rel (or a folder above it), or "".
func (rp *repo) names(rel string) string {
	for _, n := range rp.named {
		if rel == n.rel || strings.HasPrefix(rel, n.rel+"/") || n.rel == "." {
			return n.key
		}
	}
	return ""
}

// findRepos finds the existing repositories above every changed path and
// reads what their config names.
func (g *grader) findRepos() error {
	seen := map[string]bool{}
	for _, c := range g.changes {
		for d := path.Dir(c.Rel); ; d = path.Dir(d) {
			if seen[d] {
				break
			}
			seen[d] = true
			if err := g.repoAt(d); err != nil {
				return err
			}
			if d == "." {
				break
			}
		}
	}
	return nil
}

// repoAt records the repository whose worktree is dir, if dir/.git exists.
func (g *grader) repoAt(dir string) error {
	dotgit := path.Join(dir, ".git")
	st, err := statBeneath(g.dirfd, dotgit)
	if err != nil || st == nil {
		return nil // none, or behind a symlink: nothing to read
	}
	rp := &repo{work: dir}
	switch st.kind {
	case EntryDir:
		rp.gitdir = dotgit
	case EntryFile:
		b, err := readBeneath(g.dirfd, dotgit, 4096)
		if err != nil {
			return nil
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if ok {
			rp.gitdir = g.inRoot(strings.TrimSpace(target), dir)
		}
	}
	g.repos[dir] = rp
	g.readHookManagers(rp)
	if rp.gitdir == "" {
		return nil
	}
	cfgDirs := []string{rp.gitdir}
	if b, _ := readBeneath(g.dirfd, path.Join(rp.gitdir, "commondir"), 4096); b != nil {
		if common := g.inRoot(strings.TrimSpace(string(b)), rp.gitdir); common != "" {
			cfgDirs = append(cfgDirs, common)
		}
	}
	for _, d := range cfgDirs {
		g.readConfig(rp, path.Join(d, "config"), 0)
		g.readConfig(rp, path.Join(d, "config.worktree"), 0) // extensions.worktreeConfig
	}
	g.readOwnerConfigs(rp)
	return nil
}

// inRoot turns a path written in a git file (absolute, or relative to
// base) into a clean path relative to the root; "" when it is outside the
// root or in the home folder.
func (g *grader) inRoot(p, base string) string {
	switch {
	case p == "" || strings.HasPrefix(p, "~"):
		return ""
	case strings.HasPrefix(p, "/"):
		for _, b := range []string{g.r.real, g.r.path} {
			if within(b, path.Clean(p)) {
				rel := strings.TrimPrefix(strings.TrimPrefix(path.Clean(p), b), "/")
				if rel == "" {
					return "."
				}
				return rel
			}
		}
		return ""
	}
	rel := path.Join(base, p)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return rel
}

// Config keys that name files or folders git reads or runs.
var configPathKeys = map[string]string{
	"include.path":        "include.path",
	"core.hookspath":      "core.hooksPath",
	"core.attributesfile": "core.attributesFile",
	"core.excludesfile":   "core.excludesFile",
	"core.fsmonitor":      "core.fsmonitor",
	"core.worktree":       "core.worktree",
}

// readConfig reads a repository config file and records the paths it
// names; include targets inside the root are read too, a few levels deep.
func (g *grader) readConfig(rp *repo, file string, depth int) {
	if depth > 5 {
		return
	}
	b, err := readBeneath(g.dirfd, file, 1<<20)
	if err != nil || b == nil {
		return
	}
	g.configNames(rp, b, path.Dir(file), depth)
}

// readOwnerConfigs applies the owner's own git configs (GradeOptions.
// GitConfigs: global and system files outside the roots, which git reads
// in every repository) to rp: a hooks path they set, relative to the
// worktree or absolute into the root, names files whoever writes them.
func (g *grader) readOwnerConfigs(rp *repo) {
	for _, f := range g.o.GitConfigs {
		b, err := readFileLimited(f, 1<<20)
		if err != nil || b == nil {
			continue
		}
		g.configNames(rp, b, path.Dir(f), 0)
	}
}

// configNames records the paths a config's keys name; dir is the folder
// of the config file (include paths are relative to it).
func (g *grader) configNames(rp *repo, b []byte, dir string, depth int) {
	for _, kv := range parseGitConfig(string(b)) {
		section, key := kv.section, kv.key
		name, ok := configPathKeys[section+"."+key]
		if section == "includeif" && key == "path" {
			name, ok = "includeIf.path", true
		}
		if !ok {
			continue
		}
		v := kv.value
		if key == "fsmonitor" || key == "worktree" {
			switch strings.ToLower(v) {
			case "", "true", "false", "yes", "no", "on", "off", "1", "0":
				continue
			}
		}
		base := rp.work
		if section == "include" || section == "includeif" {
			base = dir
		}
		rel := g.inRoot(v, base)
		if rel == "" {
			continue
		}
		if key == "worktree" {
			continue // the worktree is where the owner works, not code
		}
		rp.named = append(rp.named, namedPath{rel: rel, key: name})
		if section == "include" || section == "includeif" {
			g.readConfig(rp, rel, depth+1)
		}
	}
}

// configValue is one key of a git config file.
type configValue struct {
	section string // lower case, without the subsection
	key     string // lower case
	value   string
}

// parseGitConfig reads git's config syntax well enough to find keys:
// sections with or without a subsection, comments, quoted values, escapes
// and continuation lines. What it cannot read it skips; it never fails.
func parseGitConfig(text string) []configValue {
	var out []configValue
	section := ""
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + strings.TrimSpace(lines[i])
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			head := strings.TrimSpace(line[1:end])
			name, _, _ := strings.Cut(head, " ")
			name, _, _ = strings.Cut(name, ".")
			name, _, _ = strings.Cut(name, "\t")
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		key, value, hasValue := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !hasValue {
			out = append(out, configValue{section: section, key: key, value: "true"})
			continue
		}
		out = append(out, configValue{section: section, key: key, value: configString(strings.TrimSpace(value))})
	}
	return out
}

// configString unquotes a config value and drops a trailing comment.
func configString(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// gitChecks grades the changes to repository metadata: new .git entries,
// bare-repository shapes, changes outside git's own data, and ref updates.
func (g *grader) gitChecks() error {
	dirs := map[string]*realStat{}
	refsTouched := map[string]bool{}
	for i := range g.changes {
		c := &g.changes[i]
		if gitdir, sub, ok := gitSplit(c.Rel); ok {
			st, seen := dirs[gitdir]
			if !seen {
				var err error
				if st, err = statBeneath(g.dirfd, gitdir); err != nil {
					st = nil
				}
				dirs[gitdir] = st
			}
			switch {
			case st == nil || st.kind != EntryDir && c.Op != OpDelete:
				g.flag(GradeCritical, "creates repository metadata (a .git folder, gitdir file or .git symlink, in any spelling git accepts)", gitdir)
			case st.kind != EntryDir:
				g.flag(GradeCritical, "deletes a gitdir file or .git symlink", gitdir)
			case sub == "":
				g.flag(GradeCritical, "deletes or changes a repository's .git folder itself", gitdir)
			case !gitAllowed(sub):
				g.flag(GradeCritical, "changes repository metadata outside git's own data (hooks, config, info/, alternates, worktrees, modules, todo files)", c.Rel)
			case sub == "HEAD" || sub == "packed-refs" || strings.HasPrefix(sub, "refs/"):
				refsTouched[gitdir] = true
			}
		}
	}
	for _, gitdir := range slices.Sorted(maps.Keys(refsTouched)) {
		g.refsSeen[gitdir] = true
		if err := g.refChecks(gitdir); err != nil {
			return err
		}
	}
	return nil
}

// readFileLimited reads a file outside the roots (the owner's git config),
// up to max bytes; a missing file is (nil, nil).
func readFileLimited(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}
