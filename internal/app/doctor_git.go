package app

import (
	"context"
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
