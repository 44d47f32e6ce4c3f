package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/tools"
)

// TestToolchainCheck: doctor names a toolchain on the owner's $PATH that
// run_command cannot find, with the exact commands.path line (keeping the
// folders listed); its twins: the folder already on commands.path, the
// program also in a system folder, a folder inside a writable root and a
// relative $PATH entry are never suggested.
func TestToolchainCheck(t *testing.T) {
	base := t.TempDir()
	mk := func(dir string, progs ...string) string {
		d := filepath.Join(base, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if err := os.WriteFile(filepath.Join(d, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	system := mk("usr/bin", "python3")
	gobin := mk("go/bin", "go")
	cargo := mk("cargo/bin", "cargo")
	inRoot := mk("work/bin", "node")
	mk("rel/bin", "uv")
	pyenv := mk("pyenv/shims", "python3")
	roots := []config.Root{{Name: "main", Path: filepath.Join(base, "work"), Access: config.AccessReadWrite}}
	path := strings.Join([]string{"rel/bin", inRoot, pyenv, gobin, cargo}, string(filepath.ListSeparator))
	tests := []struct {
		name string
		have []string
		ok   bool
		want []string
		not  []string
	}{
		{"two toolchains", nil, false,
			[]string{"go (" + gobin + "), cargo (" + cargo + "): on your $PATH but not where run_command looks", `path = ["` + gobin + `", "` + cargo + `"]`},
			[]string{"node", "uv", "python3 ("}},
		{"one already listed", []string{gobin, "/opt/x"}, false,
			[]string{"cargo (" + cargo + ")", `path = ["` + gobin + `", "/opt/x", "` + cargo + `"]`}, []string{"go (" + gobin}},
		{"all listed", []string{gobin, cargo}, true, []string{"run_command finds every toolchain"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := toolchainCheck(path, []string{system}, tt.have, roots)
			if c.OK != tt.ok || c.Info == tt.ok {
				t.Errorf("toolchainCheck = %+v; want OK %v (else Info)", c, tt.ok)
			}
			for _, w := range tt.want {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("toolchainCheck detail = %q; want %q", c.Detail, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(c.Detail, n) {
					t.Errorf("toolchainCheck detail = %q; want no %q", c.Detail, n)
				}
			}
		})
	}
}

// TestSetupSuggestsToolchains: setup says what doctor says about a
// toolchain on the owner's $PATH that run_command cannot find; with no
// such toolchain (the twin) it says nothing.
func TestSetupSuggestsToolchains(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sdk", "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A toolchain program this machine's system folders lack (setup, like
	// doctor, stays quiet about one run_command finds there anyway).
	prog := ""
	for _, p := range setup.ToolchainPrograms {
		if tools.FindToolchain(p, tools.CommandPath()) == "" {
			prog = p
			break
		}
	}
	if prog == "" {
		t.Fatalf("every one of %v is in %v; this test needs one that is not", setup.ToolchainPrograms, tools.CommandPath())
	}
	if err := os.WriteFile(filepath.Join(dir, prog), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
	}{{dir, `path = ["` + dir + `"]`}, {"", ""}} {
		o := setup.Options{Provider: "vllm", Model: "m", SkipTest: true, Getenv: func(k string) string {
			if k == "PATH" {
				return tt.path
			}
			return ""
		}}
		res, err := setup.Run(context.Background(), setupPaths(t), o)
		if err != nil {
			t.Fatalf("Setup: %v", err)
		}
		if (tt.want == "") != (res.Toolchains == "") || !strings.Contains(res.Toolchains, tt.want) {
			t.Errorf("Setup with PATH %q: toolchains %q; want %q", tt.path, res.Toolchains, tt.want)
		}
	}
}
