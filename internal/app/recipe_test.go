package app

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/sandbox"
)

// TestRunCommandRecipe: a recipe runs exactly its argv and is decided as
// that argv typed by the model (the same decision, rule and plan hash),
// an operator rule over the argv holds the recipe too, and its twin — a
// recipe nothing forbids — runs. An unknown recipe is refused with the
// list; recipe with program or args is refused; the description ends
// with the menu.
func TestRunCommandRecipe(t *testing.T) {
	r := newTestRuntime(t, "smart")
	if _, err := sandbox.Select(r.Config.Sandbox.Backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	abs := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p, err = filepath.Abs(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	echo, ls, mkdir := abs("echo"), abs("ls"), abs("mkdir")
	r.Close()
	r = reopenWith(t, r, func(cfg string) string {
		return cfg + fmt.Sprintf(`
[[commands.recipes]]
alias = "hello"
argv = [%q, "hello;", "$(id)"]
description = "say hello"

[[commands.recipes]]
alias = "listing"
argv = [%q, "-la"]

[[commands.recipes]]
alias = "build-dir"
argv = [%q, "build"]
description = "make the build folder"

[[rules]]
id = "no-long-listing"
tool = "run_command"
command = [%q, "-la"]
effect = "deny"
`, echo, ls, mkdir, ls)
	})

	spec, ok := r.Registry.Lookup("run_command")
	if !ok {
		t.Fatal("run_command is not registered")
	}
	if d, want := spec.Spec().Description, "\nRecipes (send recipe=ALIAS alone): hello — say hello; listing; build-dir — make the build folder."; !strings.HasSuffix(d, want) {
		t.Errorf("run_command's description = %q; want it to end with the menu %q", d, want)
	}

	// Each recipe is decided like its argv typed by the model.
	same := []struct {
		recipe, typed  string
		decision, rule string
		output         string // in the result when it ran
	}{
		{"hello", fmt.Sprintf(`{"program":%q,"args":["hello;","$(id)"]}`, echo), "ran", policy.RuleModeSmart, "hello; $(id)"},
		{"listing", fmt.Sprintf(`{"program":%q,"args":["-la"]}`, ls), "denied", policy.RuleOperator("no-long-listing"), ""},
		{"build-dir", fmt.Sprintf(`{"program":%q,"args":["build"]}`, mkdir), "pending", policy.RuleModeSmart, ""},
	}
	for _, c := range same {
		t.Run(c.recipe, func(t *testing.T) {
			typed := call(t, r, CallRequest{Tool: "run_command", Args: c.typed})
			byAlias := call(t, r, CallRequest{Tool: "run_command", Args: `{"recipe":"` + c.recipe + `"}`})
			wantDecision(t, typed, c.decision, c.rule)
			wantDecision(t, byAlias, c.decision, c.rule)
			if byAlias.PlanHash == "" || byAlias.PlanHash != typed.PlanHash {
				t.Errorf("recipe %s: plan hash %q; want the typed argv's %q", c.recipe, byAlias.PlanHash, typed.PlanHash)
			}
			if byAlias.Rule != typed.Rule || byAlias.Risk != typed.Risk {
				t.Errorf("recipe %s: rule %q risk %q; want the typed argv's %q %q", c.recipe, byAlias.Rule, byAlias.Risk, typed.Rule, typed.Risk)
			}
			if c.output != "" && (byAlias.Result == nil || !strings.Contains(byAlias.Result.Text, c.output)) {
				t.Errorf("recipe %s: result %+v; want the output %q", c.recipe, byAlias.Result, c.output)
			}
			if c.decision == "pending" && !strings.Contains(byAlias.Plan, `recipe "`+c.recipe+`"`) {
				t.Errorf("recipe %s: card %q does not name the recipe", c.recipe, byAlias.Plan)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(r.Config.Workspace.Roots[0].Path, "build")); err == nil {
		t.Error("a pending recipe ran")
	}

	refused := []struct {
		args, want string
	}{
		{`{"recipe":"deploy"}`, `no recipe "deploy"; the recipes are hello, listing, build-dir`},
		{`{"recipe":"hello","program":"echo"}`, "send recipe alone"},
		{`{"recipe":"hello","args":["--extra"]}`, "send recipe alone"},
		{`{"recipe":"hello","args":[]}`, "send recipe alone"},
		{`{}`, "send program (and args), or recipe: one of hello, listing, build-dir"},
	}
	for _, c := range refused {
		out := call(t, r, CallRequest{Tool: "run_command", Args: c.args})
		if string(out.Decision) == "ran" || string(out.Decision) == "pending" || !strings.Contains(out.Reason, c.want) {
			t.Errorf("run_command %s: %s by %s (%q); want refused with %q", c.args, out.Decision, out.Rule, out.Reason, c.want)
		}
	}
}
