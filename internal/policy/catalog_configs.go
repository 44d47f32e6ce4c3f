package policy

// Config files: many programs read configuration from the working folder
// or the repository, and that file can change what the program does. Each
// catalog entry lists the ones its program reads, so the run_command card
// and the audit say which workspace files shaped a command
// (CommandVerdict.Configs).
//
// A listed file changes a class only for a concrete reason: a file that
// can make a read-class invocation run a program is why that invocation
// is classed runs code in the entry's grammar (cargo metadata and tree,
// cargo fmt, npm help, every yarn command). Where the sandbox neutralises
// the file (git's repository config, go's toolchain line) the entry stays
// read, and the reason is written next to it. Entries not listed read no
// such file: the GNU tools, tar, zip, unzip, find, gofmt, sed, awk, perl
// (which since 5.26 leaves "." out of @INC) and php (whose CLI ignores a
// php.ini in the working folder).

// entryConfigs maps a catalog entry to the files its program reads, as
// paths relative to the working folder or (git, and the build tools that
// look upwards for their project file) to the repository or project root.
// A trailing "/" names a folder.
var entryConfigs = map[string][]string{
	// Stays read: the sandbox binds an allow-listed copy of every
	// repository config over the original (no drivers, filters, textconv,
	// includes, fsmonitor, ssh or gpg programs), so a .gitattributes naming
	// a filter or diff driver selects nothing; hooks are off
	// (core.hooksPath=/dev/null); .gitmodules' "update = !command" is only
	// obeyed by git submodule, which is refused.
	"git": {".git/config", ".gitattributes", ".git/info/attributes", ".gitignore", ".git/info/exclude",
		".gitmodules", ".mailmap"},
	// Stays read: a go or toolchain line asking for another toolchain is
	// refused, not fetched or run, under GOTOOLCHAIN=local; GOENV=off
	// ignores the user's go env file; GOPROXY=off and no network keep
	// module downloads out; go list's options that compile or name a
	// program (-compiled, -export, -exec, -toolexec) already run code.
	"go": {"go.mod", "go.sum", "go.work", "go.work.sum", "vendor/modules.txt"},
	// .cargo/config.toml (looked up in every parent folder too) can name
	// the rustc and rustc-wrapper that cargo metadata and cargo tree run to
	// learn the target, and its [alias] table can shadow cargo fmt (an
	// external subcommand): those run code (cargoGrammar). build.rs is the
	// build script every build runs.
	"cargo": {"Cargo.toml", "Cargo.lock", ".cargo/config.toml", ".cargo/config", "rust-toolchain.toml",
		"rust-toolchain", "build.rs"},
	// The makefile is the program: make always runs code.
	"make": {"GNUmakefile", "makefile", "Makefile"},
	// package.json's scripts are what npm run/test/install execute (runs
	// code); .npmrc's viewer and browser settings name the program npm help
	// starts, so npm help runs code (the sandbox also masks .npmrc, a
	// sensitive file, unless the owner allows it). ls, explain and the
	// like only read.
	"npm": {"package.json", "package-lock.json", "npm-shrinkwrap.json", ".npmrc"},
	// As npm; .pnpmfile.cjs hooks run only while dependencies are resolved
	// (install, add, update: runs code), and a packageManager field asking
	// for another pnpm needs a download the sandbox has no network for, so
	// pnpm ls stays read.
	"pnpm": {"package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml", ".npmrc", ".pnpmfile.cjs"},
	// .yarnrc's yarn-path and .yarnrc.yml's yarnPath hand every yarn
	// command to the script they name, and Yarn 2+ loads the plugins
	// .yarnrc.yml lists: every yarn command runs code (npmGrammar).
	"yarn": {"package.json", "yarn.lock", ".yarnrc", ".yarnrc.yml", ".pnp.cjs"},
	// npx runs a package's bin, the project's own node_modules/.bin first
	// (runs code).
	"npx": {"package.json", ".npmrc", "node_modules/.bin/"},
	// Only when run as code: the script's folder (with -m, the working
	// folder) comes first on sys.path, so a module there shadows the
	// standard library, and tools run with -m (pytest, pip, build) read
	// the project's config. python --version reads none of them.
	"python": {"pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini", "conftest.py"},
	// package.json's "type" and "imports" decide how a script is loaded
	// (node always runs code).
	"node": {"package.json"},
	// Harmless: ignore files only choose which files are searched.
	"rg": {".gitignore", ".ignore", ".rgignore"},
	"fd": {".gitignore", ".ignore", ".fdignore"},
}

// attachConfigs sets each entry's configs from entryConfigs; a name that is
// not an entry is a mistake in the table.
func attachConfigs(m map[string]*grammar) {
	for name, files := range entryConfigs {
		g, ok := m[name]
		if !ok {
			panic("catalog: configs for " + name + ", which is not an entry")
		}
		g.configs = files
	}
}
