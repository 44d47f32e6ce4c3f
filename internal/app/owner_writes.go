package app

import (
	"os"
	"path/filepath"
)

// The owner's own writes (a checkpoint rollback, memory added or
// forgotten by hand) leave an audit record naming the owner as the actor,
// like every tool call does: the chain shows every change homard made,
// whoever asked for it. This lives in app because it joins the gate or
// memory with the audit chain; the writing itself is the gate's and
// memory's.

// ownerGitConfigs are the git config files git reads in every repository
// besides the repository's own: the system file and the owner's global
// ones. A hooks path set there makes files in a root host-executed.
func ownerGitConfigs() []string {
	out := []string{"/etc/gitconfig"}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		out = append(out, filepath.Join(x, "git", "config"))
	}
	return out
}
