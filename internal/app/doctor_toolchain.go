package app

import (
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/setup"
)

// toolchainCheck is doctor's line for setup.Toolchains: toolchains on the
// owner's $PATH that run_command cannot find, with the commands.path line
// that lets it.
func toolchainCheck(pathEnv string, system, have []string, roots []config.Root) Check {
	r := setup.Toolchains(pathEnv, system, have, roots)
	return Check{Name: "toolchains", OK: r.OK, Info: r.Info, Detail: r.Detail}
}
