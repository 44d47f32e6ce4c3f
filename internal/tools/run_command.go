package tools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed run_command.md
var runCommandDoc string

// commandPath is where bare program names are looked up. It is fixed, not
// homard's own $PATH, so a folder the model can write (the workspace)
// never shadows a system program.
const commandPath = "/usr/local/bin:/usr/bin:/bin"

// maxCommandTimeout bounds timeout_s.
const maxCommandTimeout = 10 * time.Minute

// RunCommandParams are run_command's arguments.
type RunCommandParams struct {
	Program  string   `json:"program,omitempty" jsonschema:"bare name (found on the command path) or absolute path"`
	Args     []string `json:"args,omitempty" jsonschema:"one string each, passed literally"`
	Recipe   string   `json:"recipe,omitempty" jsonschema:"a recipe's alias, instead of program and args"`
	Cwd      string   `json:"cwd,omitempty" jsonschema:"workspace folder; default the root"`
	TimeoutS int      `json:"timeout_s,omitempty" jsonschema:"seconds, at most 600"`
	Stdin    string   `json:"stdin,omitempty"`
}

// CommandOptions configure run_command; zero values are documented defaults.
type CommandOptions struct {
	// Backend selects the backend that runs the programs. It is called
	// once, on the first proposal (probing a sandbox costs a few
	// milliseconds, too much for every start of the CLI). If it fails,
	// every proposal is refused with its error: fail closed, never a
	// silent fallback.
	Backend func() (sandbox.Backend, error)
	// Allow lists programs permitted although shells, interpreters or
	// wrappers (policy.ClassifyCommand).
	Allow []string
	// Env holds extra KEY=VALUE entries besides PATH, HOME, LANG and TERM.
	Env []string
	// Timeout is the default limit. Zero means 60s.
	Timeout time.Duration
	// MaxOutput caps the output in bytes. Zero means 64 KiB.
	MaxOutput int
	// Path lists extra program folders (config commands.path: absolute,
	// clean, existing, outside every writable root): bare program names
	// are looked up in them after the fixed system path, they are
	// appended to the command's PATH, and the sandbox shows them
	// read-only. Nil means none.
	Path []string
	// Recipes are the operator's commands runnable by alias (config
	// commands.recipes); run_command's description ends with their menu.
	// A recipe is decided exactly like its argv typed by the model. Nil
	// means none, and no menu.
	Recipes []Recipe
	// Caches are the roots' warm build caches (config
	// commands.warm_cache): a sandboxed command is shown its root's
	// read-only beneath a layer that dies with the run, and after a Go
	// build, test, vet, run or install homard refreshes the root's Go build
	// cache in the background (sandbox.Caches.Schedule). Nil means cold
	// caches in each command's fresh home.
	Caches *sandbox.Caches
}

// Recipe is an operator-defined argv runnable by alias.
type Recipe struct {
	Alias       string
	Argv        []string // absolute program path, then its arguments
	Description string   // one line; empty means none
}

// RunCommand is the run_command tool.
type RunCommand struct {
	ws *workspace.Workspace
	o  CommandOptions
	fx settler // the gate its change sets pass

	once       sync.Once // guards backend and backendErr
	backend    sandbox.Backend
	backendErr error

	hashMu sync.Mutex // guards hashes
	hashes map[programKey]string
}

// programKey identifies a binary's content cheaply: a changed file gets a
// new inode, size or change time.
type programKey struct {
	path       string
	dev, ino   uint64
	size       int64
	ctimeNanos int64
}

// programHash returns the hex SHA-256 of the executable at real, cached
// by its identity (hashing git's 4 MB binary on every call costs ~10 ms).
func (t *RunCommand) programHash(real string) (string, error) {
	f, err := os.Open(real)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", errors.New("no file identity")
	}
	key := programKey{path: real, dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), ctimeNanos: ctimeNanos(st)}
	t.hashMu.Lock()
	sum, ok := t.hashes[key]
	t.hashMu.Unlock()
	if ok {
		return sum, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum = hex.EncodeToString(h.Sum(nil))
	t.hashMu.Lock()
	if t.hashes == nil || len(t.hashes) > 256 {
		t.hashes = map[programKey]string{}
	}
	t.hashes[key] = sum
	t.hashMu.Unlock()
	return sum, nil
}

func (t *RunCommand) sandbox() (sandbox.Backend, error) {
	t.once.Do(func() {
		if t.o.Backend == nil {
			t.backendErr = errors.New("no sandbox backend is configured")
			return
		}
		t.backend, t.backendErr = t.o.Backend()
	})
	return t.backend, t.backendErr
}

// NewRunCommand builds the tool. Its writes pass gate, whose options say
// what is hidden from commands (sensitive files, the operator's deny
// rules), which files host tools run, and where held change sets wait.
func NewRunCommand(gate *changeset.Gate, o CommandOptions) tool.Tool {
	if o.Timeout <= 0 {
		o.Timeout = sandbox.DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = sandbox.DefaultMaxOutput
	}
	return tool.Adapt[RunCommandParams](&RunCommand{ws: gate.Workspace(), o: o, fx: settler{gate: gate}})
}

type runCommandBody struct {
	// Mode is the sandbox view: "read-only" for a command classed as a
	// read, "overlay" for one that writes or runs code.
	Mode     string   `json:"mode"`
	Expected []string `json:"expected"` // what the argv says it writes (relative to cwd's root)
	RunsCode bool     `json:"runs_code"`
	Path     string   `json:"path"`
	RealPath string   `json:"real_path"`
	// ProgramSHA256 is the binary's hash when the call was planned; Run
	// refuses a binary that changed since.
	ProgramSHA256 string   `json:"program_sha256"`
	Args          []string `json:"args"`
	Cwd           location `json:"cwd"`
	TimeoutS      int      `json:"timeout_s"`
	Stdin         string   `json:"stdin"`
	Backend       string   `json:"backend"`
	// ProgramDirs are the extra program folders (CommandOptions.Path)
	// the call was planned with; Run refuses it when they changed.
	ProgramDirs []string `json:"program_dirs,omitempty"`
}

func (t *RunCommand) Spec() tool.Spec {
	return tool.Spec{Name: "run_command", Description: doc(runCommandDoc) + recipeMenu(t.o.Recipes), Action: policy.ActionExec, Risk: policy.RiskMedium}
}

func (t *RunCommand) Prepare(ctx context.Context, p RunCommandParams) (tool.Plan, error) {
	recipe, err := t.recipe(&p)
	if err != nil {
		return tool.Plan{}, err
	}
	backend, err := t.sandbox()
	if err != nil {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitSandbox, "commands cannot run: %v", err)
	}
	path, real, err := lookProgram(p.Program, t.o.Path)
	if err != nil {
		if v := policy.ClassifyCommand(policy.Command{Program: p.Program, Path: "/", RealPath: "/", Args: p.Args}, t.o.Allow); v.Refused {
			return tool.Plan{}, tool.Refuse(v.Rule, "%s", v.Reason)
		}
		return tool.Plan{}, tool.InvalidArgs("%v", err)
	}
	v := policy.ClassifyCommand(policy.Command{Program: p.Program, Path: path, RealPath: real, Args: p.Args}, t.o.Allow)
	if v.Refused {
		return tool.Plan{}, tool.Refuse(v.Rule, "%s", v.Reason)
	}
	// The hard limits judge a program by its names, so a program the
	// model could have written — anything in the writable workspace, such
	// as a copy of python3 renamed "notes" — is refused outright unless
	// the operator lists its exact path.
	// A program inside a root is whatever the model wrote there (a copy
	// of python3 renamed "notes", a binary it just built): it runs as code
	// — on an overlay, graded, approved once or for the session — whatever
	// the catalog would call a program of that name.
	if root := t.rootHolding(path, real); root != "" {
		v = policy.CommandVerdict{Class: policy.ClassRunsCode, Risk: max(v.Risk, policy.RiskMedium)}
	}
	if p.Cwd == "" {
		p.Cwd = "."
	}
	cwd, err := resolveRead(t.ws, p.Cwd)
	if err != nil {
		return tool.Plan{}, err
	}
	if fi, err := t.ws.Stat(cwd); err != nil || !fi.IsDir() {
		return tool.Plan{}, tool.InvalidArgs("cwd %q is not a folder in the workspace", p.Cwd)
	}
	// Rules and grants match the folder as written and its real location
	// (a symlinked cwd cannot dodge a deny rule); the command runs in the
	// real one.
	targets, cwd, err := planned(t.ws, cwd)
	if err != nil {
		return tool.Plan{}, err
	}
	timeout := t.o.Timeout
	if p.TimeoutS < 0 || time.Duration(p.TimeoutS)*time.Second > maxCommandTimeout {
		return tool.Plan{}, tool.InvalidArgs("timeout_s must be between 1 and %d", int(maxCommandTimeout/time.Second))
	}
	if p.TimeoutS > 0 {
		timeout = time.Duration(p.TimeoutS) * time.Second
	}
	args := p.Args
	if args == nil {
		args = []string{}
	}
	mode, expected, runsCode := commandView(t.ws, v, cwd)
	view := "read-only view"
	if t.ws.ReadOnly(cwd.Root) && mode != sandbox.ModeReadOnly {
		// A read-only root is mounted read-only in the view: the kernel,
		// not a check of the change set, keeps it unchanged. A command
		// whose argv says it writes could only fail there; one that runs
		// code (a test, a build) runs, and whatever it writes is lost.
		// The host backend has no view at all.
		switch {
		case v.Class == policy.ClassWrite:
			return tool.Plan{}, tool.Refuse(policy.RuleLimitRootReadOnly, "this command changes files, and workspace root %q is read-only (access = \"ro\" in config); run it in a writable root", cwd.Root)
		case backend.Name() == "host":
			return tool.Plan{}, tool.Refuse(policy.RuleLimitRootReadOnly, "workspace root %q is read-only (access = \"ro\" in config) and the host backend cannot show it read-only to a command that runs code; run it in a writable root or use a sandboxed backend", cwd.Root)
		}
		mode, expected, runsCode = sandbox.ModeReadOnly, nil, false
		view = "read-only root: nothing the command writes there is kept"
	}
	switch {
	case backend.Name() == "host":
		view = "NOT confined: the host backend writes directly, nothing is checked"
	case mode == sandbox.ModeOverlay:
		view = "on a copy; changes are checked before they apply"
	}
	display := fmt.Sprintf("run %s\n  argv: %s\n  in %s · timeout %s · sandbox %s (%s)",
		path, quoteArgv(append([]string{path}, args...)), cwd.Target(), timeout, backend.Name(), view)
	if p.Stdin != "" {
		display += fmt.Sprintf(" · stdin %d bytes", len(p.Stdin))
	}
	if len(v.Configs) > 0 {
		display += "\n  reads config from the workspace: " + strings.Join(v.Configs, ", ")
	}
	if recipe != "" {
		display += fmt.Sprintf("\n  recipe %q from config (decided like this argv typed by the model)", recipe)
	}
	// A standing grant covers an argv template, bound to this exact
	// binary: its hash is in the body (hashed) and the template.
	sum, err := t.programHash(real)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("program %q: %v", p.Program, err)
	}
	tm := v.Template
	tm.Program, tm.Dir, tm.SHA256, tm.TimeoutS = real, cwd.Target(), sum, int(timeout/time.Second)
	tm.SetStdin(p.Stdin)
	if v.Class == policy.ClassRunsCode {
		tm.RunsCode = true
	}
	// Graded is decided here, from the view and the backend this Plan's
	// body records (both hashed, and checked again by Run), never from the
	// arguments: a command that runs code may be granted for the session
	// only when whatever it changes reaches the root through the gate, in
	// a sandbox with no network.
	tm.Graded = gradedView(backend.Name(), mode)
	switch {
	case tm.Grantable() && tm.RunsCode:
		display += "\n  a session approval covers: " + tm.Cover()
	case tm.Grantable():
		display += "\n  a session or always approval covers: " + tm.String()
	default:
		display += "\n  runs code outside a graded sandbox: only a one-time approval can run it"
	}
	preview := "argv, one argument per line:\n" + argvPreview(append([]string{path}, args...)) +
		fmt.Sprintf("working folder: %s\nview: %s (sandbox %s)\ntimeout: %s\n", cwd.Target(), view, backend.Name(), timeout)
	if p.Stdin != "" {
		preview += fmt.Sprintf("stdin, %d bytes:\n%s\n", len(p.Stdin), p.Stdin)
	}
	return tool.NewPlan(tool.PlanSpec{
		Tool: "run_command", Action: policy.ActionExec, Risk: v.Risk, ReadOnly: v.ReadOnly,
		Class:   v.Class,
		Display: display,
		Preview: preview,
		Targets: targets,
		Command: append([]string{path}, args...),
		Body: runCommandBody{Mode: mode.String(), Expected: expected, RunsCode: runsCode,
			Path: path, RealPath: real, ProgramSHA256: sum, Args: args, Cwd: locate(cwd),
			TimeoutS: int(timeout / time.Second), Stdin: p.Stdin, Backend: backend.Name(),
			ProgramDirs: t.o.Path},
		Template: &tm,
	})
}

func (t *RunCommand) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b runCommandBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	backend, err := t.sandbox()
	if err != nil || b.Backend != backend.Name() {
		return tool.Errorf("the sandbox changed since this call was planned; propose it again"), nil
	}
	// The program must still be what was planned: a swapped symlink or a
	// replaced binary path is refused, not followed.
	if real, err := filepath.EvalSymlinks(b.Path); err != nil || real != b.RealPath {
		return tool.Errorf("%s no longer resolves to %s; propose the call again", b.Path, b.RealPath), nil
	}
	if sum, err := t.programHash(b.RealPath); err != nil || sum != b.ProgramSHA256 {
		return tool.Errorf("%s changed since this call was planned; propose it again", b.RealPath), nil
	}
	cwd, err := t.ws.ResolveIn(b.Cwd.Root, b.Cwd.Rel)
	if err != nil {
		return tool.Errorf("cwd: %v", err), nil
	}
	if !slices.Equal(b.ProgramDirs, t.o.Path) {
		return tool.Errorf("commands.path changed since this call was planned; propose it again"), nil
	}
	root := rootPath(t.ws, cwd.Root)
	dir := filepath.Join(root, filepath.FromSlash(cwd.Rel))
	mode := sandbox.ModeReadOnly
	switch b.Mode {
	case sandbox.ModeReadOnly.String():
	case sandbox.ModeOverlay.String():
		mode = sandbox.ModeOverlay
	default:
		return tool.Errorf("the plan names no sandbox view; propose the call again"), nil
	}
	if mode != sandbox.ModeReadOnly && t.ws.ReadOnly(cwd.Root) {
		return tool.Errorf("workspace root %q is read-only now; propose the call again", cwd.Root), nil
	}
	// Commands that may change a root run one at a time per root, and
	// their changes are graded and applied under the same lock, so two
	// commands never race on one file.
	var lock *workspace.RootLock
	if mode == sandbox.ModeOverlay {
		if lock, err = t.ws.LockRoot(ctx, cwd.Root); err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Errorf("lock the workspace root: %v", err), nil
		}
		defer lock.Unlock()
	}
	// Under the lock: no other command's changes land while the list of
	// hidden paths is made and the command runs.
	hide, err := t.fx.hide(cwd.Root, root)
	if err != nil {
		return tool.Errorf("the sandbox refused to run it: %v", err), nil
	}
	since := workspace.RunStart() // after the lock: nothing but the owner writes the root from here
	// HOME, TMPDIR, XDG_* and caches are set by the sandbox to a fresh
	// folder outside every root; git never looks above the root.
	env := append([]string{"PATH=" + strings.Join(append([]string{commandPath}, b.ProgramDirs...), ":"), "LANG=C.UTF-8", "TERM=dumb", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(root)}, gitSafety...)
	env = append(env, t.o.Env...)
	var stdin []byte
	if b.Stdin != "" {
		stdin = []byte(b.Stdin)
	}
	timeout := time.Duration(b.TimeoutS) * time.Second
	limits := sandbox.Limits{
		CPUSeconds:  uint64(timeout/time.Second) + 1,
		MemoryBytes: 2 << 30,
		// One memory cgroup for the whole command tree (its tmpfs pages
		// included); without a usable memory cgroup, commands on the
		// overlay refuse to run (reads run without it).
		TreeMemoryBytes: sandbox.DefaultTreeMemoryBytes,
		// No RLIMIT_FSIZE: a command never writes the real root (its view
		// is read-only or an overlay), the overlay's upper layer and the
		// command's home are size-capped tmpfs mounts, and a change set's
		// bytes are graded before anything is applied. A per-file cap at
		// the workspace's max file size broke compilers' temp files.
	}
	// RLIMIT_NPROC for a non-root homard; as root (where the kernel
	// ignores it) the sandbox enforces the same cap with a pids cgroup, or
	// refuses to run the command at all.
	limits.Processes = 512
	var cache string
	if backend.Name() != "host" {
		// A folder that cannot be made leaves the command cold, as
		// without warm caches; it never stops the command.
		cache, _ = t.o.Caches.Dir(root)
	}
	res, err := backend.Run(ctx, sandbox.Spec{
		Path: b.Path, Args: b.Args, Dir: dir, Root: root, Env: env, Stdin: stdin,
		Timeout: timeout, MaxOutput: t.o.MaxOutput, Limits: limits, Mode: mode, Hide: hide,
		ProgramDirs: programDirsOutside(b.ProgramDirs, root), Cache: cache,
	})
	if err == nil && cache != "" && warmsGoCache(b.RealPath, b.Args) && t.rootHolding(b.Path, b.RealPath) == "" {
		t.refreshLater(backend, b, cwd.Root, root, dir)
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if errors.Is(err, sandbox.ErrInvalidSpec) || errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, sandbox.ErrUnenforceable) {
			return tool.Errorf("the sandbox refused to run it: %v", err), nil
		}
		return tool.Result{}, err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "exit code %d", res.ExitCode)
	if res.TimedOut {
		fmt.Fprintf(&out, " (timed out after %s; the process group was killed: if it needs longer, propose it again with the timeout_s argument, at most %d; the default limit is commands.timeout in config.toml)",
			timeout, int(maxCommandTimeout/time.Second))
	}
	fmt.Fprintf(&out, " · %s\n", res.Duration.Round(time.Millisecond))
	out.Write(res.Output)
	var effects []string
	if mode == sandbox.ModeOverlay {
		switch {
		case res.Changes != nil:
			text, eff := t.fx.settle(ctx, "the command", cwd.Root, res.Changes, since, append([]string{b.Path}, b.Args...), b.Expected, b.RunsCode, lock)
			out.WriteString(text)
			effects = eff
		case backend.Name() != "host":
			out.WriteString("\nthe run did not finish, so nothing it changed was applied")
		}
	}
	return tool.Result{Text: out.String(), IsError: res.ExitCode != 0 || res.TimedOut, Untrusted: true, Effects: effects}, nil
}

// warmsGoCache reports whether a command is a Go build after which the
// root's Go build cache is worth refreshing: the go command (by its
// resolved name) with build, test, vet, run or install.
func warmsGoCache(real string, args []string) bool {
	if filepath.Base(real) != "go" || len(args) == 0 {
		return false
	}
	switch args[0] {
	case "build", "test", "vet", "run", "install":
		return true
	}
	return false
}

// refreshLater schedules homard's own warm-up of the root's Go build
// cache (sandbox.Caches.Refresh) with the go the command ran — never one
// inside a writable root (the caller checks), as the model could have
// written it — and returns at once. The warm-up waits for the root's
// lock, so no change lands while it compiles, and hides what a command
// would not see.
func (t *RunCommand) refreshLater(backend sandbox.Backend, b runCommandBody, rootName, root, dir string) {
	t.o.Caches.Schedule(sandbox.Warmup{
		Backend: backend, Go: b.RealPath, Root: root, Dir: dir,
		ProgramDirs: programDirsOutside(b.ProgramDirs, root),
		Hold: func(ctx context.Context) ([]string, func(), error) {
			lock, err := t.ws.LockRoot(ctx, rootName)
			if err != nil {
				return nil, nil, err
			}
			hide, err := t.fx.hide(rootName, root)
			if err != nil {
				lock.Unlock()
				return nil, nil, err
			}
			return hide, lock.Unlock, nil
		},
	})
}

// gradedView reports whether a command run by backend in mode is graded
// (policy.Template.Graded): an overlay, whose change set the gate grades
// before anything reaches the root, in a backend that confines the
// command and gives it no network (bwrap and landlock: new network
// namespaces with only a loopback). The host backend confines nothing and
// writes directly; a read-only view keeps nothing to grade. Named, not
// "anything but host", so a backend added later is not graded until it
// says what it holds.
func gradedView(backend string, mode sandbox.Mode) bool {
	return mode == sandbox.ModeOverlay && (backend == "bwrap" || backend == "landlock")
}

// commandView chooses the sandbox view for a classified command: a read
// runs on a read-only view; a write or code on an overlay whose changes
// are graded against what the argv says it writes (the catalog's Writes,
// relative to the working folder; code, or a write the argv does not name,
// may change anything in the root at medium). The classification only
// picks the view; the view holds whatever the command really does.
func commandView(ws *workspace.Workspace, v policy.CommandVerdict, cwd workspace.Path) (mode sandbox.Mode, expected []string, runsCode bool) {
	if v.Class == policy.ClassRead {
		return sandbox.ModeReadOnly, nil, false
	}
	if v.Class == policy.ClassRunsCode || v.WritesAnywhere {
		return sandbox.ModeOverlay, nil, true
	}
	if v.Entry == "git" {
		// git's write subcommands change their repository's metadata too
		// (objects, refs, logs, the index); the grader still holds
		// anything in .git that is not git's own data (hooks, config).
		if g := repoOf(ws, cwd); g != "" {
			expected = append(expected, g+"/")
		}
	}
	for _, w := range v.Writes {
		rel := path.Clean(path.Join(cwd.Rel, filepath.ToSlash(w)))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(w) {
			continue // outside the root: nothing there can change
		}
		// A written operand may be a folder (mkdir -p a/b, cp -r): the
		// path itself and everything below it.
		expected = append(expected, rel, rel+"/")
	}
	return sandbox.ModeOverlay, expected, false
}

// repoOf returns the root-relative path of the .git folder of the
// repository holding the working folder, looking upward from it inside
// the root ("" when there is none). It only widens what a git command is
// expected to change; the grader still decides what in .git may change.
func repoOf(ws *workspace.Workspace, cwd workspace.Path) string {
	for rel := cwd.Rel; ; rel = path.Dir(rel) {
		g := path.Join(rel, ".git")
		if p, err := ws.PathIn(cwd.Root, g); err == nil {
			if fi, err := ws.Lstat(p); err == nil && fi.IsDir() {
				return g
			}
		}
		if rel == "." {
			return ""
		}
	}
}

// lookProgram resolves a program name in commandPath and then in extra
// (commands.path), or checks an absolute path, and returns the path and
// its symlink-resolved form.
func lookProgram(name string, extra []string) (path, real string, err error) {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return "", "", fmt.Errorf("program %q: want a bare name or an absolute path", name)
	}
	if filepath.IsAbs(name) {
		path = name
	} else if !strings.Contains(name, "/") {
		for _, dir := range append(filepath.SplitList(commandPath), extra...) {
			cand := filepath.Join(dir, name)
			if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				path = cand
				break
			}
		}
		if path == "" {
			return "", "", fmt.Errorf("program %q: not found in %s%s", name, strings.Join(append([]string{commandPath}, extra...), ":"), notFoundHint(name, extra))
		}
	} else {
		return "", "", fmt.Errorf("program %q: a path must be absolute", name)
	}
	real, err = filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("program %q does not exist", name)
	}
	if err != nil {
		return "", "", fmt.Errorf("program %q: %v", name, err)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", "", fmt.Errorf("program %q is not an executable file", name)
	}
	return path, real, nil
}

// gitSafety is the second line behind the sandbox's sanitized copy of
// every repository config (which drops drivers, filters, textconv,
// includes and fsmonitor): the GIT_CONFIG_COUNT entries have command-line
// precedence over repository config (git 2.31+), system and global config
// are skipped entirely, and a bare repository is never used unless named.
// (diff.external is no longer overridden: an empty value made plain
// `git diff` fail with "external diff died".)
var gitSafety = func() []string {
	pairs := [][2]string{
		{"core.fsmonitor", "false"}, {"core.hooksPath", "/dev/null"}, {"core.pager", "cat"},
		{"core.sshCommand", "false"}, {"core.editor", "false"}, {"core.askPass", "false"},
		{"protocol.ext.allow", "never"}, {"credential.helper", ""},
		{"sequence.editor", "false"}, {"gpg.program", "false"}, {"safe.bareRepository", "explicit"},
	}
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat", "PAGER=cat", fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(pairs))}
	for i, p := range pairs {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, p[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, p[1]))
	}
	return env
}()

// rootHolding returns the writable workspace root that contains path or
// real, if any. A read-only root is left out: nothing a model proposes
// ever writes there, so a program in it is the owner's, like one on
// commands.path.
func (t *RunCommand) rootHolding(path, real string) string {
	for _, r := range t.ws.Roots() {
		if r.ReadOnly {
			continue
		}
		for _, p := range []string{path, real} {
			if rel, err := filepath.Rel(r.Path, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return r.Path
			}
		}
	}
	return ""
}

// programDirsOutside are the program folders the sandbox must add to the
// view of root: those inside it are in the view already.
func programDirsOutside(dirs []string, root string) []string {
	var out []string
	for _, d := range dirs {
		if d != root && !strings.HasPrefix(d, root+"/") && !strings.HasPrefix(root, d+"/") {
			out = append(out, d)
		}
	}
	return out
}

func rootPath(ws *workspace.Workspace, name string) string {
	for _, r := range ws.Roots() {
		if r.Name == name {
			return r.Path
		}
	}
	return ""
}

// quoteArgv shows an argv so that its element boundaries are visible.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
