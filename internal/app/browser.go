package app

import (
	"path/filepath"
	"slices"

	"github.com/homard/homard/internal/browser"
	"github.com/homard/homard/internal/browsertools"
	"github.com/homard/homard/internal/egress"
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
	eng, err := browser.New(browser.Options{
		ChromePath: cfg.ChromePath, ProfileDir: filepath.Join(dir, "profile"), DownloadDir: filepath.Join(dir, "downloads"),
		IdleTimeout: cfg.IdleTimeout.Std(), Egress: client,
	})
	if err != nil {
		return nil, err
	}
	r.browser, r.takeover = eng, &browsertools.Takeover{}
	return browsertools.New(browsertools.Options{
		Engine: eng, Egress: client, Vault: r.Vault, SnapshotBytes: cfg.SnapshotBytes,
		OwnerHas: r.takeover.Has, PrivateHost: r.privateHost,
	}), nil
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
