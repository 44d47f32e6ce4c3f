package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Grade is how much a change set may do unasked. The caller maps it to
// its own risk scale.
type Grade int

// Grades, in increasing order.
const (
	// GradeLow: nothing changes.
	GradeLow Grade = iota
	// GradeMedium: ordinary creates, overwrites and deletes inside the
	// root, where the plan said the command writes.
	GradeMedium
	// GradeHigh: many or large changes, changes outside what the plan
	// said, a branch deleted or moved to a non-descendant, HEAD detached,
	// checkpoints that do not fit without pruning.
	GradeHigh
	// GradeCritical: the protected set (repository metadata and the files
	// its config names, files the owner's tools execute, sensitive files,
	// homard's own files), setuid bits, devices, pipes, sockets, unsafe
	// names or symlinks. Never applied without the owner's approval.
	GradeCritical
)

var gradeNames = [...]string{GradeLow: "low", GradeMedium: "medium", GradeHigh: "high", GradeCritical: "critical"}

func (g Grade) String() string { return enumName(gradeNames[:], g, "Grade") }

// Reason is one finding of Grade, naming the paths it is about.
type Reason struct {
	Grade Grade
	Text  string
	Paths []string
	// Refused: the paths are never applied, even when approved.
	Refused bool
}

func (r Reason) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", r.Grade, r.Text)
	if r.Refused {
		b.WriteString(" (never applied)")
	}
	const show = 10
	for i, p := range r.Paths {
		if i == show {
			fmt.Fprintf(&b, " … and %d more", len(r.Paths)-show)
			break
		}
		fmt.Fprintf(&b, " %q", p)
	}
	return b.String()
}

// RunStart returns the time to pass as a command's start (GradeOptions.
// Since, ApplyChanges' since); call it before the command starts. It
// reads the fine clock, then waits (at most a tick, 1–4 ms) until the
// kernel's coarse clock — which stamps most file changes — has caught up
// with it. A file changed before the call carries a time before it (a
// fine-grained, multigrain timestamp is never later than the moment it
// was taken); a file changed after the wait carries a time at or after it
// (coarse stamps no longer lag behind it). A change inside the wait lands
// before the command starts, so the command sees it: not a conflict, and
// no slack is needed either way — a file written just before a command is
// not a false conflict.
func RunStart() time.Time {
	start := time.Now()
	for i := 0; i < 1000; i++ {
		var ts unix.Timespec
		if err := unix.ClockGettime(clockCoarse, &ts); err != nil {
			break
		}
		if !time.Unix(ts.Unix()).Before(start) {
			return start
		}
		time.Sleep(200 * time.Microsecond)
	}
	return start.Add(-time.Second) // the clock is odd: err on reporting conflicts
}

// GradeOptions say what the plan expected and where the limits are. Zero
// fields take defaults.
type GradeOptions struct {
	// Expected lists what the catalog says the command writes: relative
	// paths, or folder prefixes ending in "/". A change elsewhere is high.
	Expected []string
	// RunsCode: the command runs code, so with no Expected anything in the
	// root may change (medium). Without it, an empty Expected means the
	// command should change nothing, and any change is high.
	RunsCode bool
	// MaxDeletes is the number of deleted files above which the change set
	// is high. Zero means 100.
	MaxDeletes int
	// MaxBytes is the new content size above which it is high. Zero means
	// 64 MiB.
	MaxBytes int64
	// MaxFiles is the number of created or modified files above which it
	// is high. Zero means 1000.
	MaxFiles int
	// HostTools lists files the owner's host tools execute or obey, as
	// patterns of path elements matched at any depth, case-insensitively
	// ("dir/" for a folder and all under it, globs allowed). Nil means
	// DefaultHostTools; an empty non-nil list means none.
	HostTools []string
	// Sensitive reports sensitive files (keys, .env...) by relative path;
	// nil means none.
	Sensitive func(rel string) bool
	// Since is the start of the command's run; a file the change set
	// replaces or deletes that changed at or after it is a conflict. Zero
	// means no conflict check.
	Since time.Time
	// GitConfigs are the owner's own git config files outside the roots
	// (global and system: ~/.gitconfig, ~/.config/git/config,
	// /etc/gitconfig), which git reads in every repository: a hooks path
	// they set names files in a root's repositories too. Nil means none.
	GitConfigs []string
	// MaxRefWalk bounds the commits walked to prove a branch update is a
	// fast-forward. Zero means 10000.
	MaxRefWalk int
}

// DefaultHostTools are the files the owner's own tools execute or obey
// when the owner opens, enters, commits in or pushes the folder: git hook
// managers, direnv and version managers, editors' and IDEs' task and
// launch files, dev containers, CI definitions (they run with the
// repository's secrets after a push), package managers' rc files and
// plugins, and agents' settings that run commands. A write to one is
// critical whoever writes it. Makefile and other build files are not here:
// the owner reviews them as code and building is what commands are for;
// they are marked instead (DefaultBuildFiles). docs/RULES.md lists both.
var DefaultHostTools = []string{
	// Git hook managers and the hooks they install.
	".husky/", ".lefthook*", "lefthook.yml", "lefthook.yaml", "lefthook-local.yml", "lefthook-local.yaml",
	".pre-commit-config.yaml", ".pre-commit-config.yml", ".lintstagedrc*", "lint-staged.config.*",
	// Shells and version managers that run code on entering the folder.
	".envrc", ".mise.toml", "mise.toml", ".mise.local.toml", "mise.local.toml", ".mise/",
	".config/mise/", ".tool-versions",
	// Editors and IDEs: tasks, launch configurations, settings that name
	// programs, recommended extensions; dev containers.
	".vscode/", "*.code-workspace", ".idea/", ".zed/", ".devcontainer/", ".devcontainer.json",
	// CI: runs with the repository's secrets after a push.
	".github/workflows/", ".github/actions/", ".gitlab-ci.yml", ".gitlab-ci.yaml", ".circleci/", ".travis.yml",
	"azure-pipelines.yml", "bitbucket-pipelines.yml",
	// Package managers: rc files that name scripts, registries and
	// binaries, and the code they load.
	".yarnrc", ".yarnrc.yml", ".yarn/plugins/", ".yarn/releases/", ".pnpmfile.cjs", ".pnpmfile.mjs", ".npmrc",
	".cargo/config.toml", ".cargo/config",
	// Other version control systems' config.
	".hg/hgrc",
	// Agents that run commands from their project settings.
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".cursor/mcp.json", ".gemini/settings.json",
}

// DefaultBuildFiles are files that run when the owner builds: ordinary
// writes (the owner reviews them as code), but every card and change list
// marks them "runs when you build". A .go file whose new content has a
// //go:generate line is marked too.
var DefaultBuildFiles = []string{
	"Makefile", "makefile", "GNUmakefile", "*.mk", "package.json", "setup.py", "setup.cfg", "pyproject.toml",
	"Cargo.toml", "build.rs", "CMakeLists.txt", "*.cmake", "build.gradle", "build.gradle.kts", "settings.gradle",
	"settings.gradle.kts", "pom.xml", "Rakefile", "Justfile", "justfile", "Taskfile.yml", "Taskfile.yaml",
	"meson.build", "BUILD", "BUILD.bazel", "WORKSPACE", "MODULE.bazel", "go.mod", "conftest.py", "noxfile.py", "tox.ini",
}

// RunsWhenBuilt is the note on a change to a build file.
const RunsWhenBuilt = "runs when you build"

func (o GradeOptions) withDefaults() GradeOptions {
	if o.MaxDeletes <= 0 {
		o.MaxDeletes = 100
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = 1000
	}
	if o.HostTools == nil {
		o.HostTools = DefaultHostTools
	}
	if o.MaxRefWalk <= 0 {
		o.MaxRefWalk = 10000
	}
	return o
}

// Graded is a change set compared with the real root and graded.
type Graded struct {
	Root    string
	Grade   Grade
	Reasons []Reason
	Changes []Change
	// Conflicts are paths changed in the real root since Options.Since;
	// a change set with conflicts is not applied.
	Conflicts []string
	// Counts and sizes.
	Created, Modified, Deleted int
	Bytes                      int64 // new content written
	CheckpointBytes            int64 // old content to keep
	// Digest identifies the list of changes (hex SHA-256), so that what
	// is applied is what the owner saw.
	Digest string
}

// Refused reports whether any change is never applied.
func (g *Graded) Refused() bool {
	return slices.ContainsFunc(g.Changes, func(c Change) bool { return c.Refused != "" })
}

// Paths lists the changes one per line, for a preview.
func (g *Graded) Paths() []string {
	out := make([]string, len(g.Changes))
	for i, c := range g.Changes {
		out[i] = c.String()
	}
	return out
}

// Grade compares cs with the real root rootName and grades it. It reads
// the real root (never following a symlink), changes nothing, and may be
// called again at any time: ApplyChanges grades again before it applies.
func (w *Workspace) Grade(rootName string, cs *ChangeSet, o GradeOptions) (*Graded, error) {
	r, err := w.root(rootName)
	if err != nil {
		return nil, err
	}
	dirfd, err := r.rootFd()
	if err != nil {
		return nil, err
	}
	defer closeFd(dirfd)
	return w.grade(r, dirfd, cs, o)
}

func (w *Workspace) grade(r *root, dirfd int, cs *ChangeSet, o GradeOptions) (*Graded, error) {
	o = o.withDefaults()
	changes, err := resolve(r, dirfd, cs)
	if err != nil {
		return nil, fmt.Errorf("grade changes: %w", err)
	}
	g := &grader{
		w: w, r: r, dirfd: dirfd, cs: cs, o: o, changes: changes,
		reasons: map[reasonKey][]string{}, repos: map[string]*repo{},
		shapes: map[string]shape{}, refsSeen: map[string]bool{},
	}
	g.out = &Graded{Root: r.name, Changes: changes}
	if err := g.run(); err != nil {
		return nil, fmt.Errorf("grade changes: %w", err)
	}
	return g.out, nil
}

type reasonKey struct {
	grade   Grade
	refused bool
	text    string
}

// grader holds the state of one grading.
type grader struct {
	w       *Workspace
	r       *root
	dirfd   int
	cs      *ChangeSet
	o       GradeOptions
	changes []Change
	out     *Graded
	reasons map[reasonKey][]string
	order   []reasonKey
	repos   map[string]*repo // by worktree folder ("." for the root)
	// shapes caches the repository shape of folders (changes_repo.go);
	// lastOp is the last change at each path; refsSeen are the git
	// folders whose ref updates were checked.
	shapes   map[string]shape
	lastOp   map[string]Op
	refsSeen map[string]bool
}

// flag records a finding about rel.
func (g *grader) flag(grade Grade, text, rel string) {
	k := reasonKey{grade: grade, text: text}
	g.note(k, rel)
}

// refuse records a finding that keeps change i from ever being applied.
func (g *grader) refuse(i int, text string) {
	c := &g.changes[i]
	if c.Refused == "" {
		c.Refused = text
	}
	g.note(reasonKey{grade: GradeCritical, refused: true, text: text}, c.Rel)
}

func (g *grader) note(k reasonKey, rel string) {
	ps, ok := g.reasons[k]
	if !ok {
		g.order = append(g.order, k)
	}
	if !slices.Contains(ps, rel) {
		g.reasons[k] = append(ps, rel)
	}
}

func (g *grader) run() error {
	if err := g.findRepos(); err != nil {
		return err
	}
	for i := range g.changes {
		if err := g.one(i); err != nil {
			return err
		}
	}
	if err := g.gitChecks(); err != nil {
		return err
	}
	if err := g.shapeChecks(); err != nil {
		return err
	}
	if err := g.commitChecks(); err != nil {
		return err
	}
	g.totals()
	if err := g.room(); err != nil {
		return err
	}
	return g.finish()
}

// one grades change i on its own.
func (g *grader) one(i int) error {
	c := &g.changes[i]
	if bad := badName(c.Rel); bad != "" {
		g.refuse(i, "the name has "+bad)
	}
	if c.Kind.special() {
		g.refuse(i, fmt.Sprintf("it is a %s; homard applies only files, folders and symlinks", c.Kind))
	}
	if g.r.protectedRel(c.Rel) {
		g.refuse(i, "it is homard's own data")
	}
	if c.setid {
		g.flag(GradeCritical, "sets a setuid or setgid bit (dropped when applied)", c.Rel)
	}
	if c.old != nil && c.old.kind == EntrySymlink {
		if why, err := g.linkProblem(c.Rel, c.old.target); err != nil {
			return err
		} else if why != "" {
			g.flag(GradeCritical, "replaces the owner's symlink that "+why, c.Rel)
		}
	}
	if c.Kind == EntrySymlink && c.Op != OpDelete {
		why, err := g.linkProblem(c.Rel, c.Target)
		if err != nil {
			return err
		}
		if why != "" {
			g.refuse(i, "a symlink that "+why)
		}
	}
	if why := g.protectedWhy(c.Rel); why != "" {
		g.flag(GradeCritical, why, c.Rel)
	}
	if !g.expected(c) {
		g.flag(GradeHigh, "changes a path the command was not expected to write", c.Rel)
	}
	if g.buildFile(c) {
		c.Note = RunsWhenBuilt
		g.flag(GradeMedium, "changes a build file: it "+RunsWhenBuilt, c.Rel)
	}
	if c.Op == OpModify && c.Kind == EntryFile && c.Size == 0 && c.old != nil && c.old.size > 0 {
		g.flag(GradeCritical, "empties a file that had content (graded like truncate)", c.Rel)
	}
	if since := g.o.Since; !since.IsZero() && c.old != nil && c.old.kind != EntryDir &&
		(!c.old.mtime.Before(since) || !c.old.ctime.Before(since)) {
		g.out.Conflicts = append(g.out.Conflicts, c.Rel)
	}
	return nil
}

// protectedWhy says why rel is in the protected set outside repository
// metadata (which gitChecks judges), or "".
func (g *grader) protectedWhy(rel string) string {
	if g.o.Sensitive != nil && g.o.Sensitive(rel) {
		return "touches a sensitive file"
	}
	if p := matchHostTool(g.o.HostTools, rel); p != "" {
		return fmt.Sprintf("touches a file the owner's tools execute (%s)", p)
	}
	for _, rp := range g.repos {
		if n := rp.names(rel); n != "" {
			if by, ok := strings.CutPrefix(n, "run by "); ok {
				return fmt.Sprintf("touches a script the owner's hook manager runs (named in %s)", by)
			}
			return fmt.Sprintf("touches a file the repository config names (%s)", n)
		}
	}
	return ""
}

// buildFile reports whether c writes a file that runs when the owner
// builds: a DefaultBuildFiles name, or Go source with a go:generate line.
func (g *grader) buildFile(c *Change) bool {
	if c.Op == OpDelete || c.Kind != EntryFile {
		return false
	}
	if matchHostTool(DefaultBuildFiles, path.Base(c.Rel)) != "" {
		return true
	}
	if strings.HasSuffix(c.Rel, ".go") && c.Size <= 4<<20 {
		b, err := g.newContent(c)
		return err == nil && bytes.Contains(b, []byte("//go:generate"))
	}
	return false
}

// expected reports whether the plan said the command writes c.Rel. A
// folder created on the way to an expected path is expected too.
func (g *grader) expected(c *Change) bool {
	if len(g.o.Expected) == 0 {
		return g.o.RunsCode
	}
	for _, e := range g.o.Expected {
		e = strings.TrimSuffix(strings.TrimPrefix(e, "./"), "/")
		if e == "" || e == "." || c.Rel == e || strings.HasPrefix(c.Rel, e+"/") {
			return true
		}
		if c.Op == OpCreate && c.Kind == EntryDir && strings.HasPrefix(e, c.Rel+"/") {
			return true
		}
	}
	return false
}

// totals counts the changes and grades their number and size.
func (g *grader) totals() {
	var files, deletes int
	for _, c := range g.changes {
		switch c.Op {
		case OpCreate:
			g.out.Created++
		case OpModify:
			g.out.Modified++
		case OpDelete:
			g.out.Deleted++
			if c.Kind != EntryDir {
				deletes++
			}
		}
		if c.Op != OpDelete && c.Kind == EntryFile {
			files++
			g.out.Bytes += c.Size
		}
		if c.Op != OpCreate && c.old != nil && c.old.kind == EntryFile {
			g.out.CheckpointBytes += c.old.size
		}
	}
	if deletes > g.o.MaxDeletes {
		g.flag(GradeHigh, fmt.Sprintf("deletes %d files (more than %d)", deletes, g.o.MaxDeletes), ".")
	}
	if files > g.o.MaxFiles {
		g.flag(GradeHigh, fmt.Sprintf("writes %d files (more than %d)", files, g.o.MaxFiles), ".")
	}
	if g.out.Bytes > g.o.MaxBytes {
		g.flag(GradeHigh, fmt.Sprintf("writes %d bytes (more than %d)", g.out.Bytes, g.o.MaxBytes), ".")
	}
}

// room grades the checkpoint the change set needs.
func (g *grader) room() error {
	if g.out.CheckpointBytes == 0 {
		return nil
	}
	free, freeAfterPruning, err := g.w.CheckpointRoom()
	if err != nil {
		return err
	}
	switch {
	case g.out.CheckpointBytes > freeAfterPruning:
		g.flag(GradeHigh, fmt.Sprintf("the old content (%d bytes) does not fit in the checkpoint store even after pruning (%d bytes free); it cannot be applied", g.out.CheckpointBytes, freeAfterPruning), ".")
	case g.out.CheckpointBytes > free:
		g.flag(GradeHigh, fmt.Sprintf("keeping the old content (%d bytes) prunes older checkpoints (%d bytes free)", g.out.CheckpointBytes, free), ".")
	}
	return nil
}

// finish sets the grade, sorts the reasons and computes the digest.
func (g *grader) finish() error {
	out := g.out
	if len(g.changes) > 0 {
		out.Grade = GradeMedium
	}
	for _, k := range g.order {
		out.Reasons = append(out.Reasons, Reason{Grade: k.grade, Text: k.text, Paths: g.reasons[k], Refused: k.refused})
		out.Grade = max(out.Grade, k.grade)
	}
	sort.SliceStable(out.Reasons, func(i, j int) bool { return out.Reasons[i].Grade > out.Reasons[j].Grade })
	h := sha256.New()
	for _, c := range g.changes {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00%o\x00%s\x00%s\x00", c.Op, c.Rel, c.Kind, uint32(c.Mode), c.SHA256, c.Target)
	}
	out.Digest = hex.EncodeToString(h.Sum(nil))
	return nil
}

// badName says what makes a path unfit to apply or to show: invalid
// UTF-8, control characters, bidi controls, zero-width characters; or "".
func badName(rel string) string {
	if !utf8.ValidString(rel) {
		return "invalid UTF-8"
	}
	for _, c := range rel {
		switch {
		case c < 0x20 || c == 0x7f || c >= 0x80 && c < 0xa0:
			return "a control character"
		case c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069, c == 0x200e, c == 0x200f, c == 0x061c:
			return "a bidirectional control character"
		case c >= 0x200b && c <= 0x200d, c == 0x2060, c == 0xfeff, c == 0x00ad, c == 0x180e:
			return "a zero-width character"
		case unicode.Is(unicode.Cf, c):
			return "an invisible format character"
		}
	}
	return ""
}

// matchHostTool returns the pattern of pats that rel matches, or "". A
// pattern is a slash path of globs matched case-insensitively against any
// run of rel's elements; a trailing "/" means the folder and everything
// under it (which the element match already gives).
func matchHostTool(pats []string, rel string) string {
	els := strings.Split(strings.ToLower(rel), "/")
	for _, p := range pats {
		pe := strings.Split(strings.Trim(strings.ToLower(p), "/"), "/")
		for start := 0; start+len(pe) <= len(els); start++ {
			ok := true
			for j, pat := range pe {
				if m, err := path.Match(pat, els[start+j]); err != nil || !m {
					ok = false
					break
				}
			}
			if ok {
				return p
			}
		}
	}
	return ""
}
