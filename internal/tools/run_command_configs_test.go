package tools

import (
	"context"
	"github.com/homard/homard/internal/changeset"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/homard/homard/internal/sandbox"
)

// TestRunCommandCardNamesConfigs: the run_command card names the
// workspace files a known program reads (git's repository config and
// attributes, make's makefiles); its twin, a program that reads none,
// gets no such line.
func TestRunCommandCardNamesConfigs(t *testing.T) {
	e := newEnv(t)
	rc := NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{Backend: func() (sandbox.Backend, error) { return sandbox.NewHost(), nil }})
	const line = "\n  reads config from the workspace: "
	cases := []struct {
		program string
		args    string
		want    string // after line; "" means no such line
	}{
		{"git", `["status"]`, ".git/config, .gitattributes"},
		{"make", `["test"]`, "GNUmakefile, makefile, Makefile"},
		{"ls", `["-l"]`, ""},
		{"mkdir", `["build"]`, ""},
	}
	for _, c := range cases {
		if _, err := exec.LookPath(c.program); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed; CI must have it", c.program)
			}
			t.Skipf("%s is not installed", c.program)
		}
		params, err := rc.Decode([]byte(`{"program":"` + c.program + `","args":` + c.args + `}`))
		if err != nil {
			t.Fatalf("decode %s: %v", c.program, err)
		}
		plan, err := rc.Prepare(context.Background(), params)
		if err != nil {
			t.Fatalf("prepare %s %s: %v", c.program, c.args, err)
		}
		d := plan.Display()
		switch {
		case c.want == "" && strings.Contains(d, line):
			t.Errorf("%s %s: card %q names config files; want none", c.program, c.args, d)
		case c.want != "" && !strings.Contains(d, line+c.want):
			t.Errorf("%s %s: card %q; want a line %q", c.program, c.args, d, strings.TrimPrefix(line, "\n")+c.want+"…")
		}
	}
}
