package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"

	"github.com/homard/homard/internal/browser"
	"github.com/homard/homard/internal/browsertools"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// newBrowser wires issue 24's isolated browser when [browser] enabled:
// the engine (Chromium started on first use, its profile and downloads
// under homard's data folder) and the browser_* tools over it. Nothing
// starts here; a missing Chromium is reported by the first call and by
// doctor.
func (r *Runtime) newBrowser(client *egress.Client) ([]tool.Tool, error) {
	cfg := r.Config.Browser
	if !cfg.Enabled {
		return nil, nil
	}
	dir := filepath.Join(r.Paths.DataDir, "browser")
	// Where homard confines Chromium itself (it runs as root), Chromium
	// sees none of homard's data and config, nor the workspace roots.
	hide := []string{r.Paths.DataDir, filepath.Dir(r.Paths.ConfigFile)}
	if r.Paths.Home != "" {
		hide = append(hide, r.Paths.Home)
	}
	for _, root := range r.Config.Workspace.Roots {
		hide = append(hide, root.Path)
	}
	eng, err := browser.New(browser.Options{
		ChromePath: cfg.ChromePath, ProfileDir: filepath.Join(dir, "profile"), DownloadDir: filepath.Join(dir, "downloads"),
		IdleTimeout: cfg.IdleTimeout.Std(), Egress: client, Hide: hide,
	})
	if err != nil {
		return nil, err
	}
	r.browser, r.takeover = eng, &browsertools.Takeover{}
	return browsertools.New(browsertools.Options{
		Engine: eng, Egress: client, Vault: r.Vault, SnapshotBytes: cfg.SnapshotBytes,
		OwnerHas: r.takeover.Has, PrivateHost: r.privateHost, Keep: r.keepDownload,
	}), nil
}

// keepDownload stores a file a page downloaded as an artifact of the
// calling session: the owner's to see (web UI), never the model's to
// read, deleted with the other artifacts after artifacts.keep.
func (r *Runtime) keepDownload(ctx context.Context, name string, data []byte) (string, error) {
	c, ok := tool.CallerFrom(ctx)
	if !ok || c.Owner == "" || c.Session == "" {
		return "", errors.New("no caller to keep it for")
	}
	if data == nil {
		data = []byte{} // an empty file is still a file (a binary artifact has data)
	}
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go ≥ 1.24)
	id := "art_" + hex.EncodeToString(b[:])
	return id, r.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.InsertArtifact(store.Artifact{ID: id, Owner: c.Owner, Session: c.Session, Tool: "browser download",
			Untrusted: true, CreatedAt: r.now(), MIME: "application/octet-stream", Name: name, Data: data})
	})
}

// privateHost reports whether pages of host hold the owner's data: a
// vault secret is bound to it, or the owner handed the browser back on
// one of its pages (a login).
func (r *Runtime) privateHost(host string) bool {
	if r.takeover.SignedIn(host) {
		return true
	}
	for _, s := range r.Vault.List() {
		if slices.Contains(s.Hosts, host) {
			return true
		}
	}
	return false
}

// artifactView serves the owner's artifacts to the gateway: another
// owner's reads as not found, as an unknown id does.
type artifactView struct {
	st    *store.Store
	owner string
}

func (v artifactView) Artifact(ctx context.Context, id string) (channel.Artifact, error) {
	a, err := v.st.Artifact(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && a.Owner != v.owner {
		return channel.Artifact{}, channel.ErrNotFound
	}
	if err != nil {
		return channel.Artifact{}, err
	}
	return channel.Artifact{ID: a.ID, Tool: a.Tool, MIME: a.MIME, Name: a.Name, Text: a.Text, Data: a.Data,
		Untrusted: a.Untrusted, CreatedAt: a.CreatedAt}, nil
}

// browserControl returns the web UI's control of the browser, nil when
// [browser] is off.
func (r *Runtime) browserControl() channel.BrowserControl {
	if r.browser == nil {
		return nil
	}
	return browsertools.Control{Engine: r.browser, Takeover: r.takeover}
}
