package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/sandbox"
)

// TestRunCommandNotFoundNamesToolchain: a program run_command cannot find
// is named with commands.path; one that sits in a common toolchain folder
// (here a fake ~/.cargo/bin and two nvm Node versions) is named with that
// folder and the exact config line. Its twins: a program in no such
// folder gets the general hint only, and with the folder on commands.path
// the same program is found.
func TestRunCommandNotFoundNamesToolchain(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	put := func(dir, name string) string {
		d := filepath.Join(home, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	cargo := put(".cargo/bin", "fakecargo")
	put(".nvm/versions/node/v18.19.0/bin", "fakenode")
	node := put(".nvm/versions/node/v20.11.1/bin", "fakenode")

	e := newEnv(t)
	host := func() (sandbox.Backend, error) { return sandbox.NewHost(), nil }
	prepare := func(program string, path []string) error {
		t.Helper()
		rc := NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{Backend: host, Path: path})
		params, err := rc.Decode([]byte(`{"program":"` + program + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = rc.Prepare(context.Background(), params)
		return err
	}
	for _, tt := range []struct {
		program string
		want    []string
		not     string
	}{
		{"fakecargo", []string{"fakecargo is in " + cargo, "commands.path in config.toml, under [commands]: path = [\"" + cargo + "\"]", "never uses your $PATH"}, ""},
		{"fakenode", []string{"fakenode is in " + node, `path = ["` + node + `"]`}, "v18"},
		{"fakenowhere", []string{"not found in /usr/local/bin:/usr/bin:/bin", "never the owner's $PATH", "add that folder to commands.path in config.toml"}, " is in "},
	} {
		err := prepare(tt.program, nil)
		if err == nil {
			t.Fatalf("Prepare(%s) found it; want not found", tt.program)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Prepare(%s) = %q; want it to say %q", tt.program, err, w)
			}
		}
		if tt.not != "" && strings.Contains(err.Error(), tt.not) {
			t.Errorf("Prepare(%s) = %q; want no %q", tt.program, err, tt.not)
		}
	}
	if err := prepare("fakecargo", []string{cargo}); err != nil {
		t.Errorf("Prepare(fakecargo) with %s on commands.path = %v; want it found", cargo, err)
	}
}

// TestPathLine: the suggested line keeps the folders already listed.
func TestPathLine(t *testing.T) {
	if got, want := PathLine([]string{"/opt/a"}, []string{"/opt/b", "/opt/a"}), `path = ["/opt/a", "/opt/b"]`; got != want {
		t.Errorf("PathLine = %s; want %s", got, want)
	}
}

// TestRunCommandTimeoutNamesSettings: a command that runs out of time
// says which settings bound it: the call's timeout_s argument and
// commands.timeout in config.toml.
func TestRunCommandTimeoutNamesSettings(t *testing.T) {
	e := newEnv(t)
	rc := NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{Backend: func() (sandbox.Backend, error) { return sandbox.NewHost(), nil }})
	params, err := rc.Decode([]byte(`{"program":"sleep","args":["30"],"timeout_s":1}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := rc.Prepare(context.Background(), params)
	if err != nil {
		t.Fatalf("Prepare(sleep 30): %v", err)
	}
	res, err := rc.Run(context.Background(), plan)
	if err != nil {
		t.Fatalf("Run(sleep 30): %v", err)
	}
	for _, w := range []string{"timed out after 1s", "the timeout_s argument, at most 600", "commands.timeout in config.toml"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("Run(sleep 30, timeout_s 1) = %q; want it to say %q", res.Text, w)
		}
	}
}
