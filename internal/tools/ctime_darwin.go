package tools

import "syscall"

// ctimeNanos is a file's status-change time.
func ctimeNanos(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
