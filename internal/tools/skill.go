package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/skill"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed read_skill.md
var readSkillDoc string

//go:embed run_skill.md
var runSkillDoc string

// Limits of the skill tools' results, in characters (read_skill) and
// bytes (each of run_skill's output streams).
const (
	skillDocLimit    = 3000
	skillOutputLimit = 16 << 10
)

// SkillLibrary finds a skill whose installed files are the ones the owner
// trusted (skill.Library).
type SkillLibrary interface {
	Trusted(ctx context.Context, name string) (skill.Skill, error)
}

// SkillRunner runs one skill invocation in the service sandbox: Dir
// mounted read-only, Argv as given, and only roots (the invocation's, as
// run_skill resolved them), the invocation's hosts (through the egress
// proxy) and secrets (added by the proxy, never given to the process).
// The writable root is an overlay: its changes come back in
// SkillOutput.Changes, and run_skill grades and applies them.
type SkillRunner interface {
	RunSkill(ctx context.Context, inv skill.Invocation, roots []SkillRoot) (SkillOutput, error)
}

// SkillRoot is a workspace root a skill run sees.
type SkillRoot struct {
	Name string
	// Path is the root's real path.
	Path string
	// Writable: seen through an overlay whose changes are returned as a
	// change set (at most one root of a skill is writable).
	Writable bool
	// Hide are the paths (absolute, inside Path) the skill must not read:
	// sensitive files and what the operator's deny rules match, as for
	// run_command.
	Hide []string
}

// SkillOutput is what a skill run printed and how it ended.
type SkillOutput struct {
	Stdout   string
	Stderr   string
	ExitCode int
	// Changes is the writable root's change set (a tar stream, see
	// sandbox.Service.Changes), nil when there is none or the run did not
	// end by itself; run_skill closes it.
	Changes *os.File
}

// SkillTools returns read_skill and run_skill over lib. env reports what
// this homard can grant now (workspace roots, vault secrets); run is the
// sandboxed runner (nil: run_skill is refused with policy.RuleLimitSandbox);
// menu, the trusted skills' one-line descriptions (skill.MenuText), ends
// run_skill's description so the model knows which skills exist.
func SkillTools(lib SkillLibrary, env func() skill.Env, run SkillRunner, menu string, gate *changeset.Gate) []tool.Tool {
	return []tool.Tool{
		tool.Adapt[ReadSkillParams](&ReadSkill{lib: lib}),
		tool.Adapt[RunSkillParams](&RunSkill{lib: lib, env: env, run: run, menu: menu,
			fx: settler{gate: gate}}),
	}
}

// trustedSkill looks a skill up, turning a missing or untrusted one into a
// Refusal.
func trustedSkill(ctx context.Context, lib SkillLibrary, name string) (skill.Skill, error) {
	s, err := lib.Trusted(ctx, name)
	switch {
	case errors.Is(err, skill.ErrNoSkill):
		return skill.Skill{}, tool.Refuse(policy.RuleLimitSkill, "there is no skill %q; use a name from the list of skills", cleanID(name))
	case errors.Is(err, skill.ErrUntrusted):
		return skill.Skill{}, tool.Refuse(policy.RuleLimitSkill, "skill %q is not available: its files are not the ones the owner trusted; the owner can review it with `homard skill show %s`", cleanID(name), cleanID(name))
	case err != nil:
		return skill.Skill{}, fmt.Errorf("find skill %s: %w", cleanID(name), err)
	}
	return s, nil
}

// ReadSkillParams are read_skill's arguments.
type ReadSkillParams struct {
	Name string `json:"name" jsonschema:"the skill's name, from the list of skills"`
}

// ReadSkill is the read_skill tool.
type ReadSkill struct{ lib SkillLibrary }

type skillRef struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

func (t *ReadSkill) Spec() tool.Spec {
	return tool.Spec{Name: "read_skill", Description: readSkillDoc, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (t *ReadSkill) Prepare(ctx context.Context, p ReadSkillParams) (tool.Plan, error) {
	s, err := trustedSkill(ctx, t.lib, p.Name)
	if err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: "read the instructions of skill " + s.Name,
		Body:    skillRef{Name: s.Name, Hash: s.Hash},
	})
}

func (t *ReadSkill) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b skillRef
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	s, err := changedSince(ctx, t.lib, b)
	if err != nil || s == nil {
		return tool.Errorf("refused: skill %s changed or was removed since this call was planned; the owner must trust it again", b.Name), err
	}
	text, total := sliceRunes(s.Doc, 0, skillDocLimit)
	if total > skillDocLimit {
		text += fmt.Sprintf("\n[homard: SKILL.md cut at %d of %d characters]", skillDocLimit, total)
	}
	return tool.Result{Text: text, Untrusted: true}, nil
}

// changedSince looks the planned skill up again: nil when it is gone,
// untrusted or no longer has the planned hash.
func changedSince(ctx context.Context, lib SkillLibrary, b skillRef) (*skill.Skill, error) {
	s, err := lib.Trusted(ctx, b.Name)
	if errors.Is(err, skill.ErrNoSkill) || errors.Is(err, skill.ErrUntrusted) || (err == nil && s.Hash != b.Hash) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find skill %s: %w", b.Name, err)
	}
	return &s, nil
}

// RunSkillParams are run_skill's arguments.
type RunSkillParams struct {
	Name string         `json:"name" jsonschema:"the skill's name, from the list of skills"`
	Args map[string]any `json:"args,omitempty" jsonschema:"the skill's parameters by name, as its instructions describe"`
}

// RunSkill is the run_skill tool.
type RunSkill struct {
	lib  SkillLibrary
	env  func() skill.Env
	run  SkillRunner
	menu string
	fx   settler
}

// runSkillBody is run_skill's Plan: the skill, the tree the owner
// trusted, the checked arguments and the argv they make.
type runSkillBody struct {
	Name string         `json:"name"`
	Hash string         `json:"hash"`
	Args map[string]any `json:"args"`
	Argv []string       `json:"argv"`
}

func (t *RunSkill) Spec() tool.Spec {
	d := runSkillDoc
	if t.menu != "" {
		d = strings.TrimRight(d, "\n") + "\nSkills:\n" + strings.TrimRight(t.menu, "\n")
	}
	return tool.Spec{Name: "run_skill", Description: d, Action: policy.ActionExec, Risk: policy.RiskMedium}
}

func (t *RunSkill) Prepare(ctx context.Context, p RunSkillParams) (tool.Plan, error) {
	s, err := trustedSkill(ctx, t.lib, p.Name)
	if err != nil {
		return tool.Plan{}, err
	}
	inv, args, err := t.invocation(s, p.Args)
	if err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("run skill %s (files %s)", s.Name, s.Hash[:12]),
		Preview: skillPreview(inv),
		Body:    runSkillBody{Name: s.Name, Hash: s.Hash, Args: args, Argv: inv.Argv},
	})
}

// invocation checks args and permissions and builds the run: a fixable
// argument is an ArgError, an ungrantable permission a Refusal.
func (t *RunSkill) invocation(s skill.Skill, raw map[string]any) (skill.Invocation, map[string]any, error) {
	if t.run == nil {
		return skill.Invocation{}, nil, tool.Refuse(policy.RuleLimitSandbox, "skills cannot run here: no service sandbox is set up; `homard doctor` says why")
	}
	args, err := s.Params.CheckArgs(raw)
	if err != nil {
		return skill.Invocation{}, nil, tool.InvalidArgs("skill %s: %v", s.Name, err)
	}
	argv, err := s.Argv(args)
	if err != nil {
		return skill.Invocation{}, nil, tool.InvalidArgs("skill %s: %v", s.Name, err)
	}
	inv, err := s.Grant(t.env(), argv)
	if err != nil {
		return skill.Invocation{}, nil, tool.Refuse(policy.RuleLimitSkillPermission, "%v", err)
	}
	return inv, args, nil
}

// skillPreview is what the approval card shows: the argv and exactly the
// permissions the run gets.
func skillPreview(inv skill.Invocation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "argv: %q\n", inv.Argv)
	roots := make([]string, 0, len(inv.Roots))
	for _, r := range inv.Roots {
		roots = append(roots, r.Name+" ("+r.Access+")")
	}
	for _, l := range []struct {
		name string
		vals []string
	}{{"roots", roots}, {"hosts", inv.Hosts}, {"secrets", inv.Secrets}} {
		v := "none"
		if len(l.vals) > 0 {
			v = strings.Join(l.vals, ", ")
		}
		fmt.Fprintf(&b, "%s: %s\n", l.name, v)
	}
	return b.String()
}

func (t *RunSkill) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b runSkillBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	s, err := changedSince(ctx, t.lib, skillRef{Name: b.Name, Hash: b.Hash})
	if err != nil || s == nil {
		return tool.Errorf("refused: skill %s changed or was removed since this call was approved; the owner must trust it again", b.Name), err
	}
	// Checked again from the Plan's own values: nothing Prepare saw is
	// trusted, and the argv run is the one that was approved.
	inv, _, err := t.invocation(*s, b.Args)
	var ref *tool.Refusal
	var arg *tool.ArgError
	switch {
	case errors.As(err, &ref):
		return tool.Errorf("refused: %s", ref.Reason), nil
	case errors.As(err, &arg):
		return tool.Errorf("refused: %s", arg.Reason), nil
	case err != nil:
		return tool.Result{}, err
	case !slices.Equal(inv.Argv, b.Argv):
		return tool.Errorf("refused: skill %s's command line is not the approved one", b.Name), nil
	}
	// The writable root is locked from before the run until its changes
	// are settled, as for a command: runs that may change one root are
	// serialised, and nothing but the owner writes it meanwhile.
	roots := make([]SkillRoot, 0, len(inv.Roots))
	writable := ""
	for _, r := range inv.Roots {
		sr := SkillRoot{Name: r.Name, Path: rootPath(t.fx.gate.Workspace(), r.Name), Writable: r.Access == "rw"}
		if sr.Path == "" {
			return tool.Errorf("refused: skill %s's root %q is not a workspace root any more", b.Name, r.Name), nil
		}
		if sr.Writable {
			writable = r.Name
		}
		roots = append(roots, sr)
	}
	var lock *workspace.RootLock
	if writable != "" {
		if lock, err = t.fx.gate.Workspace().LockRoot(ctx, writable); err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Errorf("lock the workspace root: %v", err), nil
		}
		defer lock.Unlock()
	}
	for i := range roots {
		if roots[i].Hide, err = t.fx.hide(roots[i].Name, roots[i].Path); err != nil {
			return tool.Errorf("the sandbox refused to run it: %v", err), nil
		}
	}
	since := workspace.RunStart()
	out, err := t.run.RunSkill(ctx, inv, roots)
	if out.Changes != nil && err != nil {
		out.Changes.Close()
	}
	if err != nil {
		return tool.Result{}, fmt.Errorf("run skill %s: %w", b.Name, err)
	}
	var text strings.Builder
	fmt.Fprintf(&text, "skill %s exited with status %d\n", b.Name, out.ExitCode)
	for _, s := range []struct{ name, v string }{{"stdout", out.Stdout}, {"stderr", out.Stderr}} {
		if s.v == "" {
			continue
		}
		fmt.Fprintf(&text, "--- %s ---\n%s\n", s.name, capBytes(s.v, skillOutputLimit))
	}
	var effects []string
	switch {
	case out.Changes != nil:
		// A skill is code: anything in its root may change, at medium.
		msg, eff := t.fx.settle(ctx, "the skill", writable, out.Changes, since, inv.Argv, nil, true, lock)
		text.WriteString(strings.TrimPrefix(msg, "\n"))
		effects = eff
	case writable != "":
		text.WriteString("the run did not finish, so nothing it changed was applied")
	}
	return tool.Result{Text: text.String(), IsError: out.ExitCode != 0, Untrusted: true, Effects: effects}, nil
}

// capBytes cuts s to at most n bytes at a rune boundary, saying so.
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := tool.RuneCut(s, n)
	return s[:cut] + fmt.Sprintf("\n[homard: output cut at %d of %d bytes]", cut, len(s))
}
