package changeset

import (
	"os"
	"syscall"
	"time"
)

// folderID is a folder's identity and change times: a folder whose entries
// change gets a new mtime and ctime; a folder replaced by another gets a
// new inode.
type folderID struct {
	dev, ino     uint64
	mtime, ctime int64 // nanoseconds
}

func (f folderID) changed() time.Time { return time.Unix(0, max(f.mtime, f.ctime)) }

// identify stats a folder without following a symlink; ok is false when
// it is not a folder any more.
func identify(abs string) (folderID, bool) {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.IsDir() {
		return folderID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return folderID{}, false
	}
	return folderID{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
