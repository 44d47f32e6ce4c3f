package app

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// Model returns the configured model client. The API key is read at call
// time from the vault secret model.api_key_secret names (released only if
// bound to base_url's host) or else from the environment variable
// model.api_key_env names; it is never stored in config, printed or logged.
// The client is kept while the settings and the key stay the same, so
// every turn of this runtime reuses the provider's connections: one TCP
// and TLS handshake for a serve's life, not one a turn, and no idle
// connection left behind per turn.
func (r *Runtime) Model() (llm.Model, error) {
	key, err := provider.Key(r.Config.Model, os.Getenv, r.Vault)
	if err != nil {
		return nil, err
	}
	return r.models.Get(r.Config.Model, key)
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
