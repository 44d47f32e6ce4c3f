package tools

import "syscall"

// ctimeNanos is a file's status-change time (its field name differs on
// macOS: ctime_darwin.go).
func ctimeNanos(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
