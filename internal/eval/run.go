package eval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/secrets"
)

// sandboxWorks reports whether run_command can confine a program here.
func sandboxWorks() bool {
	_, err := sandbox.Select("auto")
	return err == nil
}

// newCanary returns a fresh canary: letters and digits only, so every
// encoding of it is easy to find, and long enough never to occur by chance.
func newCanary() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "hmrdcanary" + hex.EncodeToString(b[:])
}

// world is one run's throw-away home and servers.
type world struct {
	dir      string // everything of the run lives under it
	paths    config.Paths
	root     string // the first workspace root
	outside  string // a folder outside every root
	canary   string
	attacker *sink
	site     *sink
	local    *sink       // plain http, never allowed by egress: an SSRF target
	model    modelServer // the script, or a live run's proxy to the owner's model
	modelURL string      // the base URL the copy's config names
	script   *script
}

func (w *world) vars() map[string]string {
	return map[string]string{"canary": w.canary, "attacker": w.attacker.URL, "site": w.site.URL,
		"local": w.local.URL, "outside": w.outside, "root": w.root}
}

func (w *world) close() {
	for _, s := range []*sink{w.attacker, w.site, w.local} {
		if s != nil {
			s.Close()
		}
	}
	if w.model != nil {
		w.model.Close()
	}
	os.RemoveAll(w.dir)
}

// runOnce builds a world for s (weakened by its twin when twin is set),
// runs the owner's turn and returns what the oracles saw fail, and how
// many calls were denied or held.
func runOnce(ctx context.Context, o Options, s *Scenario, twin bool) ([]string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "homard-eval-")
	if err != nil {
		return nil, 0, err
	}
	w := &world{dir: dir, outside: filepath.Join(dir, "outside"), canary: newCanary()}
	defer w.close()
	// The vars servers need are known once they listen; pages are
	// expanded after, through the map they read.
	pages := map[string]Page{}
	w.attacker, w.site, w.local = newSink("attacker", true, nil), newSink("site", true, pages), newSink("local", false, nil)
	vars := w.vars()
	for _, p := range s.World.Pages {
		p.Body, p.Redirect = expand(p.Body, vars), expand(p.Redirect, vars)
		pages[p.Path] = p
	}
	w.script = &script{steps: s.Steps, answer: s.Answer, vars: vars}
	if w.script.answer == "" {
		w.script.answer = "Done."
	}
	if o.live != nil {
		lm := newLiveModel(o.live.target)
		w.model, w.modelURL = lm, lm.srv.URL+o.live.target.Path
	} else {
		fs := llmtest.NewFuncServer(w.script.reply)
		w.model, w.modelURL = fs, fs.URL+"/v1"
	}

	r, err := w.open(ctx, o, s, twin)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	w.script.vars = w.vars() // the roots are known now
	for _, text := range s.World.Memory {
		if _, err := r.Memory.Remember(ctx, r.Config.Owner, memory.Note{Text: expand(text, w.script.vars), Source: "eval"}); err != nil {
			return nil, 0, fmt.Errorf("the world's memory: %w", err)
		}
	}

	before, err := snapshot(w, s.Expect.FileUnchanged)
	if err != nil {
		return nil, 0, err
	}
	task := s.Task
	if twin && s.Twin.Task != "" {
		task = s.Twin.Task
	}
	if task == "" {
		task = "Please help."
	}
	events := map[string]channel.ToolEvent{}
	var ask func(context.Context, channel.Card) (channel.Choice, error) // nobody answers: a card stays pending
	var approved atomic.Int32                                           // cards approved so far
	switch {
	case twin && s.Twin.Approve:
		ask = func(context.Context, channel.Card) (channel.Choice, error) { approved.Add(1); return channel.Once, nil }
	case s.Approve > 0 && o.live == nil: // a live model's first card may be anything: nobody answers
		ask = func(context.Context, channel.Card) (channel.Choice, error) {
			if approved.Load() >= int32(s.Approve) {
				return channel.Leave, nil
			}
			approved.Add(1)
			return channel.Once, nil
		}
	}
	proposed := 0
	res, runErr := r.Run(ctx, channel.TurnRequest{Text: expand(task, w.vars()), Session: "eval", Ask: ask,
		OnTool: func(ev channel.ToolEvent) {
			if ev.Status == channel.Proposed {
				proposed++
			} else {
				events[ev.ID] = ev
			}
		}})
	held := 0
	for _, ev := range events {
		if ev.Status == channel.Denied || ev.Status == channel.Pending {
			held++
		}
	}
	out := outcome{res: res, err: runErr, events: events, before: before, approved: int(approved.Load()), live: o.live != nil, proposed: proposed}
	return check(ctx, w, r, s, out), held, nil
}

// open lays out the world and opens a runtime on it.
func (w *world) open(ctx context.Context, o Options, s *Scenario, twin bool) (*app.Runtime, error) {
	paths, err := config.ResolvePaths(filepath.Join(w.dir, "home"), func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	w.paths = paths
	if _, err := app.Init(ctx, paths, config.InitOptions{Mode: "smart"}); err != nil {
		return nil, fmt.Errorf("init the copy: %w", err)
	}
	base, basePath := o.Config, o.ConfigPath
	if base == nil {
		if base, err = os.ReadFile(paths.ConfigFile); err != nil {
			return nil, err
		}
		basePath = paths.ConfigFile
	}
	data, err := w.config(base, basePath, s, twin, o.live)
	if err != nil {
		return nil, err
	}
	if _, err := config.WriteChecked(paths.ConfigFile, data); err != nil {
		return nil, fmt.Errorf("the run's config: %w", err)
	}
	if err := w.lay(s); err != nil {
		return nil, err
	}
	if sec := s.World.Secret; sec != nil && !(twin && s.Twin.NoVault) {
		v, err := secrets.OpenVault(paths.VaultFile(), paths.VaultKeyFile())
		if err != nil {
			return nil, err
		}
		if err := v.Set(secrets.Secret{Name: sec.Name, Hosts: []string{sec.Host}}, []byte(w.canary)); err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
	}
	tlsConf := w.site.Client().Transport.(*http.Transport).TLSClientConfig
	return app.Open(ctx, paths, app.Options{SkipMCP: true, EgressTLS: tlsConf})
}

// config returns the owner's config text edited for the run: the model is
// the script, the roots are fresh folders under the run's own, egress also
// allows the attacker and the site (never the local server), nothing
// leaves for telemetry, and the mode is at least the scenario's.
func (w *world) config(base []byte, basePath string, s *Scenario, twin bool, live *liveSetup) ([]byte, error) {
	owner, err := config.Check(basePath, base)
	if err != nil {
		return nil, err
	}
	var roots []config.Root
	for _, rc := range owner.Workspace.Roots {
		p := filepath.Join(w.dir, "roots", rc.Name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, err
		}
		roots = append(roots, config.Root{Name: rc.Name, Path: p, Access: rc.Access})
	}
	w.root = roots[0].Path
	if err := os.MkdirAll(w.outside, 0o700); err != nil {
		return nil, err
	}
	allow := append([]string{}, owner.Egress.Allow...)
	allow = append(allow, w.attacker.URL, w.site.URL)
	var quoted []string
	for _, a := range allow {
		quoted = append(quoted, config.QuoteString(a))
	}
	mode := owner.Permissions.Mode
	if config.ModeRank(s.Mode) > config.ModeRank(mode) {
		mode = s.Mode
	}
	q := config.QuoteString
	edits := []config.KeyEdit{
		{Table: "model", Key: "provider", Value: q("llamacpp")},
		{Table: "model", Key: "base_url", Value: q(w.modelURL)},
		{Table: "model", Key: "name", Value: q("eval-script")},
		{Table: "model", Key: "api_key_env", Value: q("")},
		{Table: "model", Key: "api_key_secret", Value: q("")},
		{Table: "workspace", Key: "roots", Value: config.RootsValue(roots)},
		{Table: "egress", Key: "allow", Value: "[" + strings.Join(quoted, ", ") + "]"},
		{Table: "egress", Key: "search_url", Value: q(w.site.URL + "/rss?q={query}")},
		{Table: "permissions", Key: "mode", Value: q(mode)},
		{Table: "memory", Key: "capture", Value: q("off")},
		{Table: "telemetry", Key: "endpoint", Value: q("")},
		{Table: "telemetry", Key: "log_requests", Value: "false"},
		{Table: "browser", Key: "enabled", Value: "false"},
		// The run's own SQLite file, never the owner's shared database.
		{Table: "store", Key: "url", Value: q("")},
	}
	if live != nil {
		// The owner's model, reached through the run's proxy, its key
		// from the environment (liveKeyEnv).
		edits[0].Value, edits[2].Value, edits[3].Value = q(live.model.Provider), q(live.model.Name), q(liveKeyEnv)
	}
	vars := w.vars()
	add := func(es []Edit) {
		for _, e := range es {
			edits = append(edits, config.KeyEdit{Table: e.Table, Key: e.Key, Value: expand(e.Value, vars)})
		}
	}
	add(s.Config)
	if twin {
		add(s.Twin.Config)
	}
	out, err := config.EditKeys(base, edits...)
	if err != nil || !twin || s.Twin.Rules == "" {
		return out, err
	}
	// Array tables go last in the file, where no table can follow them.
	return append(append(out, '\n'), expand(s.Twin.Rules, vars)+"\n"...), nil
}

// lay writes the world's files and links.
func (w *world) lay(s *Scenario) error {
	vars := w.vars()
	write := func(dir string, f File) error {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(expand(f.Content, vars)), 0o600)
	}
	for _, f := range s.World.Files {
		if err := write(w.root, f); err != nil {
			return err
		}
	}
	for _, f := range s.World.Outside {
		if err := write(w.outside, f); err != nil {
			return err
		}
	}
	for _, l := range s.World.Links {
		p := filepath.Join(w.root, filepath.FromSlash(l.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.Symlink(expand(l.Target, vars), p); err != nil {
			return err
		}
	}
	return nil
}

// where resolves an oracle's path: absolute after expansion, or under the
// first root.
func (w *world) where(p string) string {
	p = expand(p, w.vars())
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.root, filepath.FromSlash(p))
}

// snapshot reads each path's content ("" and absent for a missing file).
func snapshot(w *world, paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(w.where(p))
		switch {
		case os.IsNotExist(err):
			out[p] = "\x00absent"
		case err != nil:
			return nil, err
		default:
			out[p] = string(b)
		}
	}
	return out, nil
}

// quoteShort shows s cut to n bytes, quoted.
func quoteShort(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
