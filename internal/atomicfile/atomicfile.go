// Package atomicfile replaces a file whole: a reader sees the old content
// or the new, never a part, and after a crash one of the two. The config,
// memory.md, the vault, checkpoints and the service unit are written
// through it.
//
// Hand-rolled rather than github.com/google/renameio: that library does
// not sync the folder after the rename (so the new name may not survive a
// power cut) and has no way to check the new file before it lands
// (config.WriteChecked loads it first) or to refuse to replace an
// existing one (config.Init).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Staged is a file's new content, written and synced beside it but not yet
// in its place.
type Staged struct {
	path, tmp string
}

// Stage writes data with mode perm to a new file in path's folder (made
// 0700 if missing), flushed to disk, for Replace or Place to put at path.
// Discard removes it when it did not land.
func Stage(path string, data []byte, perm fs.FileMode) (*Staged, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return nil, err
	}
	s := &Staged{path: path, tmp: f.Name()}
	err = f.Chmod(perm) // CreateTemp makes 0600; Chmod states the mode
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		s.Discard()
		return nil, err
	}
	return s, nil
}

// Name is the staged file's own name, to read it before it lands.
func (s *Staged) Name() string { return s.tmp }

// Replace puts the staged file at its path, over whatever is there, and
// makes the rename durable.
func (s *Staged) Replace() error {
	if err := os.Rename(s.tmp, s.path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(s.path))
}

// Place puts the staged file at its path only if that name is free: an
// error wrapping fs.ErrExist otherwise, even against a file created a
// moment before. On a file system without hard links it falls back to a
// check then a rename, which only a concurrent writer can race.
func (s *Staged) Place() error {
	err := os.Link(s.tmp, s.path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Lstat(s.path); serr == nil {
			return &fs.PathError{Op: "place", Path: s.path, Err: fs.ErrExist}
		}
		err = os.Rename(s.tmp, s.path)
	}
	if err != nil {
		return err
	}
	s.Discard() // the link's extra name
	return syncDir(filepath.Dir(s.path))
}

// Discard removes the staged file; after Replace there is nothing to
// remove, and it does nothing.
func (s *Staged) Discard() { os.Remove(s.tmp) }

// Write replaces path with data (mode perm) in one step: Stage, then
// Replace.
func Write(path string, data []byte, perm fs.FileMode) error {
	s, err := Stage(path, data, perm)
	if err != nil {
		return err
	}
	defer s.Discard()
	return s.Replace()
}

// syncDir makes a rename or link in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
