package changeset

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/homard/homard/internal/workspace"
)

// File is one whole file a file tool writes (write_file, edit_file).
type File struct {
	// Rel is the file's real location: a clean slash path relative to the
	// root with every symlink resolved (workspace.Real).
	Rel  string
	Data []byte
}

// GradeFiles grades writing files into root against the root as it will
// be, as WriteFiles will when it runs: what a plan shows before the owner
// decides. It changes nothing.
func (g *Gate) GradeFiles(root string, files []File) (*workspace.Graded, error) {
	stream, err := g.fileStream(root, files)
	if err != nil {
		return nil, err
	}
	cs, err := workspace.ReadChanges(stream, workspace.ReadOptions{Memory: true})
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return g.ws.Grade(root, cs, g.gradeOptions(root, time.Time{}, rels(files), false, nil))
}

// WriteFiles writes whole files through the gate: a change set of the
// files (and the folders they need) graded like any other writer's, applied
// as one checkpoint when within p.Limit, held for apply_changes otherwise.
// p.Expected is set to the files themselves.
func (g *Gate) WriteFiles(ctx context.Context, p Proposal, files []File) Outcome {
	stream, err := g.fileStream(p.Root, files)
	if err != nil {
		return Outcome{Err: err}
	}
	p.Expected = rels(files)
	return g.settle(ctx, p, stream, workspace.ReadOptions{Memory: true})
}

func rels(files []File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Rel
	}
	return out
}

// fileStream writes the change-set stream (the format of
// workspace.WriteUpperTar) of writing files: every folder on the way, with
// its mode when it exists (so it is not a change), then each file with the
// mode of the file it replaces (0644 when new). The stream is in memory:
// the files are at most the workspace's file size limit each.
func (g *Gate) fileStream(root string, files []File) (*bytes.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, file := range files {
		rel := file.Rel
		if rel == "" || rel == "." || path.Clean(rel) != rel || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
			return nil, fmt.Errorf("write %q: not a clean path inside the root", rel)
		}
		els := strings.Split(rel, "/")
		for i := 1; i < len(els); i++ {
			d := strings.Join(els[:i], "/")
			if dirs[d] {
				continue
			}
			dirs[d] = true
			mode, err := g.existing(root, d, true)
			if err != nil {
				return nil, err
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: mode, Format: tar.FormatPAX}); err != nil {
				return nil, fmt.Errorf("write: %w", err)
			}
		}
		mode, err := g.existing(root, rel, false)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: mode, Size: int64(len(file.Data)), Format: tar.FormatPAX}); err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
		if _, err := tw.Write(file.Data); err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	return bytes.NewReader(buf.Bytes()), nil
}

// existing returns the tar mode to give rel: the mode bits of what is
// there now (a folder when folder is set, else a regular file), or the
// default for a new one. Anything else in the way is an error the writer
// reports.
func (g *Gate) existing(root, rel string, folder bool) (int64, error) {
	p, err := g.ws.PathIn(root, rel)
	if err != nil {
		return 0, err
	}
	fi, err := g.ws.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if folder {
			return 0o755, nil
		}
		return 0o644, nil
	case err != nil:
		return 0, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return 0, fmt.Errorf("write %s: %s is a symlink: %w (the workspace changed since the plan was made?)", p.Rel, g.ws.Display(p), workspace.ErrSymlink)
	case folder && !fi.IsDir():
		return 0, fmt.Errorf("write %s: %s is not a folder", p.Rel, g.ws.Display(p))
	case !folder && !fi.Mode().IsRegular():
		return 0, fmt.Errorf("write %s: %w", g.ws.Display(p), workspace.ErrNotRegular)
	}
	m := int64(fi.Mode().Perm())
	if fi.Mode()&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m, nil
}
