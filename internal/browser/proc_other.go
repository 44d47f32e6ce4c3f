//go:build !linux

package browser

import "syscall"

// procAttr puts Chromium in a process group of its own, so that Close
// kills the renderers too. (Only Linux can have the kernel kill it when
// homard dies.)
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
