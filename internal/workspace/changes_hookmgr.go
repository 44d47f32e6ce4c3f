package workspace

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// Hook managers name the scripts they run. A repository whose owner uses
// husky, lefthook or pre-commit runs, on the owner's next commit, whatever
// its config or hook files call: `run: ./scripts/lint.sh` in lefthook.yml,
// `entry: tools/check.py` in a local pre-commit hook, `./scripts/x.sh` in
// .husky/pre-commit. Those scripts are host-executed whoever writes them,
// so the grader reads these files in each repository's worktree and
// protects the relative paths they name. The reading is a heuristic (no
// YAML or shell is parsed): a token counts when it is a relative path
// with a folder or a script extension; what it misses is still ordinary
// code the owner reviews, and the config files themselves are host tools.

// hookConfigs are the files, relative to a worktree, whose contents name
// scripts; hookDirs are folders whose files do.
var (
	hookConfigs = []string{"lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
		"lefthook-local.yml", "lefthook-local.yaml", ".pre-commit-config.yaml", ".pre-commit-config.yml"}
	hookDirs = []string{".husky"}
)

// scriptToken matches a relative path a hook file could run; compiled on
// first use (init allocations stay small for an idle serve).
var scriptToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s"'=:\[,(])((?:\./|\.\./)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*\.(?:sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl|php)|\./[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*)`)
})

// readHookManagers records the scripts rp's hook managers name.
func (g *grader) readHookManagers(rp *repo) {
	var files []string
	for _, f := range hookConfigs {
		files = append(files, path.Join(rp.work, f))
	}
	for _, d := range hookDirs {
		names, err := listBeneath(g.dirfd, path.Join(rp.work, d))
		if err != nil {
			continue
		}
		for _, n := range names {
			files = append(files, path.Join(rp.work, d, n))
		}
	}
	for _, f := range files {
		b, err := readBeneath(g.dirfd, f, 256<<10)
		if err != nil || b == nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
				continue
			}
			for _, m := range scriptToken().FindAllStringSubmatch(line, -1) {
				rel := g.inRoot(m[1], rp.work)
				if rel == "" || rel == "." || strings.HasPrefix(m[1], "/") {
					continue
				}
				rp.named = append(rp.named, namedPath{rel: rel, key: "run by " + path.Base(f)})
			}
		}
	}
}
