package browser

import "syscall"

// procAttr puts Chromium in a process group of its own, so that Close
// kills the renderers too, and has the kernel kill it if homard dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
