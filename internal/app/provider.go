package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/anthropic"
	"github.com/homard/homard/internal/llm/openai"
	"github.com/homard/homard/internal/secrets"
)

// Model returns the configured model client. The API key is read at call
// time from the vault secret model.api_key_secret names (released only if
// bound to base_url's host) or else from the environment variable
// model.api_key_env names; it is never stored in config, printed or logged.
// The client is kept while the settings and the key stay the same, so
// every turn of this runtime reuses the provider's connections: one TCP
// and TLS handshake for a serve's life, not one a turn, and no idle
// connection left behind per turn.
func (r *Runtime) Model() (llm.Model, error) {
	key, err := modelKey(r.Config.Model, os.Getenv, r.Vault)
	if err != nil {
		return nil, err
	}
	return r.models.get(r.Config.Model, key)
}

// modelCache holds the one model client Model hands out, built for cfg
// and key; a change of either builds a new one and closes the old one's
// idle connections. Clients are safe for concurrent turns.
type modelCache struct {
	mu  sync.Mutex
	cfg config.Model
	key string
	hc  *http.Client
	m   llm.Model
}

func (c *modelCache) get(cfg config.Model, key string) (llm.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil && c.cfg == cfg && c.key == key {
		return c.m, nil
	}
	hc := llm.HTTPClient(cfg.ConnectTimeout.Std(), "model.connect_timeout")
	m, err := newModelWith(cfg, key, hc)
	if err != nil {
		return nil, err
	}
	c.close()
	c.cfg, c.key, c.hc, c.m = cfg, key, hc, m
	return m, nil
}

// close closes the kept client's idle connections.
func (c *modelCache) close() {
	if c.hc != nil {
		c.hc.CloseIdleConnections()
	}
}

// keySource is what modelKey needs from the vault.
type keySource interface {
	ReleaseValue(name, scheme, host string) (string, error)
}

// modelKey finds the API key: the vault secret when one is named, else the
// environment variable.
func modelKey(m config.Model, getenv func(string) string, vault keySource) (string, error) {
	if m.APIKeySecret == "" {
		return getenv(m.APIKeyEnv), nil
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("model.base_url %q has no host to release secret %q to", m.BaseURL, m.APIKeySecret)
	}
	host := strings.ToLower(u.Host)
	key, err := vault.ReleaseValue(m.APIKeySecret, u.Scheme, host)
	switch {
	case errors.Is(err, secrets.ErrPlainHTTP):
		return "", fmt.Errorf("%w: %w (model.base_url is %s)", ErrNoKey, err, m.BaseURL)
	case errors.Is(err, secrets.ErrNoSecret):
		return "", fmt.Errorf("%w: model.api_key_secret names %q, which is not in the vault: homard secret set %s --host %s",
			ErrNoKey, m.APIKeySecret, m.APIKeySecret, host)
	case errors.Is(err, secrets.ErrNotBound):
		return "", fmt.Errorf("%w: %w; the model endpoint is %s: homard secret set %s --host %s (this replaces the value)",
			ErrNoKey, err, host, m.APIKeySecret, host)
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrNoKey, err)
	}
	return key, nil
}

// keyConfigured reports whether m names a key that is there to send: a
// vault secret (modelKey fails before any request when it is missing), or
// an environment variable that is set.
func keyConfigured(m config.Model, getenv func(string) string) bool {
	return m.APIKeySecret != "" || (m.APIKeyEnv != "" && getenv(m.APIKeyEnv) != "")
}

// noKeyWhy says why no key was sent, for a message.
func noKeyWhy(m config.Model) string {
	if m.APIKeyEnv == "" {
		return "model.api_key_env and model.api_key_secret are both empty"
	}
	return "$" + m.APIKeyEnv + " is empty and model.api_key_secret names no vault secret"
}

// keyOrigin says where the key comes from, for messages.
func keyOrigin(m config.Model) string {
	if m.APIKeySecret != "" {
		return "vault secret " + m.APIKeySecret
	}
	return "$" + m.APIKeyEnv
}

// newModel builds the configured client, bounded by the model deadlines so
// an endpoint that cannot be reached, accepts and never answers, stalls
// mid-answer or trickles without end ends the turn with a message naming
// the setting instead of hanging it.
func newModel(m config.Model, key string) (llm.Model, error) {
	return newModelWith(m, key, llm.HTTPClient(m.ConnectTimeout.Std(), "model.connect_timeout"))
}

// newModelWith is newModel over the HTTP client hc.
func newModelWith(m config.Model, key string, hc *http.Client) (llm.Model, error) {
	c, err := newClient(m, key, hc)
	if err != nil {
		return nil, err
	}
	return llm.WithDeadlines(c, llm.Deadlines{
		First: m.FirstEventTimeout.Std(), Idle: m.IdleTimeout.Std(), Total: m.RequestTimeout.Std(),
		FirstSetting: "model.first_event_timeout", IdleSetting: "model.idle_timeout", TotalSetting: "model.request_timeout"}), nil
}

func newClient(m config.Model, key string, hc *http.Client) (llm.Model, error) {
	switch m.Wire() {
	case config.ProviderOpenAI:
		return openai.New(openai.Options{BaseURL: m.BaseURL, APIKey: key, HTTPClient: hc}), nil
	case config.ProviderAnthropic:
		if key == "" {
			return nil, fmt.Errorf("%w: $%s is empty; export %s=… or keep it in the vault (model.api_key_secret); the key is never written to config.toml",
				ErrNoKey, m.APIKeyEnv, m.APIKeyEnv)
		}
		return anthropic.New(anthropic.Options{BaseURL: m.BaseURL, APIKey: key, HTTPClient: hc}), nil
	}
	return nil, fmt.Errorf("unknown provider %q", m.Provider)
}

// ErrNoKey is returned when the API key variable is empty.
var ErrNoKey = errors.New("no API key")

// ProviderReport is the outcome of `homard provider test`.
type ProviderReport struct {
	Provider, BaseURL, Model string
	Reply                    string
	Latency                  time.Duration
	Usage                    llm.Usage
}

// ProviderTestTimeout bounds `homard provider test` as a whole unless the
// caller gives another limit (its --timeout flag).
const ProviderTestTimeout = 60 * time.Second

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
	rep := ProviderReport{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name}
	if m.Wire() == config.ProviderOpenAI && m.APIKeySecret == "" && m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" {
		// Local OpenAI-compatible servers often need no key; say so, go on.
		rep.Reply = "(no key in $" + m.APIKeyEnv + "; sending without one)"
	}
	key, err := modelKey(m, os.Getenv, r.Vault)
	if err != nil {
		return rep, err
	}
	got, err := probeModel(ctx, m, key, limit, fmt.Sprintf("homard provider test --timeout %s", 2*limit))
	if err != nil {
		got.Reply = rep.Reply
		if errors.Is(err, llm.ErrModelTimeout) {
			return got, err
		}
		return got, explainProviderError(m, err)
	}
	return got, nil
}

// probeModel sends the one tiny request of `homard provider test` and
// `homard setup` with key, bounded by timeout; longer is the command that
// waits longer, named when the timeout fires. Its error is the client's,
// unexplained.
func probeModel(ctx context.Context, m config.Model, key string, timeout time.Duration, longer string) (ProviderReport, error) {
	rep := ProviderReport{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name}
	model, err := newModel(m, key)
	if err != nil {
		return rep, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w: no complete answer within %s; the endpoint is slow or stalled — check that it is up, or wait longer with %s",
		llm.ErrModelTimeout, timeout, longer))
	defer cancel()
	start := time.Now()
	stream, err := model.Stream(ctx, llm.Request{
		Model:     m.Name,
		System:    "You are a connectivity check. Reply with the single word OK.",
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: "ping"}},
		Tools:     []llm.ToolSpec{{Name: "noop", Description: "Does nothing; never call it.", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}},
		MaxTokens: 16,
	})
	if err == nil {
		var res llm.Result
		res, err = llm.Collect(stream)
		rep.Reply, rep.Usage = res.Text, res.Usage
	}
	rep.Latency = time.Since(start)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, llm.ErrModelTimeout) {
		return rep, cause
	}
	return rep, err
}

func explainProviderError(m config.Model, err error) error {
	switch {
	case errors.Is(err, agent.ErrContextTooLong), errors.Is(err, llm.ErrModelTimeout):
		return err // already says what to do
	case errors.Is(err, llm.ErrAuth) && !keyConfigured(m, os.Getenv):
		return fmt.Errorf("%w: key not set: %s, and %s answered 401/403: run homard setup (it keeps the key in the encrypted vault), or export %s=…: %w",
			ErrNoKey, noKeyWhy(m), m.BaseURL, cmp.Or(m.APIKeyEnv, "OPENAI_API_KEY"), err)
	case errors.Is(err, llm.ErrAuth):
		return fmt.Errorf("the endpoint refused the key in %s (401/403): check the key and that it belongs to %s: %w", keyOrigin(m), m.BaseURL, err)
	case errors.Is(err, llm.ErrModelNotFound):
		return fmt.Errorf("the endpoint does not know model %q: fix model.name in config.toml: %w", m.Name, err)
	case errors.Is(err, llm.ErrUnreachable):
		return fmt.Errorf("cannot reach %s: check model.base_url and that the server is running: %w", m.BaseURL, err)
	case errors.Is(err, llm.ErrBadRequest):
		return fmt.Errorf("the endpoint rejected the request; if it mentions tools, this model or server has no tool-call support, which homard needs: %w", err)
	case errors.Is(err, llm.ErrContextLength):
		return fmt.Errorf("the request is longer than %q's context window: lower model.context_tokens below the model's window: %w", m.Name, err)
	case errors.Is(err, llm.ErrRateLimited):
		return fmt.Errorf("rate limited even after retries; try again later: %w", err)
	}
	return err
}
