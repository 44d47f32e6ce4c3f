//go:build !linux

package changeset

import (
	"os"
	"time"
)

// folderID is a folder's modification time only: elsewhere the cache
// never matches (changed is now), so every folder is read each time.
type folderID struct{ mtime int64 }

func (f folderID) changed() time.Time { return time.Now() }

func identify(abs string) (folderID, bool) {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.IsDir() {
		return folderID{}, false
	}
	return folderID{mtime: fi.ModTime().UnixNano()}, true
}
