package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// mountCacheView shows req.Cache at the command's cache view
// (Scratch/home/.build-cache, bound at /tmp/.build-cache by bwrap): an
// overlay whose lower layer is the persistent folder and whose upper
// layer is on the scratch tmpfs. The command reads the warm caches and may
// write anything there; overlayfs never writes a lower layer, so all of
// it dies with the run. When the overlay cannot be mounted the view is an
// empty folder on the scratch tmpfs (cold caches, as without a cache):
// the persistent folder is then not shown at all.
//
// For homard's refresh (CacheWritable) the persistent go-build folder is
// then bound read-write over the view's, and a failure fails the run; the
// module, npm and pip caches stay as for a command.
func mountCacheView(req mountRequest) error {
	if req.Cache == "" {
		return nil
	}
	view := filepath.Join(req.Scratch, scratchHome, cacheView)
	upper := filepath.Join(req.Scratch, scratchCacheUpper)
	work := filepath.Join(req.Scratch, scratchCacheWork)
	for _, d := range []string{view, upper, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("prepare the cache view: %w", err)
		}
	}
	opts := "lowerdir=" + req.Cache + ",upperdir=" + upper + ",workdir=" + work +
		",userxattr,metacopy=off,index=off,redirect_dir=nofollow"
	err := unix.Mount("homard-cache", view, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts)
	if err == nil {
		var st unix.Statfs_t
		if serr := unix.Statfs(view, &st); serr != nil || st.Type != overlayMagic {
			return fmt.Errorf("%w: the cache view is not an overlay after mounting it (type %#x, %v)", ErrUnenforceable, st.Type, serr)
		}
	}
	if err != nil {
		if req.CacheWritable {
			return fmt.Errorf("%w: mount the cache view: %v", ErrUnenforceable, err)
		}
		for _, sub := range []string{cacheGoBuild, cacheGoMod, cacheNPM, cachePip} {
			if err := os.Mkdir(filepath.Join(view, sub), 0o700); err != nil {
				return fmt.Errorf("prepare the cache view: %w", err)
			}
		}
		return nil
	}
	if !req.CacheWritable {
		return nil
	}
	src := filepath.Join(req.Cache, cacheGoBuild)
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a folder", ErrInvalidSpec, src)
	}
	dst := filepath.Join(view, cacheGoBuild)
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind the go build cache: %w", err)
	}
	if err := setAttr(dst, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
		return fmt.Errorf("bind the go build cache: %w", err)
	}
	return nil
}
