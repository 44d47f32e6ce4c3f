package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Confinement: Chromium's own sandbox (namespaces and seccomp for its
// renderers) refuses to start as root. Where homard runs as root and
// bubblewrap is installed, Chromium is started inside a bwrap of homard's
// own instead: a user namespace in which it is an ordinary user (so its
// own sandbox starts after all, nested), its own PID, IPC and UTS
// namespaces, no capabilities, the machine's files read-only, and the
// folders of Options.Hide (homard's data and config, the workspace
// roots) and the owner's home covered by empty tmpfs — only its profile
// and download folders are bound back writable. It shares the network
// namespace: it must reach the egress proxy on loopback, and it is
// started with that proxy as its only route (flags). Hand-rolled rather
// than through internal/sandbox's ServiceSpec, which would need the
// pipe's fds 3 and 4 and writable binds it does not offer (see the doc).

// sandboxUID is the user Chromium is inside homard's bwrap.
const sandboxUID = "1000"

// confined reports how Chromium will be confined, and the program and
// arguments that start it so: exe with args, or bwrap around them.
func (o *Options) confined(exe string, args []string) (mode, prog string, argv []string) {
	if !runningAsRoot() {
		return "chromium's own sandbox", exe, args
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return "none (homard runs as root, where Chromium's sandbox refuses to start, and bubblewrap is not installed: apt-get install bubblewrap)",
			exe, append(args[:len(args):len(args)], "--no-sandbox")
	}
	w := []string{
		"--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID,
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--cap-drop", "ALL",
		"--ro-bind", "/", "/",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
	}
	for _, h := range o.hidden(exe) {
		w = append(w, "--tmpfs", h)
	}
	for _, d := range []string{o.ProfileDir, o.DownloadDir} {
		w = append(w, "--bind", d, d)
	}
	w = append(w, "--setenv", "HOME", "/tmp", "--", exe)
	return "chromium's own sandbox, inside homard's bwrap (homard runs as root: Chromium is an ordinary user in its own user namespace, without capabilities, and sees none of homard's data, the owner's home or the workspace roots)",
		bwrap, append(w, args...)
}

// hidden are the existing folders to cover, parents first (a tmpfs over
// a parent comes before a bind inside it): Options.Hide and the owner's
// home, except one holding Chromium's own program or one of / and the
// folders Chromium's binds live in that would hide the machine.
func (o *Options) hidden(exe string) []string {
	dirs := append([]string{}, o.Hide...)
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, home)
	}
	var out []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || d == "/" || within(exe, d) {
			continue
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		out = append(out, d)
	}
	// Shorter first: a parent's tmpfs before a child's.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) < len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
