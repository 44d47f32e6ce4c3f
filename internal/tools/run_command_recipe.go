package tools

import (
	"strings"

	"github.com/homard/homard/internal/tool"
)

// recipe replaces a call by alias with the recipe's argv, in place, and
// returns the alias ("" for a call with program and args). From here on
// the call is exactly the argv typed by the model: the same checks, the
// same Plan (hash, command, targets), so the same rules and approvals. A
// recipe takes no extra arguments: an alias names one fixed argv.
func (t *RunCommand) recipe(p *RunCommandParams) (string, error) {
	if p.Recipe == "" {
		if p.Program == "" {
			if len(t.o.Recipes) > 0 {
				return "", tool.InvalidArgs("send program (and args), or recipe: one of %s", recipeAliases(t.o.Recipes))
			}
			return "", tool.InvalidArgs("program is required")
		}
		return "", nil
	}
	if p.Program != "" || p.Args != nil {
		return "", tool.InvalidArgs("recipe %q runs its own argv: send recipe alone, or program and args without recipe", p.Recipe)
	}
	for _, r := range t.o.Recipes {
		if r.Alias == p.Recipe && len(r.Argv) > 0 {
			p.Program, p.Args = r.Argv[0], append([]string{}, r.Argv[1:]...)
			return r.Alias, nil
		}
	}
	if len(t.o.Recipes) == 0 {
		return "", tool.InvalidArgs("no recipe %q: none are configured; send program and args", p.Recipe)
	}
	return "", tool.InvalidArgs("no recipe %q; the recipes are %s", p.Recipe, recipeAliases(t.o.Recipes))
}

func recipeAliases(rs []Recipe) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Alias
	}
	return strings.Join(names, ", ")
}

// recipeMenu is the end of run_command's description when recipes exist:
// " Recipes (recipe=ALIAS): test — run the tests; lint." Nothing when
// there are none, so the request does not grow.
func recipeMenu(rs []Recipe) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nRecipes (send recipe=ALIAS alone): ")
	for i, r := range rs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Alias)
		if r.Description != "" {
			b.WriteString(" — " + r.Description)
		}
	}
	b.WriteString(".")
	return b.String()
}
