package config

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Recipe is one [[commands.recipes]] entry: an argv the operator names so
// the model can run it by alias (run_command's recipe parameter). A recipe
// is a convenience, never a permission: the call is decided exactly like
// the same argv typed by the model.
type Recipe struct {
	// Alias is what the model sends: 1 to 32 of a-z, 0-9, _ and -; unique.
	// Required.
	Alias string `toml:"alias"`
	// Argv is the command: an absolute, clean program path, then its
	// arguments, none empty. Required.
	Argv []string `toml:"argv"`
	// Description is one line of at most 80 characters, shown to the
	// model in run_command's menu. Empty means the alias stands alone.
	Description string `toml:"description"`
}

var recipeAliasRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]{1,32}$`) })

// maxRecipeDescription bounds a recipe's description, in characters: it
// travels in every request to the model.
const maxRecipeDescription = 80

func validateRecipes(rs []Recipe, ps *problems) {
	seen := map[string]bool{}
	for i, r := range rs {
		key := fmt.Sprintf("commands.recipes[%d]", i)
		if !recipeAliasRE().MatchString(r.Alias) {
			ps.add("%s.alias = %q: want 1 to 32 of a-z, 0-9, _ and - (such as \"test\")", key, r.Alias)
		} else if seen[r.Alias] {
			ps.add("%s.alias = %q: another recipe has this alias", key, r.Alias)
		}
		seen[r.Alias] = true
		switch {
		case len(r.Argv) == 0:
			ps.add("%s.argv: want the command, such as [\"/usr/bin/make\", \"test\"]", key)
		case !strings.HasPrefix(r.Argv[0], "/") || path.Clean(r.Argv[0]) != r.Argv[0] || strings.ContainsFunc(r.Argv[0], unicode.IsSpace):
			ps.add("%s.argv[0] = %q: want an absolute, clean program path such as \"/usr/bin/make\"", key, r.Argv[0])
		}
		for j, a := range r.Argv {
			if a == "" || strings.ContainsRune(a, 0) {
				ps.add("%s.argv[%d] = %q: want a non-empty argument without NUL", key, j, a)
			}
		}
		if n := utf8.RuneCountInString(r.Description); n > maxRecipeDescription || strings.ContainsFunc(r.Description, unicode.IsControl) {
			ps.add("%s.description: want one line of at most %d characters (it has %d)", key, maxRecipeDescription, n)
		}
	}
}

// renderRecipes writes the commented [[commands.recipes]] example and the
// configured recipes; it belongs right after the [commands] keys.
func renderRecipes(rs []Recipe) string {
	var b strings.Builder
	b.WriteString(`# Recipes: commands the model may run by alias (run_command's "recipe"),
# listed in run_command's description. A recipe is decided exactly like
# the same argv typed by the model: rules and approvals see the real argv.
#   alias        1 to 32 of a-z, 0-9, _ and -, unique
#   argv         the absolute program path, then its arguments
#   description  one line, at most 80 characters
# [[commands.recipes]]
# alias = "test"
# argv = ["/usr/bin/make", "test"]
# description = "run the tests"
`)
	for _, r := range rs {
		fmt.Fprintf(&b, "\n[[commands.recipes]]\nalias = %s\nargv = %s\n", quote(r.Alias), quoteList(r.Argv))
		if r.Description != "" {
			fmt.Fprintf(&b, "description = %s\n", quote(r.Description))
		}
	}
	return b.String()
}
