package config

import (
	"slices"
	"strings"
	"testing"
)

func TestRecipesValidation(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"alias case", `alias = "Test"
argv = ["/usr/bin/make", "test"]`, `alias = "Test": want 1 to 32 of a-z`},
		{"alias long", `alias = "` + strings.Repeat("a", 33) + `"
argv = ["/usr/bin/make"]`, "want 1 to 32 of a-z"},
		{"no alias", `argv = ["/usr/bin/make"]`, `alias = "": want 1 to 32`},
		{"no argv", `alias = "t"`, "argv: want the command"},
		{"bare program", `alias = "t"
argv = ["make", "test"]`, `argv[0] = "make": want an absolute, clean program path`},
		{"unclean program", `alias = "t"
argv = ["/usr/bin/../bin/make"]`, "want an absolute, clean program path"},
		{"empty arg", `alias = "t"
argv = ["/usr/bin/make", ""]`, `argv[1] = "": want a non-empty argument`},
		{"long description", `alias = "t"
argv = ["/usr/bin/make"]
description = "` + strings.Repeat("x", 81) + `"`, "at most 80 characters (it has 81)"},
		{"two lines", `alias = "t"
argv = ["/usr/bin/make"]
description = "run\nthe tests"`, "want one line"},
		{"unknown key", `alias = "t"
argv = ["/usr/bin/make"]
args = ["x"]`, "commands.recipes.args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := minimalConfig(t) + "\n[[commands.recipes]]\n" + tt.toml + "\n"
			_, err := Load(writeConfig(t, doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(%s) error = %v; want it to contain %q", tt.name, err, tt.want)
			}
		})
	}
	dup := minimalConfig(t) + "\n[[commands.recipes]]\nalias = \"t\"\nargv = [\"/a\"]\n[[commands.recipes]]\nalias = \"t\"\nargv = [\"/b\"]\n"
	if _, err := Load(writeConfig(t, dup)); err == nil || !strings.Contains(err.Error(), "another recipe has this alias") {
		t.Errorf("Load(two recipes aliased t) error = %v; want a duplicate-alias error", err)
	}
	// The twin: what the operator means to write loads, and renders back
	// to the same recipes.
	ok := minimalConfig(t) + "\n[[commands.recipes]]\nalias = \"test\"\nargv = [\"/usr/bin/make\", \"test\"]\ndescription = \"run the tests\"\n" +
		"[[commands.recipes]]\nalias = \"go-vet_2\"\nargv = [\"/usr/local/go/bin/go\", \"vet\", \"./...\"]\n"
	c, err := Load(writeConfig(t, ok))
	if err != nil {
		t.Fatalf("Load(two good recipes): %v; want it accepted", err)
	}
	want := []Recipe{{Alias: "test", Argv: []string{"/usr/bin/make", "test"}, Description: "run the tests"},
		{Alias: "go-vet_2", Argv: []string{"/usr/local/go/bin/go", "vet", "./..."}}}
	if !slices.EqualFunc(c.Commands.Recipes, want, recipeEqual) {
		t.Fatalf("Load: recipes = %+v; want %+v", c.Commands.Recipes, want)
	}
	out, err := Render(c)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	back, err := Load(writeConfig(t, string(out)))
	if err != nil {
		t.Fatalf("Load(Render(c)): %v\n%s", err, out)
	}
	if !slices.EqualFunc(back.Commands.Recipes, want, recipeEqual) {
		t.Errorf("Load(Render(c)): recipes = %+v; want %+v", back.Commands.Recipes, want)
	}
}

func recipeEqual(a, b Recipe) bool {
	return a.Alias == b.Alias && a.Description == b.Description && slices.Equal(a.Argv, b.Argv)
}
