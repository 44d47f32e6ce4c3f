package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestEveryCommandKeepsToItsOwner runs every command of the CLI from bob's
// home pointed at alice's store (issue 27 point 2: one owner never sees or
// answers another's data, through any CLI path). On PostgreSQL a shared
// schema is its first owner's: every command that opens a store is
// refused with the error that says what to do, alice's rows are the same
// to the byte after each command, and no output shows her data. The twin:
// the same commands from alice's own home are not refused. On SQLite the
// barrier is the file system: a home's data folder is its owner's alone
// (0700, the database 0600), which the test checks instead.
func TestEveryCommandKeepsToItsOwner(t *testing.T) {
	bin := buildHomard(t)
	alice := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"XDG_DATA_HOME=" + t.TempDir(), "LANG=C"}
	env = append(env, storeEnv(t, alice)...)
	runHomard := func(home string, args ...string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--home", home}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("homard %s did not end within a minute:\n%s", strings.Join(args, " "), out)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return exitOK, string(out)
	}
	const marker = "alice-only-7f3c9e"
	for _, args := range [][]string{{"init"}, {"memory", "add", "the garage code is " + marker}, {"token", "create"}} {
		if code, out := runHomard(alice, args...); code != exitOK {
			t.Fatalf("alice: homard %s = exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	if !onPostgres() {
		// One machine, one owner per home: the unix user is the barrier.
		for p, want := range map[string]os.FileMode{filepath.Join(alice, "data"): 0o700, filepath.Join(alice, "data", "homard.db"): 0o600} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s has mode %v; want %v: another user of the machine could read alice's store", p, got, want)
			}
		}
		return
	}
	raw := rawStore(t, alice, env)
	before := tableSums(t, raw)
	if len(before) < 20 {
		t.Fatalf("alice's schema lists %d tables; want the store's", len(before))
	}

	bob := t.TempDir()
	if code, out := runHomard(bob, "init"); code != exitOK {
		t.Fatalf("bob: homard init = exit %d\n%s", code, out)
	}
	setOwner(t, bob, "bob")

	// What may run without a store: it opens none (and so reads nothing).
	noStore := map[string]bool{
		"homard version": true, "homard completion bash": true, "homard completion fish": true,
		"homard completion powershell": true, "homard completion zsh": true, "homard init": true,
		"homard audit verify":   true, // a file given with --file, checked alone
		"homard config migrate": true, "homard service status": true, "homard service uninstall": true,
		"homard eval":  true, // its scenarios run in homes of their own
		"homard logs":  true, // the home's request log, a file
		"homard setup": true, // the home's config and vault
	}
	// Commands refused before they would open a store, and why.
	refusedFirst := map[string]string{
		"homard chat":            "needs a terminal",
		"homard service install": "the service will not see it", // HOMARD_STORE_URL
	}
	// Arguments and flags a command checks before it opens the store.
	extra := map[string][]string{
		"homard pair":                  {"telegram"},
		"homard memory review approve": {"all"},
		"homard setup":                 {"--non-interactive", "--provider", "openai", "--model", "m", "--skip-test"},
		"homard run":                   {"hello"},
		"homard policy replay":         {"--config", filepath.Join(bob, "config.toml")},
		"homard store migrate":         {"--to", filepath.Join(t.TempDir(), "copy.db")},
		"homard audit verify":          {"--file", filepath.Join(t.TempDir(), "none.jsonl")},
		"homard secret set":            {"NAME", "--host", "example.com"},
		"homard task add":              {"NAME", "PROMPT", "--every", "1h"},
		"homard tool call":             {"read_file", `{"path":"x"}`},
		"homard totp remove":           {"--code", "123456"},
		"homard checkpoint rollback":   {"1"},
	}
	seen := 0
	for _, path := range leaves(t) {
		args := strings.Fields(strings.TrimPrefix(path, "homard"))
		if a, ok := extra[path]; ok {
			args = append(args, a...)
		} else {
			req, _, _ := positionals(commandUse(t, path))
			for range req {
				args = append(args, "1")
			}
		}
		code, out := runHomard(bob, args...)
		if strings.Contains(out, marker) {
			t.Errorf("bob: homard %s showed alice's memory:\n%s", strings.Join(args, " "), out)
		}
		if why, ok := refusedFirst[path]; ok {
			if code == exitOK || !strings.Contains(out, why) {
				t.Errorf("bob: homard %s = exit %d; want it refused (%s):\n%s", strings.Join(args, " "), code, why, out)
			}
		} else if !noStore[path] && (code == exitOK || !strings.Contains(out, "another owner's data")) {
			t.Errorf("bob: homard %s = exit %d; want it refused as another owner's store:\n%s", strings.Join(args, " "), code, out)
		}
		if after := tableSums(t, raw); !maps.Equal(before, after) {
			t.Fatalf("bob: homard %s changed alice's tables %v", strings.Join(args, " "), changed(before, after))
		}
		seen++
	}
	if seen < 80 {
		t.Fatalf("ran %d commands; want every leaf of the CLI (80 or more)", seen)
	}

	// The twin: alice's own home reads her store.
	if code, out := runHomard(alice, "memory", "list"); code != exitOK || !strings.Contains(out, marker) {
		t.Errorf("alice: homard memory list = exit %d without her memory:\n%s", code, out)
	}
}

// leaves returns the command path of every command of the CLI that runs.
func leaves(t *testing.T) []string {
	t.Helper()
	var out []string
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Runnable() && !cmd.HasSubCommands() && cmd.Name() != "help" {
			out = append(out, cmd.CommandPath())
		}
		for _, s := range cmd.Commands() {
			walk(s)
		}
	}
	walk(testRoot())
	return out
}

// commandUse returns the Use line of the command at path.
func commandUse(t *testing.T, path string) string {
	t.Helper()
	cmd, _, err := testRoot().Find(strings.Fields(strings.TrimPrefix(path, "homard")))
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Use
}

func testRoot() *cobra.Command {
	c := &cli{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, say: sayFor(nil, func(string) string { return "" })}
	root := c.rootCmd()
	return root
}

// setOwner writes owner into home's config.
func setOwner(t *testing.T, home, owner string) {
	t.Helper()
	f := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	out := regexp.MustCompile(`(?m)^owner = .*$`).ReplaceAll(b, []byte(`owner = "`+owner+`"`))
	if bytes.Equal(out, b) {
		t.Fatalf("no owner line in %s:\n%s", f, b)
	}
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tableSums hashes every row of every table of the schema db is on.
func tableSums(t *testing.T, db *sql.DB) map[string][32]byte {
	t.Helper()
	ctx := t.Context()
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	snap := make(map[string][32]byte, len(tables))
	for _, tb := range tables {
		r, err := db.QueryContext(ctx, `SELECT * FROM `+tb)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := r.Columns()
		var lines []string
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%q", vals))
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		slices.Sort(lines)
		snap[tb] = sha256.Sum256([]byte(strings.Join(lines, "\n")))
	}
	return snap
}

// changed lists the tables whose rows differ between two snapshots.
func changed(a, b map[string][32]byte) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
