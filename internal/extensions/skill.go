package extensions

import (
	"context"
	"fmt"
	"slices"

	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/skill"
	"github.com/homard/homard/internal/termtext"
)

// Skills is this home's skill library: skills/ in the data folder, trust
// pinned in the database. It never reads the current directory.
func (s *Service) Skills() *skill.Library {
	return skill.NewLibrary(skill.Folder(s.o.Paths.DataDir), s.o.Store, s.now)
}

// SkillJSON is a skill as `homard skill … --json` prints it (docs/JSON.md).
type SkillJSON struct {
	Name        string       `json:"name"`
	State       string       `json:"state"`
	Problem     string       `json:"problem"`
	Description string       `json:"description"`
	Hash        string       `json:"hash"`
	TrustedHash string       `json:"trusted_hash"`
	Files       int          `json:"files"`
	Entrypoint  []string     `json:"entrypoint"`
	Parameters  []string     `json:"parameters"`
	Roots       []skill.Root `json:"roots"`
	Hosts       []string     `json:"hosts"`
	Secrets     []string     `json:"secrets"`
	Flags       []skill.Flag `json:"flags"`
}

// SkillReview is a skill shown to the owner before they accept it: its
// facts, its whole SKILL.md (print it through termtext) and, for an add,
// the tree that Install will write.
type SkillReview struct {
	SkillJSON
	Doc       string
	candidate skill.Candidate
}

func skillJSON(name, state, problem, hash, trusted string, m skill.Manifest, t skill.Tree, flags []skill.Flag) SkillJSON {
	j := SkillJSON{
		Name: name, State: state, Problem: problem, Description: m.Description, Hash: hash, TrustedHash: trusted,
		Files: len(t.Files), Entrypoint: nonNil(m.Entrypoint), Parameters: []string{},
		Roots: nonNil(m.Perms.Roots), Hosts: nonNil(m.Perms.Hosts), Secrets: nonNil(m.Perms.Secrets), Flags: nonNil(flags),
	}
	for p := range m.Params.Properties {
		j.Parameters = append(j.Parameters, p)
	}
	slices.Sort(j.Parameters)
	return j
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SkillInspect reads the skill folder at path for `homard skill add`; a
// skill of the same name already installed is refused before the review.
func (s *Service) SkillInspect(ctx context.Context, path string) (SkillReview, error) {
	c, err := skill.Inspect(path)
	if err != nil {
		return SkillReview{}, err
	}
	if _, err := s.Skills().Status(ctx, c.Manifest.Name); err == nil {
		return SkillReview{}, fmt.Errorf("skill %s: %w", c.Manifest.Name, skill.ErrExists)
	}
	j := skillJSON(c.Manifest.Name, "new", "", c.Tree.Hash, "", c.Manifest, c.Tree, c.Flags)
	return SkillReview{SkillJSON: j, Doc: c.Manifest.Doc, candidate: c}, nil
}

// SkillInstall copies a reviewed skill into the library and trusts it.
func (s *Service) SkillInstall(ctx context.Context, rv SkillReview) (SkillJSON, error) {
	if err := s.Skills().Install(ctx, rv.candidate); err != nil {
		return SkillJSON{}, err
	}
	return s.SkillShowJSON(ctx, rv.Name)
}

// SkillList returns every installed skill.
func (s *Service) SkillList(ctx context.Context) ([]SkillJSON, error) {
	list, err := s.Skills().List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SkillJSON, 0, len(list))
	for _, sk := range list {
		out = append(out, skillJSON(sk.Name, sk.State, sk.Problem, sk.Hash, sk.Trusted, sk.Manifest, sk.Tree, skill.Scan(sk.Tree)))
	}
	return out, nil
}

// SkillShow reads one installed skill, with its red flags and SKILL.md.
func (s *Service) SkillShow(ctx context.Context, name string) (SkillReview, error) {
	sk, err := s.Skills().Status(ctx, name)
	if err != nil {
		return SkillReview{}, err
	}
	j := skillJSON(sk.Name, sk.State, sk.Problem, sk.Hash, sk.Trusted, sk.Manifest, sk.Tree, skill.Scan(sk.Tree))
	return SkillReview{SkillJSON: j, Doc: sk.Manifest.Doc}, nil
}

// SkillShowJSON is SkillShow without the SKILL.md.
func (s *Service) SkillShowJSON(ctx context.Context, name string) (SkillJSON, error) {
	rv, err := s.SkillShow(ctx, name)
	return rv.SkillJSON, err
}

// SkillTrust pins the skill's tree, which must still have the hash shown.
func (s *Service) SkillTrust(ctx context.Context, name, hash string) error {
	return s.Skills().Trust(ctx, name, hash)
}

// SkillRemove deletes an installed skill and its pin.
func (s *Service) SkillRemove(ctx context.Context, name string) error {
	return s.Skills().Remove(ctx, name)
}

// SkillMenu is the trusted skills' one-line descriptions, one
// "- name: description" line each, for a tool description or the system
// prompt ("" when there are none).
func (s *Service) SkillMenu(ctx context.Context) (string, error) {
	entries, err := s.Skills().Menu(ctx)
	if err != nil {
		return "", err
	}
	return skill.MenuText(entries), nil
}

// SkillChecks is doctor's line for each installed skill — trusted, or why
// the model does not see it — and, when one is trusted, whether the
// configured sandbox can run skills at all (only bwrap starts a service).
func (s *Service) SkillChecks(ctx context.Context) []Check {
	list, err := s.Skills().List(ctx)
	if err != nil {
		return []Check{{Name: "skill", Detail: "read the installed skills: " + err.Error()}}
	}
	var out []Check
	trusted := 0
	for _, sk := range list {
		name := termtext.Line(sk.Name)
		c := Check{Name: "skill", Info: true}
		switch sk.State {
		case skill.StateTrusted:
			trusted++
			c = Check{Name: "skill", OK: true, Detail: fmt.Sprintf("%s: trusted (files %s)", name, shortHash(sk.Hash))}
		case skill.StateChanged:
			c.Detail = fmt.Sprintf("%s: changed: needs trust; its files changed since you trusted them, so the model does not see it: review it with homard skill show %s, then homard skill trust %s", name, name, name)
		case skill.StateUntrusted:
			c.Detail = fmt.Sprintf("%s: untrusted: needs trust; the model does not see it until you review it with homard skill show %s and run homard skill trust %s", name, name, name)
		default:
			c.Detail = fmt.Sprintf("%s: broken, so the model does not see it: %s (homard skill rm %s removes it)", name, termtext.Line(sk.Problem), name)
		}
		out = append(out, c)
	}
	if trusted == 0 {
		return out
	}
	b, err := sandbox.Select(s.o.Config.Sandbox.Backend)
	switch {
	case err != nil:
		out = append(out, Check{Name: "skill", Detail: "skills cannot run: " + err.Error()})
	case b.Name() != "bwrap":
		out = append(out, Check{Name: "skill", Detail: fmt.Sprintf("skills cannot run with sandbox.backend %s: they need bwrap (install bubblewrap and set sandbox.backend = \"bwrap\" or \"auto\")", b.Name())})
	}
	return out
}

// shortHash is the first 12 characters of a tree hash.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
