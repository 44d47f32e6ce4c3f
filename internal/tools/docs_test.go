package tools

import (
	"encoding/json"
	"github.com/homard/homard/internal/changeset"
	"regexp"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// TestDescriptionsKeepTheRules: the short descriptions (issue 15's tool
// budget) still carry, per tool, the rules a call fails without, and every
// path parameter says how paths are written. Text travels trimmed.
func TestDescriptionsKeepTheRules(t *testing.T) {
	e := newEnv(t)
	all := append(FileTools(changeset.New(e.ws, changeset.Options{}), nil), NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{}), NewApplyChanges(changeset.New(e.ws, changeset.Options{HoldDir: t.TempDir()})),
		NewReadArtifact(nil))
	all = append(all, NewWebTools(nil, nil, "")...)
	all = append(all, MemoryTools(nil)...)
	reg, err := tool.NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	must := map[string][]string{
		"run_command":   {"never through a shell", "refused unless the operator allows", "no network", "approval"},
		"grep":          {"RE2", "no lookaround"},
		"glob":          {"**"},
		"edit_file":     {"exactly once", "whitespace", "write_file"},
		"write_file":    {"entirely replace", "edit_file"},
		"read_file":     {"2000 lines", "offset"},
		"http_get":      {"https", "auth", "bound to the URL's host"},
		"remember":      {"Never secrets"},
		"apply_changes": {"only if approved"},
		"read_artifact": {"characters"},
	}
	specs := reg.Specs()
	if len(specs) != 15 {
		t.Errorf("%d built-in tools; want 15 (update this test and TestFirstRequestSize's README row)", len(specs))
	}
	for _, s := range specs {
		if s.Description != strings.TrimSpace(s.Description) {
			t.Errorf("%s: description %q has surrounding space; it is sent with every request", s.Name, s.Description)
		}
		for _, w := range must[s.Name] {
			if !strings.Contains(s.Description, w) {
				t.Errorf("%s: description %q lacks %q, a rule calls fail without", s.Name, s.Description, w)
			}
		}
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(s.Schema, &schema); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		if p, ok := schema.Properties["path"]; ok &&
			!strings.Contains(p.Description, "workspace-relative, or absolute in a root") {
			t.Errorf("%s: path parameter says %q; want how paths are written", s.Name, p.Description)
		}
		if p, ok := schema.Properties["pattern"]; ok && s.Name == "glob" && !strings.Contains(p.Description, "workspace-relative") {
			t.Errorf("glob: pattern parameter says %q; want how paths are written", p.Description)
		}
	}
}

// TestRunSkillDocSaysWhenItAsks: run_skill's description says, for every
// permission mode, what policy does with a real run_skill Plan of the
// owner's: the clause naming the mode says it asks exactly when policy
// asks, and "unasked" exactly when policy runs it. A changed mode table
// or a description that promises a question it does not ask fails here.
func TestRunSkillDocSaysWhenItAsks(t *testing.T) {
	e := newSkillEnv(t, weatherDoc)
	plan, err := e.prepare(t, "run_skill", `{"name":"weather","args":{"city":"Paris"}}`)
	if err != nil {
		t.Fatal(err)
	}
	desc := e.tools["run_skill"].Spec().Description
	// Clauses: split at sentence ends and semicolons.
	clauses := regexp.MustCompile(`[.;]\s`).Split(strings.Join(strings.Fields(desc), " "), -1)
	for _, m := range policy.Modes {
		d := policy.Decide(policy.Input{Tool: plan.Tool(), Action: plan.Action(), Risk: plan.Risk(), ReadOnly: plan.ReadOnly(),
			Class: plan.Class(), Targets: plan.Targets(), Command: plan.Command(), Trust: policy.TrustOwner, Mode: m})
		word := regexp.MustCompile(`\b` + string(m) + `\b`)
		var said []string
		for _, c := range clauses {
			if word.MatchString(c) {
				said = append(said, c)
			}
		}
		if len(said) != 1 {
			t.Errorf("mode %s: run_skill's description names it in %d clauses %q; want one saying whether it asks", m, len(said), said)
			continue
		}
		unasked := strings.Contains(said[0], "unasked")
		asks := !unasked && strings.Contains(said[0], "ask")
		switch {
		case d.Verdict == policy.Ask && !asks:
			t.Errorf("mode %s: policy asks (%s) but the description says %q", m, d.Rule, said[0])
		case d.Verdict == policy.Allow && !unasked:
			t.Errorf("mode %s: policy runs it unasked (%s) but the description says %q", m, d.Rule, said[0])
		case d.Verdict == policy.Deny:
			t.Errorf("mode %s: policy denies the owner's run_skill (%s): %s", m, d.Rule, d.Reason)
		}
	}
}
