// Package memtrim gives back, once a long-running process has started,
// the memory it touched only to start.
//
// Most of an idle `homard serve`'s resident set was its own binary: the
// code and read-only data that package initialisers and start-up ran
// through, mapped in 64 KiB runs by the kernel's fault-around (on a 6.x
// kernel 17.7 MB of a 22.7 MB binary, against 4 MB of heap and stacks).
// Those pages are clean and backed by the executable file; AfterStart asks
// the kernel to reclaim them (madvise MADV_PAGEOUT). What idle serve then
// runs comes back on demand from the page cache; nothing is lost or
// changed, only made resident again when used. The heap is left alone:
// debug.FreeOSMemory cost more (its collection reads every stack's maps)
// than it gave back (docs/PERFORMANCE.md).
package memtrim

import "time"

// Settle is how long after start-up a second AfterStart finds what the
// first could not reclaim: pages the other cores had just faulted in and
// not yet put on the kernel's page lists.
const Settle = time.Second

// Result is what AfterStart did.
type Result struct {
	// Regions is how many mappings of the executable were advised, and
	// Bytes their size.
	Regions int
	Bytes   uint64
}
