package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/provider"
)

// Provider names for the CLI, which may not import provider.
type ProviderReport = provider.Report

// ErrNoKey is returned when no API key is there to send.
var ErrNoKey = provider.ErrNoKey

// ProviderTestTimeout bounds `homard provider test` unless --timeout says.
const ProviderTestTimeout = provider.TestTimeout

// Model returns the client of the main role's model ([model] unless
// [models.roles] main names another). The API key is read at call time
// from the vault secret the model's api_key_secret names (released only if
// bound to its base_url's host) or else from the environment variable its
// api_key_env names; it is never stored in config, printed or logged.
// The client is kept while the settings and the key stay the same, so
// every turn of this runtime reuses the provider's connections: one TCP
// and TLS handshake for a serve's life, not one a turn, and no idle
// connection left behind per turn.
func (r *Runtime) Model() (llm.Model, error) {
	m, _, err := r.roleModel(config.RoleMain)
	return m, err
}

// roleModel is Model for role's model, with its settings.
func (r *Runtime) roleModel(role string) (llm.Model, config.Model, error) {
	m, c, err := r.models.For(r.Config, role, os.Getenv, r.Vault)
	return r.reqlog.Wrap(m, role), c, err // each request's shape to homard logs
}

// requestLogPath is the file homard logs reads (internal/reqlog).
func (r *Runtime) requestLogPath() string { return RequestLogFile(r.Paths) }

// RequestLogFile is the file of what each model request contained
// (telemetry.log_requests), for homard logs: it needs no runtime.
func RequestLogFile(p config.Paths) string { return filepath.Join(p.DataDir, "model-requests.jsonl") }

// mainModel is the main role's model settings.
func (r *Runtime) mainModel() config.Model {
	_, m := r.Config.ModelFor(config.RoleMain)
	return m
}

// summaryModel is the summary role's model client and name when another
// model than the main one plays it, else nil (the turn's own model).
func (r *Runtime) summaryModel() (llm.Model, string, error) {
	if name, _ := r.Config.ModelFor(config.RoleSummary); name == r.Config.Models.Roles.Of(config.RoleMain) {
		return nil, "", nil
	}
	m, cfg, err := r.roleModel(config.RoleSummary)
	return m, cfg.Name, err
}

// ProviderTest sends one tiny request, with one tool definition so that an
// endpoint without tool support is caught, and explains what went wrong.
// The whole test is bounded by ProviderTestTimeout.
func (r *Runtime) ProviderTest(ctx context.Context) (ProviderReport, error) {
	return r.ProviderTestWithin(ctx, ProviderTestTimeout)
}

// ProviderTestWithin is ProviderTest bounded by limit (zero means
// ProviderTestTimeout): an endpoint that has not answered in full by then
// fails the test with an error wrapping llm.ErrModelTimeout that says how
// to wait longer.
func (r *Runtime) ProviderTestWithin(ctx context.Context, limit time.Duration) (ProviderReport, error) {
	if limit <= 0 {
		limit = ProviderTestTimeout
	}
	m := r.Config.Model
	rep := provider.Report{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name}
	if m.Wire() == config.ProviderOpenAI && m.APIKeySecret == "" && m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" {
		// Local OpenAI-compatible servers often need no key; say so, go on.
		rep.Reply = "(no key in $" + m.APIKeyEnv + "; sending without one)"
	}
	key, err := provider.Key(m, os.Getenv, r.Vault)
	if err != nil {
		return rep, err
	}
	got, err := provider.Probe(ctx, m, key, limit, fmt.Sprintf("homard provider test --timeout %s", 2*limit))
	if err != nil {
		got.Reply = rep.Reply
		if errors.Is(err, llm.ErrModelTimeout) {
			return got, err
		}
		return got, provider.Explain(m, err)
	}
	return got, nil
}

// FlushCapture starts a capture of every session with turns waiting,
// whatever their number (capture.Service.Flush): a chat that ran its
// turns itself calls it at its end, serve when it stops.
func (r *Runtime) FlushCapture(ctx context.Context) error { return r.captures.Flush(ctx) }

// CaptureIdle starts a capture of every session whose turns wait and
// which has had no turn for memory.capture_idle (capture.Service.Idle).
func (r *Runtime) CaptureIdle(ctx context.Context) error { return r.captures.Idle(ctx) }
