// Package provider reaches the configured model: it finds the API key (a
// vault secret released only for base_url's host, or the environment
// variable), builds the wire client bounded by the model deadlines, keeps
// one client per model name, settings and key so turns reuse the
// provider's connections (Clients, Cache) — one per role's model
// ([models.roles]) — sends `homard provider test`'s and `homard setup`'s
// one tiny request (Probe), and explains a provider's failure in words that
// say what to do (Explain).
package provider

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

// Clients keeps one Cache per model name: "main" for [model], NAME for a
// [models.NAME] table. Each role's model so keeps its own client (and the
// provider's connections) across turns, and a change of one model's
// settings or key replaces that model's client alone.
type Clients struct {
	mu     sync.Mutex // guards byName
	byName map[string]*Cache
}

// For returns the client of the model that plays role in cfg
// ([models.roles]), and that model's settings. Its key is found as Key
// finds [model]'s, from the model's own api_key_secret (released only to
// its base_url's host) or api_key_env.
func (c *Clients) For(cfg *config.Config, role string, getenv func(string) string, vault Keys) (llm.Model, config.Model, error) {
	name, m := cfg.ModelFor(role)
	key, err := Key(m, getenv, vault)
	if err != nil {
		if name != config.MainModel {
			err = fmt.Errorf("[models.%s]: %w", name, err)
		}
		return nil, m, err
	}
	client, err := c.Get(name, m, key)
	return client, m, err
}

// Get returns the kept client of the model called name, built for cfg and
// key (see Cache.Get).
func (c *Clients) Get(name string, cfg config.Model, key string) (llm.Model, error) {
	c.mu.Lock()
	cache := c.byName[name]
	if cache == nil {
		cache = &Cache{table: "models." + name}
		if name == config.MainModel {
			cache.table = "model"
		}
		if c.byName == nil {
			c.byName = map[string]*Cache{}
		}
		c.byName[name] = cache
	}
	c.mu.Unlock()
	return cache.Get(cfg, key)
}

// Close closes every kept client's idle connections.
func (c *Clients) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cache := range c.byName {
		cache.Close()
	}
}

// Cache holds the one model client the runtime hands out for one model,
// built for cfg and key; a change of either builds a new one and closes
// the old one's idle connections. Clients are safe for concurrent turns.
type Cache struct {
	table string // the config table named in timeout errors; "" means "model"

	mu  sync.Mutex // guards the fields below
	cfg config.Model
	key string
	hc  *http.Client
	m   llm.Model
}

func (c *Cache) Get(cfg config.Model, key string) (llm.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil && c.cfg == cfg && c.key == key {
		return c.m, nil
	}
	table := cmp.Or(c.table, "model")
	hc := llm.HTTPClient(cfg.ConnectTimeout.Std(), table+".connect_timeout")
	m, err := newWith(table, cfg, key, hc)
	if err != nil {
		return nil, err
	}
	c.closeIdle()
	c.cfg, c.key, c.hc, c.m = cfg, key, hc, m
	return m, nil
}

// Close closes the kept client's idle connections (the runtime closes).
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeIdle()
}

func (c *Cache) closeIdle() {
	if c.hc != nil {
		c.hc.CloseIdleConnections()
	}
}

// Keys is what Key needs from the vault.
type Keys interface {
	ReleaseValue(name, scheme, host string) (string, error)
}

// Key finds the API key: the vault secret when one is named, else the
// environment variable.
func Key(m config.Model, getenv func(string) string, vault Keys) (string, error) {
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
// vault secret (Key fails before any request when it is missing), or
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

// New builds the configured client, bounded by the model deadlines so
// an endpoint that cannot be reached, accepts and never answers, stalls
// mid-answer or trickles without end ends the turn with a message naming
// the setting instead of hanging it.
func New(m config.Model, key string) (llm.Model, error) {
	return NewWith(m, key, llm.HTTPClient(m.ConnectTimeout.Std(), "model.connect_timeout"))
}

// NewWith is New over the HTTP client hc.
func NewWith(m config.Model, key string, hc *http.Client) (llm.Model, error) {
	return newWith("model", m, key, hc)
}

// newWith is NewWith for the model of table ("model", "models.local"),
// which the deadline errors name.
func newWith(table string, m config.Model, key string, hc *http.Client) (llm.Model, error) {
	c, err := newClient(m, key, hc)
	if err != nil {
		return nil, err
	}
	return llm.WithDeadlines(c, llm.Deadlines{
		First: m.FirstEventTimeout.Std(), Idle: m.IdleTimeout.Std(), Total: m.RequestTimeout.Std(),
		FirstSetting: table + ".first_event_timeout", IdleSetting: table + ".idle_timeout", TotalSetting: table + ".request_timeout"}), nil
}

func newClient(m config.Model, key string, hc *http.Client) (llm.Model, error) {
	switch m.Wire() {
	case config.ProviderOpenAI:
		c := openai.New(openai.Options{BaseURL: m.BaseURL, APIKey: key, HTTPClient: hc})
		c.AutoToolChoiceOnly = m.AutoToolChoiceOnly()
		return c, nil
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

// Report is the outcome of `homard provider test`.
type Report struct {
	Provider, BaseURL, Model string
	Reply                    string
	Latency                  time.Duration
	Usage                    llm.Usage
}

// Probe sends the one tiny request of `homard provider test` and
// `homard setup` with key, bounded by timeout; longer is the command that
// waits longer, named when the timeout fires. Its error is the client's,
// unexplained.
func Probe(ctx context.Context, m config.Model, key string, timeout time.Duration, longer string) (Report, error) {
	rep := Report{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name}
	model, err := New(m, key)
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

func Explain(m config.Model, err error) error {
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

// TestTimeout bounds `homard provider test` as a whole unless the caller
// gives another limit (its --timeout flag).
const TestTimeout = 60 * time.Second
