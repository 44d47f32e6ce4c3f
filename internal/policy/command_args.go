package policy

import (
	"slices"
	"strings"
)

// dangerousLong are long options that make a program run another program,
// load code, or reach out, for any program that takes them. GNU getopt
// accepts any unambiguous prefix ("--upload-p" means "--upload-pack"), so
// an argument is refused if it is a prefix (of at least 3 letters) of one
// of these, with or without "=value".
var dangerousLong = []string{
	"upload-pack", "receive-pack", "exec", "exec-path", "execdir", "config-env", "template",
	"to-command", "checkpoint-action", "use-compress-program", "compress-program", "info-script",
	"new-volume-script", "rsh", "rsh-command", "rsync-path", "extcmd", "open-files-in-pager",
	"ext-diff", "textconv", "pre", "command", "shell", "pager", "editor", "run", "eval",
	"load", "plugin", "preload", "init-file", "rcfile", "ssh", "proxy-command",
}

// dangerousShort are per-program short options with the same effect.
var dangerousShort = map[string][]string{
	"git":  {"-c"},
	"tar":  {"-I", "-F"},
	"zip":  {"-TT", "-T"},
	"find": {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
	"fd":   {"-x", "-X"},
}

// gitDangerousSubcommands run arbitrary commands or hooks by design.
var gitDangerousSubcommands = []string{"submodule", "bisect", "filter-branch", "difftool", "mergetool", "daemon",
	"instaweb", "credential", "config", "archimport", "cvsimport", "svn", "p4", "send-email", "request-pull", "web--browse", "upload-pack", "receive-pack", "shell"}

func dangerousArgs(c Command, names []string) (CommandVerdict, bool) {
	base := names[0]
	for i, a := range c.Args {
		if strings.HasPrefix(a, "--") && len(a) > 2 {
			name, _, _ := strings.Cut(a[2:], "=")
			if len(name) >= 3 {
				for _, d := range dangerousLong {
					if strings.HasPrefix(d, name) {
						return refuse("limit.argv", "option "+a+" (--"+d+") can make "+base+" run another program"), true
					}
				}
			}
		}
		for _, n := range names {
			if slices.Contains(dangerousShort[n], a) || (n == "git" || n == "tar") && shortCluster(a, dangerousShort[n]) {
				return refuse("limit.argv", "option "+a+" can make "+n+" run another program or delete files"), true
			}
		}
		if base == "git" && i == firstNonOption(c.Args) && slices.Contains(gitDangerousSubcommands, a) {
			return refuse("limit.argv", "git "+a+" runs commands or changes configuration by design"), true
		}
		if base == "git" && strings.HasPrefix(a, "ext::") {
			return refuse("limit.argv", "the ext:: transport runs a command"), true
		}
	}
	if base == "git" && slices.Contains(c.Args, "rebase") && (slices.Contains(c.Args, "-x") || slices.Contains(c.Args, "--exec")) {
		return refuse("limit.argv", "git rebase --exec runs commands"), true
	}
	return CommandVerdict{}, false
}

// shortCluster reports whether a is a cluster of short options ("-xc")
// that includes one of the single-letter options in opts.
func shortCluster(a string, opts []string) bool {
	if len(a) < 3 || a[0] != '-' || a[1] == '-' {
		return false
	}
	for _, o := range opts {
		if len(o) == 2 && strings.IndexByte(a[1:], o[1]) >= 0 {
			return true
		}
	}
	return false
}

// firstNonOption returns the index of the first argument that is not an
// option (git's subcommand), or -1.
func firstNonOption(args []string) int {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			return i
		}
	}
	return -1
}

// readOnlyPrograms only read, whatever their arguments (the arguments the
// hard limits let through).
// Programs that can write a file through an option (sort -o, uniq IN OUT,
// tree -o, xxd -r, date -s, hostname NAME) are deliberately not listed.
var readOnlyPrograms = []string{"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "find", "fd",
	"stat", "du", "df", "pwd", "echo", "printf", "whoami", "id", "uname", "cut",
	"tr", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "realpath", "basename",
	"dirname", "true", "false", "test", "[", "which", "nl", "od", "hexdump", "strings", "column", "comm",
	"join", "paste", "fold", "fmt", "expand", "unexpand", "rev", "tac", "seq", "sleep", "uptime",
	"free", "nproc", "locale", "printenv", "readlink", "getconf", "lsblk", "ps", "pgrep"}

// gitReadOnly are git subcommands that only read the repository.
var gitReadOnly = []string{"status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep",
	"describe", "shortlog", "cat-file", "rev-list", "reflog", "whatchanged", "name-rev", "merge-base", "count-objects", "version", "help"}

// criticalPrograms change disks, permissions or ownership.
var criticalPrograms = []string{"dd", "mkfs", "fdisk", "sfdisk", "gdisk", "parted", "wipefs", "shred", "mount", "umount",
	"chmod", "chown", "chgrp", "chattr", "setfacl", "truncate", "losetup", "cryptsetup", "mkswap", "swapon", "swapoff",
	"kill", "killall", "pkill", "reboot", "shutdown", "poweroff", "halt", "systemctl", "iptables", "nft", "ip", "useradd", "userdel", "passwd", "usermod"}

func classifyRisk(names []string, args []string) CommandVerdict {
	base := names[0]
	switch {
	case slices.Contains(criticalPrograms, base) || strings.HasPrefix(base, "mkfs."):
		return CommandVerdict{Risk: RiskCritical}
	case base == "rm" || base == "rmdir":
		for _, a := range args {
			if a == "--recursive" || a == "--dir" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rRd") {
				return CommandVerdict{Risk: RiskCritical} // recursive delete
			}
		}
		return CommandVerdict{Risk: RiskHigh}
	case base == "git":
		return classifyGit(args)
	case slices.Contains(readOnlyPrograms, base):
		return CommandVerdict{Risk: RiskLow, ReadOnly: true}
	}
	return CommandVerdict{Risk: RiskMedium}
}

func classifyGit(args []string) CommandVerdict {
	i := firstNonOption(args)
	if i < 0 {
		return CommandVerdict{Risk: RiskLow, ReadOnly: true} // git --version, git --help
	}
	sub, rest := args[i], args[i+1:]
	has := func(opts ...string) bool {
		return slices.ContainsFunc(rest, func(a string) bool {
			return slices.Contains(opts, a) || slices.ContainsFunc(opts, func(o string) bool {
				return strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"=")
			})
		})
	}
	switch sub {
	case "push":
		if has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d", "--prune") ||
			slices.ContainsFunc(rest, func(a string) bool { return strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":") }) {
			return CommandVerdict{Risk: RiskCritical} // force push or remote delete
		}
		return CommandVerdict{Risk: RiskHigh}
	case "reset":
		if has("--hard", "--merge", "--keep") {
			return CommandVerdict{Risk: RiskCritical}
		}
	case "rebase", "filter-repo", "replace", "gc", "prune":
		return CommandVerdict{Risk: RiskCritical} // history rewrite or loss
	case "commit":
		if has("--amend") {
			return CommandVerdict{Risk: RiskCritical}
		}
	case "branch", "tag":
		if has("-D", "-d", "--delete", "-f", "--force", "-M", "-m", "--move") {
			return CommandVerdict{Risk: RiskCritical}
		}
		if len(rest) == 0 || has("-l", "--list", "-a", "-r", "-v", "--show-current") {
			return CommandVerdict{Risk: RiskLow, ReadOnly: true}
		}
	case "clean":
		return CommandVerdict{Risk: RiskCritical}
	case "checkout", "restore", "switch":
		if has("-f", "--force", ".", "--", "--discard-changes") {
			return CommandVerdict{Risk: RiskCritical} // discards uncommitted work
		}
	case "stash":
		if has("drop", "clear") {
			return CommandVerdict{Risk: RiskCritical}
		}
	case "reflog":
		if has("expire", "delete") {
			return CommandVerdict{Risk: RiskCritical}
		}
	}
	if slices.Contains(gitReadOnly, sub) {
		return CommandVerdict{Risk: RiskLow, ReadOnly: true}
	}
	return CommandVerdict{Risk: RiskMedium}
}
