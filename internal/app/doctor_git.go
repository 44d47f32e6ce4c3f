package app

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// gitSafetyCheck reads the owner's git config (system and global, from the
// root folder so no repository's config counts) and recommends
// safe.bareRepository = explicit: without it, git run anywhere under a
// folder shaped like a bare repository opens it and obeys its config and
// hooks, so a repository planted in a root would run code when the owner
// runs git there. homard's own git runs with it set in the sandbox
// (tools.gitSafety). env is the environment git runs with; nil means
// homard's.
func gitSafetyCheck(ctx context.Context, env []string) Check {
	const name = "git"
	if _, err := exec.LookPath("git"); err != nil {
		return Check{Name: name, Info: true, Detail: "git is not installed: nothing to check"}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "git", "config", "--get", "safe.bareRepository")
	c.Dir = "/"
	c.Env = env
	out, _ := c.Output() // exit 1: not set
	v := strings.ToLower(strings.TrimSpace(string(out)))
	if v == "explicit" {
		return Check{Name: name, OK: true, Detail: "safe.bareRepository = explicit: git opens a bare repository only when you name it"}
	}
	detail := "safe.bareRepository is not set to explicit"
	if v != "" {
		detail = "safe.bareRepository = " + v
	}
	return Check{Name: name, Info: true, Detail: detail + ": git run inside a folder shaped like a bare repository opens it and runs its hooks; " +
		"homard holds such folders for your approval, and `git config --global safe.bareRepository explicit` stops git from opening one by itself"}
}

// scanChecks says what listing each writable root's sensitive files costs
// before a sandboxed run (changeset.Gate.Hide): the first listing, and the
// next one, which re-reads only the folders that changed.
func scanChecks(r *Runtime) []Check {
	var out []Check
	for _, root := range r.Workspace.Roots() {
		if root.ReadOnly {
			continue
		}
		if _, err := r.Gate.Hide(root.Name, root.Path); err != nil {
			out = append(out, Check{Name: "scan", Detail: root.Name + ": " + err.Error()})
			continue
		}
		cold, _ := r.Gate.HideCost(root.Name)
		r.Gate.Hide(root.Name, root.Path)
		warm, _ := r.Gate.HideCost(root.Name)
		out = append(out, Check{Name: "scan", OK: true, Detail: fmt.Sprintf(
			"%s: %d entries in %d folders, %d hidden from commands; listing them takes %.1f ms, then %.1f ms per run (only changed folders are read again)",
			root.Name, cold.Entries, cold.Folders, cold.Hidden, ms(cold.Took), ms(warm.Took))})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
