package policy

import (
	"path"
	"slices"
	"strings"
	"unicode"
)

// Command is a program invocation as a run_command Plan describes it: the
// name the model asked for, the absolute path it resolved to, that path
// with symlinks followed, and the exact arguments (argv[1:]). There is no
// shell anywhere: every argument reaches the program as one literal string.
type Command struct {
	Program  string   // as proposed: a bare name or an absolute path
	Path     string   // absolute path after the PATH lookup
	RealPath string   // Path with symlinks resolved (/bin/sh → /usr/bin/dash)
	Args     []string // argv[1:]
}

// CommandVerdict is what policy concludes about a Command before any rule
// or mode: either a hard refusal, or its risk and whether it only reads.
type CommandVerdict struct {
	Refused  bool
	Rule     string // set when Refused: "limit.shell", "limit.interpreter", …
	Reason   string
	Risk     Risk
	ReadOnly bool
}

// ClassifyCommand applies the hard limits on commands and assigns a risk.
// allowed lists programs the operator explicitly permits even though they
// are shells, interpreters or wrappers (matched against every name of the
// program: the base names of Program, Path and RealPath, and Path and
// RealPath themselves).
//
// The limits are deliberately wide: anything that can run another program
// or an inline script (a shell, an interpreter, sudo, env, xargs, find
// -exec, git -c, tar --to-command, …) would turn one approved argv into an
// arbitrary one, so it is refused unless the operator lists it.
func ClassifyCommand(c Command, allowed []string) CommandVerdict {
	if reason := badProgramName(c.Program); reason != "" {
		return refuse("limit.program-name", reason)
	}
	if !path.IsAbs(c.Path) || !path.IsAbs(c.RealPath) {
		return refuse("limit.program-name", "the program did not resolve to an absolute path")
	}
	for _, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return refuse("limit.argv", "an argument contains a NUL byte")
		}
	}
	names := programNames(c)
	operatorAllowed := slices.ContainsFunc(names, func(n string) bool { return slices.Contains(allowed, n) })
	if !operatorAllowed {
		for _, n := range names {
			if kind, ok := forbiddenPrograms[n]; ok {
				return refuse("limit."+kind, n+" "+kindReason[kind]+" (an operator can allow it in config: commands.allow)")
			}
			for _, prefix := range interpreterPrefixes {
				if strings.HasPrefix(n, prefix) && versionSuffix(n[len(prefix):]) {
					return refuse("limit.interpreter", n+" is an interpreter and can run arbitrary code (an operator can allow it in config: commands.allow)")
				}
			}
		}
		if v, refused := dangerousArgs(c, names); refused {
			return v
		}
	}
	return classifyRisk(names, c.Args)
}

func refuse(rule, reason string) CommandVerdict {
	return CommandVerdict{Refused: true, Rule: rule, Reason: reason, Risk: RiskCritical}
}

// badProgramName rejects anything but a plain name or an absolute path:
// shell syntax, spaces (a trailing space is how "ls " smuggles a different
// lookup), control characters, relative paths.
func badProgramName(p string) string {
	if p == "" {
		return "the program name is empty"
	}
	for _, r := range p {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(";&|`$(){}<>*?[]!~'\"\\#=%", r) {
			return "the program must be a bare name or an absolute path, without spaces or shell syntax; put arguments in args"
		}
	}
	if strings.Contains(p, "/") && !strings.HasPrefix(p, "/") {
		return "a program path must be absolute; relative paths like ./x are refused"
	}
	if strings.HasPrefix(p, "/") && path.Clean(p) != p {
		return "the program path is not clean (no .., //, or trailing /)"
	}
	return ""
}

// programNames lists every name the program goes by, base names first.
func programNames(c Command) []string {
	var out []string
	for _, n := range []string{path.Base(c.Program), path.Base(c.Path), path.Base(c.RealPath), c.Path, c.RealPath} {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// versionSuffix reports whether s looks like an interpreter's version
// suffix: "", "3", "3.11", "5.36.0", "-3.11".
func versionSuffix(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return strings.Trim(s, "0123456789.") == ""
}

// forbiddenPrograms maps base names to why they are refused.
var forbiddenPrograms = func() map[string]string {
	m := map[string]string{}
	add := func(kind string, names ...string) {
		for _, n := range names {
			m[n] = kind
		}
	}
	add("shell", "sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "pdksh", "csh", "tcsh", "ash", "rbash",
		"busybox", "toybox", "pwsh", "powershell", "nu", "elvish", "xonsh", "yash", "oil", "osh", "rc", "es", "scsh")
	add("interpreter", "node", "nodejs", "deno", "bun", "perl", "ruby", "irb", "php", "lua", "luajit", "tclsh", "wish",
		"expect", "awk", "gawk", "mawk", "nawk", "sed", "jshell", "java", "osascript", "julia", "erl", "escript", "elixir",
		"iex", "guile", "racket", "sbcl", "clisp", "ghci", "runghc", "runhaskell", "swift", "R", "Rscript", "octave",
		"groovy", "kotlin", "scala", "dotnet", "csi", "gdb", "lldb", "vim", "vi", "nvim", "ex", "emacs", "ed",
		"less", "more", "man", "m4", "bc", "dc", "jq", "make", "gmake", "cmake", "ninja", "go", "cargo", "rustc",
		"npm", "npx", "yarn", "pnpm", "pip", "pip3", "pipx", "uv", "uvx", "poetry", "gem", "bundle", "rake", "mvn", "gradle",
		"ant", "sqlite3", "psql", "mysql", "mariadb", "nano", "pico", "joe", "mc", "ranger", "screen", "tmux",
		"xterm", "apt", "apt-get", "aptitude", "dpkg", "rpm", "snap", "flatpak")
	add("network", "ssh", "scp", "sftp", "telnet", "nc", "ncat", "netcat", "socat", "curl", "wget", "ftp", "tftp",
		"rsync", "aria2c", "httpie", "http")
	add("wrapper", "env", "xargs", "sudo", "su", "doas", "pkexec", "runuser", "setpriv", "capsh", "nohup", "timeout",
		"nice", "ionice", "stdbuf", "unbuffer", "watch", "time", "chroot", "setsid", "strace", "ltrace", "script",
		"flock", "parallel", "unshare", "nsenter", "systemd-run", "at", "batch", "crontab", "taskset", "chrt",
		"firejail", "bwrap", "docker", "podman", "kubectl", "exec", "eval", "command", "builtin", "xdg-open", "open",
		"sg", "newgrp", "faketime", "proot", "valgrind", "perf", "catchsegv", "ld.so", "ld-linux-x86-64.so.2",
		"homard") // homard itself runs tools (and is the landlock helper)
	return m
}()

var kindReason = map[string]string{
	"shell":       "is a shell and can run anything; homard runs programs directly, with argv, never through a shell",
	"interpreter": "runs scripts or other programs, so one approved argv could do anything",
	"wrapper":     "runs another program; propose that program itself",
	"network":     "reaches the network outside homard's egress checks; use http_get",
}

// interpreterPrefixes catch versioned names: python3.11, perl5.36, lua5.4.
var interpreterPrefixes = []string{"python", "pypy", "perl", "ruby", "php", "lua", "tclsh", "wish", "node", "pwsh", "java", "guile", "gawk"}
