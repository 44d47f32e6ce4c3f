package policy

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// want is a catalog verdict in short: a class, or a refusal by rule.
type want struct {
	class  Class
	refuse string // rule, when refused
}

var (
	read   = want{class: ClassRead}
	writes = want{class: ClassWrite}
	runs   = want{class: ClassRunsCode}
)

func refused(rule string) want { return want{refuse: rule} }

type catalogCase struct {
	argv []string
	want want
}

func argv(s ...string) []string { return s }

func checkCatalog(t *testing.T, cases []catalogCase) {
	t.Helper()
	for _, c := range cases {
		v := ClassifyCommand(cmd(c.argv[0], c.argv[1:]...), nil)
		switch {
		case c.want.refuse != "":
			if !v.Refused || v.Rule != c.want.refuse {
				t.Errorf("ClassifyCommand(%q) = refused %v by %q (%s), class %v; want refused by %s", c.argv, v.Refused, v.Rule, v.Reason, v.Class, c.want.refuse)
			}
		case v.Refused || v.Class != c.want.class:
			t.Errorf("ClassifyCommand(%q) = refused %v (%s: %s), class %v; want class %v", c.argv, v.Refused, v.Rule, v.Reason, v.Class, c.want.class)
		case v.ReadOnly != (v.Class == ClassRead):
			t.Errorf("ClassifyCommand(%q): ReadOnly %v with class %v", c.argv, v.ReadOnly, v.Class)
		}
	}
}

// TestCatalogGNU: GNU getopt_long programs, each option in every
// spelling: long, unique abbreviation, =value, separate value, attached
// short value, clusters.
func TestCatalogGNU(t *testing.T) {
	checkCatalog(t, []catalogCase{
		{argv("ls"), read},
		{argv("ls", "-l"), read},
		{argv("ls", "-la"), read},
		{argv("ls", "--all"), read},
		{argv("ls", "--almost"), read},              // unique abbreviation of --almost-all
		{argv("ls", "--al"), runs},                  // ambiguous: --all or --almost-all
		{argv("ls", "--color"), read},               // optional value absent
		{argv("ls", "--color=never"), read},         // optional value attached
		{argv("ls", "-w", "80"), read},              // separate value
		{argv("ls", "-w80"), read},                  // attached short value
		{argv("ls", "--width", "80"), read},         // long, separate value
		{argv("ls", "--width=80"), read},            // long, =value
		{argv("ls", "--wid=80"), read},              // abbreviation, =value
		{argv("ls", "-lw80", "src"), read},          // cluster ending with a value
		{argv("ls", "--all=yes"), runs},             // a value where none is taken
		{argv("ls", "--frobnicate"), runs},          // unknown long option
		{argv("ls", "-j"), runs},                    // unknown short option
		{argv("ls", "-lj"), runs},                   // unknown letter in a cluster
		{argv("ls", "src", "-l"), read},             // getopt permutes
		{argv("ls", "--", "--frobnicate"), read},    // after --, an operand
		{argv("cat", "-n", "notes.txt"), read},      //
		{argv("head", "-5", "f"), read},             // obsolete -NUM
		{argv("head", "-n", "5", "f"), read},        //
		{argv("head", "--lines=5", "f"), read},      //
		{argv("tail", "-f", "log"), read},           //
		{argv("wc", "-l"), read},                    //
		{argv("grep", "-rn", "TODO", "."), read},    //
		{argv("grep", "-e", "x", "f"), read},        //
		{argv("grep", "--regexp=x", "f"), read},     //
		{argv("grep", "--reg", "x", "f"), read},     // abbreviation, separate value
		{argv("grep", "-C3", "x", "f"), read},       //
		{argv("grep", "-5", "x", "f"), read},        //
		{argv("grep", "-f", "pats", "f"), read},     //
		{argv("sort", "in.txt"), read},              //
		{argv("sort", "-o", "out", "in"), writes},   // -o writes
		{argv("sort", "-oout", "in"), writes},       // attached
		{argv("sort", "-nro", "out", "in"), writes}, // in a cluster
		{argv("sort", "--output=out", "in"), writes},
		{argv("sort", "--out", "out", "in"), writes}, // abbreviation
		{argv("sort", "--compress-program=gzip", "in"), runs},
		{argv("sort", "--compress-program=sh", "in"), refused("limit.shell")},
		{argv("uniq", "in"), read},
		{argv("uniq", "in", "out"), writes},
		{argv("xxd", "f"), read},
		{argv("xxd", "-r", "dump", "f"), writes},
		{argv("tree", "-L", "2"), read},
		{argv("tree", "-o", "out.txt"), writes},
		{argv("date", "+%s"), read},
		{argv("date", "-s", "2020-01-01"), writes},
		{argv("date", "--set=2020-01-01"), writes},
		{argv("echo", "--output=x", "-e", "a;b", "$(id)"), read}, // literal: every argument is text
		{argv("printf", "%s\n", "-x"), read},
		{argv("true", "--anything"), read},
		{argv("diff", "-u", "a", "b"), read},
		{argv("diff", "--unified=3", "a", "b"), read},
		{argv("cmp", "a", "b"), read},
		{argv("file", "x"), read},
		{argv("file", "-C", "-m", "magic"), writes},
		{argv("stat", "-c", "%s", "f"), read},
		{argv("du", "-sh", "."), read},
		{argv("df", "-h"), read},
		{argv("sha256sum", "-c", "SUMS"), read},
		{argv("basename", "a/b.go", ".go"), read},
		{argv("realpath", "x"), read},
		{argv("seq", "-5", "5"), read},
		{argv("tr", "a-z", "A-Z"), read},
		{argv("nl", "f"), read},
		{argv("od", "-An", "-tx1", "f"), read},
		{argv("cut", "-d:", "-f1", "f"), read},

		{argv("mkdir", "build"), writes},
		{argv("mkdir", "-p", "a/b"), writes},
		{argv("mkdir", "--parents", "a/b"), writes},
		{argv("mkdir", "--par", "a/b"), writes},
		{argv("mkdir", "-pv", "a/b"), writes},
		{argv("mkdir", "-m", "700", "a"), writes},
		{argv("mkdir", "-m700", "a"), writes},
		{argv("mkdir", "--mode", "700", "a"), writes},
		{argv("mkdir", "-x"), runs},
		{argv("touch", "a"), writes},
		{argv("cp", "a", "b"), writes},
		{argv("cp", "-t", "dir", "a", "b"), writes},
		{argv("mv", "a", "b"), writes},
		{argv("rm", "a"), writes},
		{argv("rm", "-rf", "build"), writes},
		{argv("rmdir", "a"), writes},
		{argv("ln", "-s", "a", "b"), writes},
		{argv("chmod", "+x", "run.sh"), writes},
		{argv("chmod", "-R", "755", "."), writes},
		{argv("tee", "out"), writes},
		{argv("tar", "tf", "a.tar"), read},
		{argv("tar", "-tzf", "a.tgz"), read},
		{argv("tar", "--list", "--file=a.tar"), read},
		{argv("tar", "czf", "a.tgz", "src"), writes},
		{argv("tar", "-xf", "a.tar"), writes},
		{argv("tar", "--extract", "--file", "a.tar"), writes},
		{argv("tar", "--extr", "--fil", "a.tar"), runs}, // --fil: --file or --files-from
		{argv("tar", "--extr", "--file=a.tar"), writes}, // abbreviation
		{argv("tar", "xf", "a.tar", "--to-command=cat"), runs},
		{argv("tar", "xf", "a.tar", "--to-command=sh"), refused("limit.shell")},
		{argv("tar", "xf", "a.tar", "--to-com=bash"), refused("limit.shell")},
		{argv("tar", "-I", "sh", "-xf", "a"), refused("limit.shell")},
		{argv("tar", "-Ish", "-xf", "a"), refused("limit.shell")},
		{argv("tar", "cf", "a.tar", "--checkpoint-action=exec=sh", "."), refused("limit.shell")},
		{argv("tar", "cf", "a.tar", "--checkpoint-action=exec=id", "."), runs},
		{argv("gzip", "f"), writes},
		{argv("gzip", "-c", "f"), read},
		{argv("gzip", "--stdout", "f"), read},
		{argv("gunzip", "f.gz"), writes},
		{argv("zcat", "f.gz"), read},
		{argv("zip", "-r", "a.zip", "src"), writes},
		{argv("zip", "-T", "a.zip", "f"), writes},
		{argv("zip", "-TT", "sh -c id", "a.zip", "f"), runs},
		{argv("unzip", "-l", "a.zip"), read},
		{argv("unzip", "a.zip"), writes},
	})
}

// TestCatalogGoFlag: Go's flag package: -name and --name, =value or a
// separate value, no clusters, parsing stops at the first operand.
func TestCatalogGoFlag(t *testing.T) {
	checkCatalog(t, []catalogCase{
		{argv("gofmt", "-l", "."), read},
		{argv("gofmt", "--l", "."), read},
		{argv("gofmt", "-d", "x.go"), read},
		{argv("gofmt", "-r", "a -> b", "x.go"), read},
		{argv("gofmt", "-w", "x.go"), writes},
		{argv("gofmt", "--w", "x.go"), writes},
		{argv("gofmt", "-w=true", "x.go"), writes},
		{argv("gofmt", "x.go", "-w"), read},  // flags end at the first operand: "-w" is a file
		{argv("gofmt", "-lw", "x.go"), runs}, // no clusters in Go's flag package
		{argv("gofmt", "-x"), runs},
		{argv("go", "version"), read},
		{argv("go", "env"), read},
		{argv("go", "env", "GOPATH"), read},
		{argv("go", "env", "-w", "GOFLAGS=-x"), writes},
		{argv("go", "list", "./..."), read},
		{argv("go", "list", "-json", "./..."), read},
		{argv("go", "list", "-export", "./..."), runs},
		{argv("go", "list", "-toolexec=sh", "./..."), runs},
		{argv("go", "doc", "fmt"), read},
		{argv("go", "mod", "graph"), read},
		{argv("go", "mod", "tidy"), writes},
		{argv("go", "fmt", "./..."), writes},
		{argv("go", "build", "./..."), runs},
		{argv("go", "build", "-o", "bin/x", "."), runs},
		{argv("go", "test", "-race", "./..."), runs},
		{argv("go", "vet", "./..."), runs},
		{argv("go", "run", "."), runs},
		{argv("go", "generate"), runs},
		{argv("go", "frobnicate"), runs},
		{argv("go", "bug"), refused("limit.argv")},
	})
}

// TestCatalogGit: git parse-options with abbreviations; the options that
// hand git another program, config or repository are refused in every
// spelling.
func TestCatalogGit(t *testing.T) {
	checkCatalog(t, []catalogCase{
		{argv("git", "status"), read},
		{argv("git", "status", "-sb"), read},
		{argv("git", "status", "--short", "--branch"), read},
		{argv("git", "status", "--porc"), read},
		{argv("git", "--no-pager", "log"), read},
		{argv("git", "-C", "sub", "status"), read},
		{argv("git", "--version"), read},
		{argv("git", "log"), read},
		{argv("git", "log", "--oneline", "-5"), read},
		{argv("git", "log", "--onel"), read},
		{argv("git", "log", "-n5"), read},
		{argv("git", "log", "-n", "5"), read},
		{argv("git", "log", "--max-count=5"), read},
		{argv("git", "log", "--max-count", "5"), read},
		{argv("git", "log", "-p", "--stat", "main..HEAD", "--", "a.go"), read},
		{argv("git", "log", "-Sfoo"), read},
		{argv("git", "log", "--pretty=format:%h %s"), read},
		{argv("git", "log", "--output-indicator-new=+"), read},
		{argv("git", "log", "--frobnicate"), runs},
		{argv("git", "log", "--show-signature"), runs},
		{argv("git", "show", "HEAD"), read},
		{argv("git", "diff"), read},
		{argv("git", "diff", "--cached"), read},
		{argv("git", "diff", "--no-index", "a", "b"), read},
		{argv("git", "diff", "--no-ext-diff"), read},
		{argv("git", "diff", "--no-ext"), read},
		{argv("git", "diff", "--text"), read},
		{argv("git", "grep", "-n", "TODO"), read},
		{argv("git", "grep", "-e", "x", "--", "*.go"), read},
		{argv("git", "grep", "-C3", "x"), read},
		{argv("git", "grep", "--no-index", "x"), read},
		{argv("git", "blame", "a.go"), read},
		{argv("git", "rev-parse", "--show-toplevel"), read},
		{argv("git", "rev-parse", "--git-dir"), read}, // a query here, not the global option
		{argv("git", "ls-files"), read},
		{argv("git", "branch"), read},
		{argv("git", "branch", "-a"), read},
		{argv("git", "branch", "--list", "x*"), read},
		{argv("git", "branch", "x"), writes},
		{argv("git", "branch", "-d", "x"), writes},
		{argv("git", "tag"), read},
		{argv("git", "tag", "-l"), read},
		{argv("git", "tag", "v1"), writes},
		{argv("git", "tag", "-a", "v1", "-m", "x"), writes},
		{argv("git", "tag", "-a", "v1"), runs}, // opens an editor
		{argv("git", "stash", "list"), read},
		{argv("git", "stash", "show", "-p"), read},
		{argv("git", "stash"), writes},
		{argv("git", "stash", "pop"), writes},
		{argv("git", "add", "."), writes},
		{argv("git", "add", "-p"), runs},
		{argv("git", "commit", "-m", "x"), writes},
		{argv("git", "commit", "-am", "x"), writes},
		{argv("git", "commit", "--message=x"), writes},
		{argv("git", "commit", "--mess", "x"), writes},
		{argv("git", "commit"), runs}, // opens an editor
		{argv("git", "restore", "a.go"), writes},
		{argv("git", "switch", "-c", "x"), writes},
		{argv("git", "checkout", "main"), writes},
		{argv("git", "init"), writes},
		{argv("git", "mv", "a", "b"), writes},
		{argv("git", "rm", "a"), writes},
		{argv("git", "reset", "HEAD~1"), writes},
		{argv("git", "merge", "x"), writes},
		{argv("git", "rebase", "main"), writes},
		{argv("git", "rebase", "-i", "main"), runs},
		{argv("git", "cherry-pick", "abc"), writes},
		{argv("git", "frobnicate"), runs}, // an alias can be anything

		{argv("git", "-c", "core.pager=sh", "log"), refused("limit.argv")},
		{argv("git", "-ccore.pager=sh", "log"), refused("limit.argv")},
		{argv("git", "--config-env=core.pager=X", "log"), refused("limit.argv")},
		{argv("git", "--config-e", "x", "log"), refused("limit.argv")},
		{argv("git", "--exec-path"), refused("limit.argv")},
		{argv("git", "--exec-path=/tmp", "status"), refused("limit.argv")},
		{argv("git", "--exec-p=/tmp", "status"), refused("limit.argv")},
		{argv("git", "--git-dir=x", "status"), refused("limit.argv")},
		{argv("git", "--git-dir", "x", "status"), refused("limit.argv")},
		{argv("git", "--git-d=x", "status"), refused("limit.argv")},
		{argv("git", "--work-tree=x", "status"), refused("limit.argv")},
		{argv("git", "--work-t", "x", "status"), refused("limit.argv")},
		{argv("git", "--namespace=x", "log"), refused("limit.argv")},
		{argv("git", "grep", "-O", "x"), refused("limit.argv")},
		{argv("git", "grep", "--no-index", "-Ofoo", "x"), refused("limit.argv")},
		{argv("git", "grep", "-nOfoo", "x"), refused("limit.argv")},
		{argv("git", "grep", "--open-files-in-pager=sh", "x"), refused("limit.argv")},
		{argv("git", "grep", "--open", "x"), refused("limit.argv")},
		{argv("git", "grep", "--textconv", "x"), refused("limit.argv")},
		{argv("git", "log", "--output=x"), refused("limit.argv")},
		{argv("git", "log", "--out=x"), refused("limit.argv")},
		{argv("git", "log", "--outp", "x"), refused("limit.argv")},
		{argv("git", "diff", "--no-index", "--output=f", "a", "b"), refused("limit.argv")},
		{argv("git", "diff", "-Oorder"), refused("limit.argv")},
		{argv("git", "diff", "--ext-diff"), refused("limit.argv")},
		{argv("git", "diff", "--ext"), refused("limit.argv")},
		{argv("git", "diff", "--tex"), refused("limit.argv")}, // --text or --textconv
		{argv("git", "show", "--textconv", "HEAD:a"), refused("limit.argv")},
		{argv("git", "cat-file", "--filters", "HEAD:a"), refused("limit.argv")},
		{argv("git", "rebase", "-x", "id", "main"), refused("limit.argv")},
		{argv("git", "rebase", "--exec=id", "main"), refused("limit.argv")},
		{argv("git", "rebase", "--exe", "id", "main"), refused("limit.argv")},
		{argv("git", "init", "--template=t"), refused("limit.argv")},
		{argv("git", "archive", "--remote=r", "--exec=id", "HEAD"), refused("limit.argv")},
		{argv("git", "frobnicate", "--upload-pack=touch /tmp/x"), refused("limit.argv")},
		{argv("git", "frobnicate", "--upload-p=x"), refused("limit.argv")},
		{argv("git", "frobnicate", "--receive-pack", "x"), refused("limit.argv")},
		{argv("git", "frobnicate", "ext::sh -c id"), refused("limit.argv")},
		{argv("git", "config", "core.hooksPath", "/tmp"), refused("limit.argv")},
		{argv("git", "submodule", "foreach", "id"), refused("limit.argv")},
		{argv("git", "bisect", "run", "id"), refused("limit.argv")},
		{argv("git", "worktree", "add", "x"), refused("limit.argv")},
		{argv("git", "clone", "ext::sh -c id", "d"), refused("limit.network")},
		{argv("git", "clone", "--upload-pack=x", "repo"), refused("limit.network")},
		{argv("git", "fetch"), refused("limit.network")},
		{argv("git", "pull"), refused("limit.network")},
		{argv("git", "push", "origin", "main"), refused("limit.network")},
	})
}

// TestCatalogClap: rg, fd and cargo: clusters and attached values, but no
// abbreviations.
func TestCatalogClap(t *testing.T) {
	checkCatalog(t, []catalogCase{
		{argv("rg", "TODO"), read},
		{argv("rg", "-i", "x"), read},
		{argv("rg", "--ignore-case", "x"), read},
		{argv("rg", "--ignore-c", "x"), runs}, // clap takes no abbreviations
		{argv("rg", "-C3", "x"), read},
		{argv("rg", "-C", "3", "x"), read},
		{argv("rg", "--context=3", "x"), read},
		{argv("rg", "-tgo", "x"), read},
		{argv("rg", "-uuu", "x"), read},
		{argv("rg", "-g", "*.go", "x", "src"), read},
		{argv("rg", "--files"), read},
		{argv("rg", "--pre", "cat", "x"), runs},
		{argv("rg", "--pre=sh", "x"), refused("limit.shell")},
		{argv("rg", "--pre", "/bin/bash", "x"), refused("limit.shell")},
		{argv("rg", "--frobnicate", "x"), runs},
		{argv("fd", "x"), read},
		{argv("fd", "-e", "go"), read},
		{argv("fd", "-HI", "x"), read},
		{argv("fd", "-x", "wc", "-l"), runs},
		{argv("fd", "--exec", "bash", "-c", "id"), refused("limit.shell")},
		{argv("fd", "-X", "sh"), refused("limit.shell")},
		{argv("cargo", "--version"), read},
		{argv("cargo", "metadata", "--no-deps"), read},
		{argv("cargo", "metadata", "--no-deps", "--frobnicate"), runs},
		{argv("cargo", "metadata"), runs}, // runs the rustc .cargo/config.toml names
		{argv("cargo", "tree"), runs},     // the same
		{argv("cargo", "fmt"), runs},      // an [alias] can make fmt any cargo command
		{argv("cargo", "fmt", "--check"), runs},
		{argv("cargo", "version"), read},
		{argv("cargo", "--list"), read},
		{argv("cargo", "build"), runs},
		{argv("cargo", "test", "--", "--nocapture"), runs},
		{argv("cargo", "run"), runs},
		{argv("cargo", "--config", "build.rustc-wrapper='sh'", "fmt"), refused("limit.argv")},
		{argv("cargo", "publish"), refused("limit.network")},
		{argv("make"), runs},
		{argv("make", "test"), runs},
		{argv("npm", "test"), runs},
		{argv("npm", "run", "build"), runs},
		{argv("npm", "ls"), read},
		{argv("npm", "--version"), read},
		{argv("npm", "explain", "left-pad"), read},
		{argv("npm", "help", "install"), runs}, // .npmrc's viewer/browser name the program it starts
		{argv("pnpm", "ls"), read},
		{argv("pnpm", "help"), read},
		{argv("yarn", "list"), runs},      // .yarnrc's yarn-path hands every command to a script
		{argv("yarn", "--version"), runs}, // the same
		{argv("npm", "publish"), refused("limit.network")},
		{argv("npx", "vitest"), runs},
		{argv("pnpm", "test"), runs},
		{argv("yarn"), runs},
	})
}

// TestCatalogFind: find's expression grammar.
func TestCatalogFind(t *testing.T) {
	checkCatalog(t, []catalogCase{
		{argv("find", "."), read},
		{argv("find", ".", "-name", "*.go"), read},
		{argv("find", "-L", "src", "-type", "f", "-newer", "a", "-print0"), read},
		{argv("find", ".", "(", "-name", "a", "-o", "-name", "b", ")", "-prune"), read},
		{argv("find", ".", "-name", "-delete"), read}, // "-delete" is the pattern here
		{argv("find", ".", "-newermt", "2020-01-01"), read},
		{argv("find", ".", "-delete"), writes},
		{argv("find", ".", "-fprint", "out"), writes},
		{argv("find", ".", "-fprintf", "out", "%p"), writes},
		{argv("find", ".", "-fls", "out"), writes},
		{argv("find", ".", "-exec", "grep", "x", "{}", ";"), runs},
		{argv("find", ".", "-execdir", "id", ";"), runs},
		{argv("find", ".", "-ok", "rm", "{}", ";"), runs},
		{argv("find", ".", "-okdir", "rm", "{}", "+"), runs},
		{argv("find", ".", "-exec", "sh", "-c", "id", ";"), refused("limit.shell")},
		{argv("find", ".", "-exec", "/usr/bin/env", "id", ";"), refused("limit.wrapper")},
		{argv("find", ".", "-frobnicate"), runs},
	})
}

// TestCatalogInterpreters: a script file runs as code; inline code is
// refused in every spelling.
func TestCatalogInterpreters(t *testing.T) {
	checkCatalog(t, []catalogCase{
		{argv("python3", "x.py"), runs},
		{argv("python3.11", "x.py", "-c", "not ours"), runs}, // after the script, its own arguments
		{argv("python", "-u", "x.py"), runs},
		{argv("python3", "-m", "pytest", "-x"), runs},
		{argv("python3", "-V"), read},
		{argv("python3", "--version"), read},
		{argv("python3", "-c", "print(1)"), refused("limit.inline-code")},
		{argv("python3", "-cprint(1)"), refused("limit.inline-code")},
		{argv("python3", "-Ic", "x"), refused("limit.inline-code")},
		{argv("python3.11", "-c", "x"), refused("limit.inline-code")},
		{argv("python3"), refused("limit.inline-code")},
		{argv("python3", "-"), refused("limit.inline-code")},
		{argv("python3", "-i", "x.py"), refused("limit.inline-code")},
		{argv("pypy3", "-c", "x"), refused("limit.inline-code")},
		{argv("node", "x.js"), runs},
		{argv("node", "--version"), read},
		{argv("node", "-e", "1"), refused("limit.inline-code")},
		{argv("node", "--eval=1"), refused("limit.inline-code")},
		{argv("node", "--ev", "1"), runs}, // no abbreviations: unknown, runs code (and then the script is "1")
		{argv("node", "-p", "1"), refused("limit.inline-code")},
		{argv("node", "-r", "./x", "y.js"), refused("limit.inline-code")},
		{argv("nodejs", "-e", "1"), refused("limit.inline-code")},
		{argv("node"), refused("limit.inline-code")},
		{argv("perl", "x.pl"), runs},
		{argv("perl", "-w", "x.pl"), runs},
		{argv("perl", "-Ilib", "x.pl"), runs},
		{argv("perl", "-v"), read},
		{argv("perl", "-e", "exec 'sh'"), refused("limit.inline-code")},
		{argv("perl", "-E", "say 1"), refused("limit.inline-code")},
		{argv("perl", "-lne", "print", "f"), refused("limit.inline-code")},
		{argv("perl", "-pe", "s/a/b/", "f"), refused("limit.inline-code")},
		{argv("perl", "-pi.bak", "-e", "s/a/b/", "f"), refused("limit.inline-code")},
		{argv("perl", "-Mstrict", "x.pl"), refused("limit.inline-code")},
		{argv("perl", "-d:Trace", "x.pl"), refused("limit.inline-code")},
		{argv("perl"), refused("limit.inline-code")},
		{argv("perl5.36-x86_64", "-e", "1"), refused("limit.inline-code")},
		{argv("perl5.36", "x.pl"), runs},
		{argv("ruby", "x.rb"), runs},
		{argv("ruby", "-e", "1"), refused("limit.inline-code")},
		{argv("php", "-r", "1"), refused("limit.inline-code")},
		{argv("awk", "{print $1}", "f"), refused("limit.inline-code")},
		{argv("awk", "-F:", "{print}", "f"), refused("limit.inline-code")},
		{argv("gawk", "--source=BEGIN{}", "f"), refused("limit.inline-code")},
		{argv("awk", "-f", "prog.awk", "f"), runs},
		{argv("sed", "-n", "1,5p", "f"), read},
		{argv("sed", "-e", "s/a/b/g", "f"), read},
		{argv("sed", "--expression=s/a/b/", "f"), read},
		{argv("sed", "-i", "s/a/b/", "f"), writes},
		{argv("sed", "s/x/id/e", "f"), runs},
		{argv("sed", "1w out", "f"), runs},
		{argv("sed", "-f", "s.sed", "f"), runs},
	})
}

// TestCatalogPrograms: refused programs by every name, unknown programs
// run as code, and a program is judged by every name it goes by.
func TestCatalogPrograms(t *testing.T) {
	for _, n := range []string{"sh", "bash", "dash", "zsh", "fish", "busybox", "bash5.2", "busybox.static",
		"tmux", "screen"} {
		checkCatalog(t, []catalogCase{{argv(n, "-c", "id"), refused("limit.shell")}})
	}
	for _, n := range []string{"sudo", "su", "doas", "pkexec", "runuser", "setpriv", "capsh", "nsenter", "unshare",
		"chroot", "bwrap", "firejail", "proot", "docker", "podman", "docker-compose", "systemd-run", "setarch",
		"linux64", "prlimit", "env", "xargs", "nohup", "setsid", "timeout", "nice", "stdbuf", "script", "strace",
		"ltrace", "gdb", "ld.so", "ld-linux-x86-64.so.2", "homard"} {
		checkCatalog(t, []catalogCase{{argv(n, "ls"), refused("limit.wrapper")}})
	}
	for _, n := range []string{"curl", "wget", "ssh", "nc"} {
		checkCatalog(t, []catalogCase{{argv(n, "x"), refused("limit.network")}})
	}
	checkCatalog(t, []catalogCase{
		{argv("gcc", "-wrapper", "sh,-c,id", "x.c"), runs},
		{argv("vim.basic", "-c", ":!id"), runs},
		{argv("cat-evil", "f"), runs}, // only interpreters match by prefix
		{argv("lsattr", "f"), runs},
		{argv("jq", ".", "f.json"), runs},
	})
	cases := []struct {
		name string
		c    Command
		want want
	}{
		{"symlinked shell", Command{Program: "view", Path: "/usr/bin/view", RealPath: "/usr/bin/dash"}, refused("limit.shell")},
		{"ls that is busybox", Command{Program: "ls", Path: "/usr/bin/ls", RealPath: "/usr/bin/busybox", Args: []string{"-l"}}, refused("limit.shell")},
		{"ls that is unknown", Command{Program: "ls", Path: "/usr/bin/ls", RealPath: "/opt/x/multicall", Args: []string{"-l"}}, runs},
		{"unknown called ls", Command{Program: "/opt/x/ls", Path: "/opt/x/ls", RealPath: "/opt/x/ls", Args: []string{"-l"}}, read},
		{"python3 is python3.11", Command{Program: "python3", Path: "/usr/bin/python3", RealPath: "/usr/bin/python3.11", Args: []string{"-c", "1"}}, refused("limit.inline-code")},
		{"pkill is pgrep", Command{Program: "pkill", Path: "/usr/bin/pkill", RealPath: "/usr/bin/pgrep", Args: []string{"x"}}, runs},
	}
	for _, c := range cases {
		v := ClassifyCommand(c.c, nil)
		if c.want.refuse != "" && (!v.Refused || v.Rule != c.want.refuse) || c.want.refuse == "" && (v.Refused || v.Class != c.want.class) {
			t.Errorf("%s: ClassifyCommand(%+v) = %+v; want %+v", c.name, c.c, v, c.want)
		}
	}
}

// TestCatalogWrites: what the grammar says a command writes.
func TestCatalogWrites(t *testing.T) {
	cases := []struct {
		argv     []string
		writes   []string
		anywhere bool
	}{
		{argv("mkdir", "-p", "a/b", "c"), []string{"a/b", "c"}, false},
		{argv("cp", "a", "b", "dir"), []string{"dir"}, false},
		{argv("cp", "-t", "dir", "a", "b"), []string{"dir"}, false},
		{argv("mv", "a", "b"), []string{"a", "b"}, false},
		{argv("ln", "-s", "../x"), []string{"x"}, false},
		{argv("sort", "-o", "out", "in"), []string{"out"}, false},
		{argv("uniq", "in", "out"), []string{"out"}, false},
		{argv("chmod", "644", "a", "b"), []string{"a", "b"}, false},
		{argv("tee", "-a", "log"), []string{"log"}, false},
		{argv("tar", "czf", "a.tgz", "src"), []string{"a.tgz"}, false},
		{argv("tar", "xf", "a.tgz"), nil, true},
		{argv("gzip", "f"), []string{"f", "f.gz"}, false},
		{argv("gofmt", "-w", "a.go"), []string{"a.go"}, false},
		{argv("find", "build", "-delete"), []string{"build"}, false},
		{argv("sed", "-i", "s/a/b/", "f"), []string{"f"}, false},
		{argv("ls", "-l"), nil, false},
		{argv("go", "test", "./..."), nil, true},
		{argv("gcc", "x.c"), nil, true},
	}
	for _, c := range cases {
		v := ClassifyCommand(cmd(c.argv[0], c.argv[1:]...), nil)
		got := slices.Clone(v.Writes)
		slices.Sort(got)
		w := slices.Clone(c.writes)
		slices.Sort(w)
		if !slices.Equal(got, w) || v.WritesAnywhere != c.anywhere {
			t.Errorf("ClassifyCommand(%q): Writes %q, WritesAnywhere %v; want %q, %v", c.argv, v.Writes, v.WritesAnywhere, c.writes, c.anywhere)
		}
	}
}

// TestCatalogGrammarsKnowTheirOptions: every entry's option table was
// built, and no grammar mistakes an option for a refusal by accident.
func TestCatalogGrammarsKnowTheirOptions(t *testing.T) {
	for name, g := range catalog() {
		if g.name == "" {
			t.Errorf("catalog entry %s has no name", name)
		}
		for long, o := range g.long {
			if strings.HasPrefix(long, "-") || len(long) < 2 {
				t.Errorf("%s: bad long option name %q", name, long)
			}
			if o.canonical() == "" {
				t.Errorf("%s: --%s has no canonical name", name, long)
			}
		}
	}
}

// FuzzCatalogUnknownOption: for every grammar, an option it does not
// know — long (any name starting "--zq") or short (a letter it does not
// list) — never leaves the verdict at read.
func FuzzCatalogUnknownOption(f *testing.F) {
	f.Add(uint16(0), "frob", byte('j'), "x")
	f.Add(uint16(7), "=1", byte('@'), "-")
	type target struct {
		prefix []string
		g      *grammar
	}
	var targets []target
	for _, n := range slices.Sorted(maps.Keys(catalog())) {
		g := catalog()[n]
		if g.literal {
			continue
		}
		if g.subs == nil {
			targets = append(targets, target{[]string{n}, g})
			continue
		}
		for _, s := range slices.Sorted(maps.Keys(g.subs)) {
			if sg := g.subs[s]; !sg.literal && sg.base < effNetwork && sg.subs == nil {
				targets = append(targets, target{[]string{n, s}, sg})
			}
		}
	}
	f.Fuzz(func(t *testing.T, pick uint16, long string, short byte, operand string) {
		tg := targets[int(pick)%len(targets)]
		var args [][]string
		args = append(args, append(slices.Clone(tg.prefix[1:]), "--zq"+long, operand))
		if tg.g.custom == nil && tg.g.short[short] == nil && short > ' ' && short < 0x7f && short != '-' &&
			!(tg.g.numeric && short >= '0' && short <= '9') && !(tg.g.goFlag && tg.g.long[string(short)] != nil) {
			args = append(args, append(slices.Clone(tg.prefix[1:]), "-"+string(short), operand))
		}
		for _, a := range args {
			v := ClassifyCommand(cmd(tg.prefix[0], a...), nil)
			if !v.Refused && v.Class == ClassRead {
				t.Fatalf("ClassifyCommand(%s %q) = read; an unknown option must run as code", tg.prefix[0], a)
			}
		}
	})
}
