package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CommandPath is where run_command looks up a bare program name before
// commands.path: the fixed system folders, never homard's own $PATH.
func CommandPath() []string { return filepath.SplitList(commandPath) }

// ToolchainDirs are the folders where toolchains and version managers
// commonly put their programs, outside the system folders run_command
// searches: a program found there is named, with the commands.path line
// that lets run_command find it. home is the owner's home folder; empty
// leaves out the folders under it. Globs (nvm's one folder per Node
// version) are expanded, newest name last.
func ToolchainDirs(home string) []string {
	dirs := []string{"/usr/local/go/bin", "/opt/homebrew/bin"}
	if home == "" {
		return dirs
	}
	for _, d := range []string{"go/bin", ".cargo/bin", ".local/bin", ".pyenv/shims", ".nvm/versions/node/*/bin"} {
		p := filepath.Join(home, d)
		if !strings.Contains(d, "*") {
			dirs = append(dirs, p)
			continue
		}
		matches, _ := filepath.Glob(p)
		slices.Sort(matches)
		dirs = append(dirs, matches...)
	}
	return dirs
}

// FindToolchain returns the folder of dirs holding an executable file
// named name, or "" when none does. The last match wins, so the newest
// of several Node versions is the one named.
func FindToolchain(name string, dirs []string) string {
	found := ""
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, name)) {
			found = d
		}
	}
	return found
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// PathLine is the config line that adds dirs to commands.path, after the
// folders already listed (have).
func PathLine(have, dirs []string) string {
	all := slices.Clone(have)
	for _, d := range dirs {
		if !slices.Contains(all, d) {
			all = append(all, d)
		}
	}
	q := make([]string, len(all))
	for i, d := range all {
		q[i] = fmt.Sprintf("%q", d)
	}
	return "path = [" + strings.Join(q, ", ") + "]"
}

// notFoundHint is what run_command adds when it cannot find program
// name: that it looks only in the system folders and commands.path (not
// the owner's $PATH), and, when name is in a common toolchain folder,
// where, with the exact line to put under [commands] in config.toml.
func notFoundHint(name string, extra []string) string {
	home, _ := os.UserHomeDir()
	if dir := FindToolchain(name, ToolchainDirs(home)); dir != "" && !slices.Contains(extra, dir) {
		return fmt.Sprintf("; %s is in %s, which run_command does not search (it never uses your $PATH): the owner can add that folder to commands.path in config.toml, under [commands]: %s",
			name, dir, PathLine(extra, []string{dir}))
	}
	return fmt.Sprintf("; run_command searches only these folders, never the owner's $PATH: if %s is installed elsewhere (a toolchain folder such as /usr/local/go/bin or ~/.cargo/bin), the owner can add that folder to commands.path in config.toml, or the call can name the program by its absolute path",
		name)
}
