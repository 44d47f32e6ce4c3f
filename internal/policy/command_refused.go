package policy

import (
	"slices"
	"strings"
)

// refusedPrograms maps base names to the rule that refuses them in every
// mode (unless an operator lists them in commands.allow). A version or build
// suffix does not help: bash5, busybox.static and perl-named shells are
// matched by refusedName.
var refusedPrograms = func() map[string]string {
	m := map[string]string{}
	add := func(rule string, names ...string) {
		for _, n := range names {
			m[n] = rule
		}
	}
	add(RuleLimitShell, "sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "pdksh", "csh", "tcsh", "ash", "rbash",
		"busybox", "toybox", "pwsh", "powershell", "nu", "elvish", "xonsh", "yash", "oil", "osh", "rc", "es", "scsh",
		"screen", "tmux", "xterm", "expect")
	add(RuleLimitNetwork, "ssh", "scp", "sftp", "telnet", "nc", "ncat", "netcat", "socat", "curl", "wget", "ftp", "tftp",
		"rsync", "aria2c", "httpie", "http")
	add(RuleLimitWrapper, "env", "xargs", "sudo", "su", "doas", "pkexec", "runuser", "setpriv", "capsh", "nohup", "timeout",
		"nice", "ionice", "stdbuf", "unbuffer", "watch", "time", "chroot", "setsid", "strace", "ltrace", "gdb", "lldb",
		"script", "flock", "parallel", "unshare", "nsenter", "systemd-run", "at", "batch", "crontab", "taskset", "chrt",
		"firejail", "bwrap", "proot", "docker", "podman", "kubectl", "exec", "eval", "command", "builtin", "xdg-open",
		"open", "sg", "newgrp", "faketime", "valgrind", "perf", "catchsegv", "ld.so", "ld-linux-x86-64.so.2",
		"ld-linux-aarch64.so.1", "setarch", "linux32", "linux64", "i386", "x86_64", "uname26", "prlimit", "cgexec",
		"numactl", "chpst", "daemonize", "runcon", "fakeroot", "fakechroot", "schroot", "lxc-attach",
		"systemd-nspawn", "homard") // homard itself runs tools (and is the landlock helper)
	return m
}()

// kindReason says why each rule of refusedPrograms refuses a program.
var kindReason = map[string]string{
	RuleLimitShell:   "is a shell and can run anything; homard runs programs directly, with argv, never through a shell",
	RuleLimitWrapper: "runs another program or leaves the sandbox's limits; propose that program itself",
	RuleLimitNetwork: "reaches the network outside homard's egress checks; use http_get",
}

// refusedName reports whether a base name is a refused program, also
// with a version or build suffix (bash5.2, busybox.static, docker-compose),
// and the rule that refuses it.
func refusedName(n string) (string, bool) {
	if kind, ok := refusedPrograms[n]; ok {
		return kind, true
	}
	for name, kind := range refusedPrograms {
		if len(n) > len(name) && versioned(n, name) {
			return kind, true
		}
	}
	if strings.HasPrefix(n, "ld-linux") || strings.HasPrefix(n, "ld-musl") {
		return RuleLimitWrapper, true
	}
	return "", false
}

// criticalProgram: programs outside the catalog that change disks,
// processes or the system. They run as code and always ask.
func criticalProgram(n string) bool {
	return slices.Contains(criticalPrograms, n) || strings.HasPrefix(n, "mkfs.")
}

var criticalPrograms = []string{"dd", "mkfs", "fdisk", "sfdisk", "gdisk", "parted", "wipefs", "shred", "mount", "umount",
	"chattr", "setfacl", "truncate", "losetup", "cryptsetup", "mkswap", "swapon", "swapoff",
	"kill", "killall", "pkill", "reboot", "shutdown", "poweroff", "halt", "systemctl", "iptables", "nft", "ip",
	"useradd", "userdel", "passwd", "usermod"}

// gitEscalation raises the risk of git commands that lose work or
// rewrite history, read from the raw arguments (any spelling of these
// options the grammar accepted is also listed here or is refused).
func gitEscalation(args []string) Risk {
	i := slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })
	if i < 0 {
		return 0
	}
	// Skip the values of global options that take one.
	for i > 0 && (args[i-1] == "-C") {
		j := slices.IndexFunc(args[i+1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
		if j < 0 {
			return 0
		}
		i += j + 1
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
	case "reset":
		if has("--hard", "--merge", "--keep") {
			return RiskCritical
		}
	case "rebase", "replace", "gc", "prune", "clean":
		return RiskCritical // history rewrite or loss
	case "commit":
		if has("--amend") {
			return RiskCritical
		}
	case "branch", "tag":
		if has("-D", "-d", "--delete", "-f", "--force", "-M", "-m", "--move") {
			return RiskCritical
		}
	case "checkout", "restore", "switch":
		if has("-f", "--force", ".", "--", "--discard-changes") {
			return RiskCritical // discards uncommitted work
		}
	case "stash":
		if has("drop", "clear") {
			return RiskCritical
		}
	case "reflog":
		if has("expire", "delete") {
			return RiskCritical
		}
	}
	return 0
}
