package config

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// LoadHome is Load for the home at p: it loads p.ConfigFile and then refuses
// workspace roots that would put homard's own files or the owner's home
// folder within reach of tools (CheckRoots, with the owner's home folders
// from $HOME and the password database).
func LoadHome(p Paths) (*Config, error) {
	c, err := Load(p.ConfigFile)
	if err != nil {
		return nil, err
	}
	homes := OwnerHomes(os.Getenv)
	if err := errors.Join(CheckRoots(c.Workspace.Roots, p, homes), CheckCommandPath(c.Commands.Path, p, homes)); err != nil {
		return nil, err
	}
	return c, nil
}

// CheckCommandPath refuses every commands.path folder that is or contains
// one of homard's own paths or the owner's home, or lies inside homard's
// folders: the sandbox shows those folders whole to every command, without
// the masks a workspace root gets.
func CheckCommandPath(dirs []string, p Paths, homes []string) error {
	var errs []error
	for i, d := range dirs {
		if err := checkFolder(d, false, false, p, homes); err != nil {
			errs = append(errs, fmt.Errorf("%s: commands.path[%d] = %q: %w", p.ConfigFile, i, d, err))
		}
	}
	return errors.Join(errs...)
}

// OwnerHomes returns the owner's home folders: $HOME (from getenv) and the
// home folder the password database gives the current user, when either is
// an absolute path.
func OwnerHomes(getenv func(string) string) []string {
	var homes []string
	if h := getenv("HOME"); filepath.IsAbs(h) {
		homes = append(homes, filepath.Clean(h))
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		homes = append(homes, filepath.Clean(u.HomeDir))
	}
	return homes
}

// CheckRoots refuses every root that
//   - is or contains one of homard's own paths (the config file and its
//     folder's homard files, the data folder with the database, vault and
//     checkpoints, the --home folder): a tool, or a command run in that
//     root, could read the vault key or forge approvals in the database;
//   - lies inside homard's home, data or config folder, other than the
//     default workspace folder p.WorkspaceDir (or a folder inside it);
//   - is or contains one of homes, the owner's home folders: every key and
//     every other program's config would be in reach.
//
// Paths are compared as written and with symlinks resolved (for a path that
// does not exist yet, in its deepest existing parent). Each refusal names
// the root and says what to choose instead; all of them are joined.
func CheckRoots(roots []Root, p Paths, homes []string) error {
	var errs []error
	for i, r := range roots {
		if err := CheckRoot(r, p, homes); err != nil {
			errs = append(errs, fmt.Errorf("%s: workspace.roots[%d] (%s = %s): %w", p.ConfigFile, i, r.Name, r.Path, err))
		}
	}
	return errors.Join(errs...)
}

// homardPath is one of homard's own paths and what to call it.
type homardPath struct{ what, path string }

// CheckRoot is CheckRoots for one root; the error says why, without naming
// the root. A read-only root may contain homard's own paths (the
// workspace hides them from every tool and command) and the owner's home
// folder (the sensitive-file masks apply in it); it may still not be one
// of homard's paths nor lie inside homard's folders.
func CheckRoot(r Root, p Paths, homes []string) error {
	return checkFolder(r.Path, true, r.ReadOnly(), p, homes)
}

// checkFolder is CheckRoot for a folder given by path; readOnly relaxes
// the containment checks as CheckRoot says, and isRoot adds how a read-only
// root would be accepted to the refusals.
func checkFolder(path string, isRoot, readOnly bool, p Paths, homes []string) error {
	ownHint, homeHint, example := "", "", "~/.local/bin"
	if isRoot {
		example = "~/projects"
	}
	if isRoot && !readOnly {
		ownHint = ", or make the root read-only (access = \"ro\"): homard then hides its own files in it"
		homeHint = ", or make the root read-only (access = \"ro\"): tools may then read it but never change it, and credentials stay hidden"
	}
	roots := forms(path)
	own := []homardPath{
		{"config file", p.ConfigFile},
		{"data folder (database, vault key, checkpoints)", p.DataDir},
		{"database", p.DBFile},
		{"checkpoints", p.CheckpointDir},
	}
	// Folders a root may not lie inside: homard's home, its data folder and
	// the folder holding its config (XDG: ~/.config/homard).
	inside := []homardPath{{"data folder", p.DataDir}, {"config folder", filepath.Dir(p.ConfigFile)}}
	if p.Home != "" {
		own = append(own, homardPath{"home folder (--home)", p.Home})
		inside = append(inside, homardPath{"home folder (--home)", p.Home})
	}
	for _, h := range own {
		for _, hp := range forms(h.path) {
			for _, rp := range roots {
				if within(rp, hp) && !(readOnly && rp != hp) {
					return fmt.Errorf("it contains homard's own %s %s, which tools must never reach (a command there could read the vault key or forge approvals); choose a folder that does not, such as %s%s", h.what, h.path, example, ownHint)
				}
			}
		}
	}
	workspace := forms(p.WorkspaceDir)
	for _, h := range inside {
		for _, hp := range forms(h.path) {
			for _, rp := range roots {
				if !within(hp, rp) || anyWithin(workspace, rp) {
					continue
				}
				return fmt.Errorf("it lies inside homard's %s %s, next to homard's own files; choose a folder outside it, such as ~/projects, or the default workspace %s", h.what, h.path, p.WorkspaceDir)
			}
		}
	}
	if readOnly {
		return nil // credentials in it are masked as in every root
	}
	for _, home := range homes {
		for _, hp := range forms(home) {
			for _, rp := range roots {
				if within(rp, hp) {
					return fmt.Errorf("it is or contains your home folder %s: your keys, your shell's config and every program's data would be in reach of tools; choose a subfolder such as %s%s", home, example, homeHint)
				}
			}
		}
	}
	return nil
}

// anyWithin reports whether p lies in (or is) one of bases.
func anyWithin(bases []string, p string) bool {
	for _, b := range bases {
		if within(b, p) {
			return true
		}
	}
	return false
}

// within reports whether p is base or lies under it; both clean and
// absolute.
func within(base, p string) bool {
	if base == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == base || strings.HasPrefix(p, base+"/")
}

// forms returns p cleaned and, when different, with symlinks resolved in
// its deepest existing parent.
func forms(p string) []string {
	if p == "" {
		return nil
	}
	clean := filepath.Clean(p)
	real := realPath(clean)
	if real == clean {
		return []string{clean}
	}
	return []string{clean, real}
}

// realPath evaluates symlinks in the longest existing prefix of abs and
// appends the rest. It is the twin of workspace's realPath: config may
// import no other package of homard (internal/archtest), and the check
// must happen at load, before a workspace exists.
func realPath(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
