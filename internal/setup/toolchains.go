package setup

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/tools"
)

// ToolchainReport is what Toolchains found: OK when run_command finds
// every toolchain on the owner's $PATH, else Info with the commands.path
// line to add in Detail.
type ToolchainReport struct {
	OK, Info bool
	Detail   string
}

// ToolchainPrograms are the programs an owner most often expects
// run_command to find because their shell does: toolchains and version
// managers install them outside the system folders.
var ToolchainPrograms = []string{"go", "node", "npm", "cargo", "python3", "uv"}

// Toolchains notices ToolchainPrograms on the owner's $PATH (pathEnv)
// that run_command cannot find, because it never uses $PATH: only the
// system folders (tools.CommandPath) and commands.path (have). It suggests the exact
// commands.path line. A folder of $PATH that is relative, or inside a
// writable root (config refuses it: a model could plant a program
// there), is never suggested.
func Toolchains(pathEnv string, system, have []string, roots []config.Root) ToolchainReport {
	var c ToolchainReport
	searched := append(slices.Clone(system), have...)
	var named, dirs []string
	for _, prog := range ToolchainPrograms {
		if tools.FindToolchain(prog, searched) != "" {
			continue // run_command finds one already
		}
		for _, dir := range filepath.SplitList(pathEnv) {
			if !filepath.IsAbs(dir) || insideWritableRoot(filepath.Clean(dir), roots) || tools.FindToolchain(prog, []string{dir}) == "" {
				continue
			}
			dir = filepath.Clean(dir)
			named = append(named, prog+" ("+dir+")")
			if !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
			break
		}
	}
	if len(named) == 0 {
		c.OK, c.Detail = true, "run_command finds every toolchain on your $PATH ("+strings.Join(ToolchainPrograms, ", ")+") that it may use" // lang:en: doctor's check (internal/app), English
		return c
	}
	c.Info = true
	c.Detail = fmt.Sprintf("%s: on your $PATH but not where run_command looks (it never uses $PATH: %s and commands.path); to let it run them, put under [commands] in config.toml: %s", // lang:en: doctor's check
		strings.Join(named, ", "), strings.Join(system, ", "), tools.PathLine(have, dirs))
	return c
}

func insideWritableRoot(dir string, roots []config.Root) bool {
	for _, r := range roots {
		if !r.ReadOnly() && (dir == r.Path || strings.HasPrefix(dir, r.Path+string(filepath.Separator))) {
			return true
		}
	}
	return false
}
