package eval

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/provider"
	"github.com/homard/homard/internal/secrets"
)

// liveKeyEnv is the variable the copy's config reads the model key from in
// a live run: the key never enters the throw-away home's files.
const liveKeyEnv = "HOMARD_EVAL_LIVE_KEY"

// modelServer is where the copy's model requests go: the script, or in a
// live run a proxy to the owner's model. Either records what it was sent,
// for the oracles that read the model's requests.
type modelServer interface {
	Requests() []llmtest.Recorded
	Close()
}

// liveModel forwards the copy's requests to the owner's real model
// endpoint, unchanged, streaming the answers back, and records each
// request. It listens on loopback for this run only.
type liveModel struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []llmtest.Recorded
}

func newLiveModel(target *url.URL) *liveModel {
	m := &liveModel{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = target.Scheme, target.Host, target.Host
		},
		FlushInterval: -1, // an event stream: every event as it comes
	}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, "eval: read request: "+err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, llmtest.Recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Remote: r.RemoteAddr})
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	return m
}

func (m *liveModel) Requests() []llmtest.Recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llmtest.Recorded(nil), m.reqs...)
}

func (m *liveModel) Close() { m.srv.Close() }

// liveModelOf returns the owner's main model as the live runs use it:
// its settings and its key, released as homard releases it (from the
// environment, or from the owner's vault for model.base_url's host only).
func liveModelOf(o Options) (config.Model, string, error) {
	owner, err := config.Check(o.ConfigPath, o.Config)
	if err != nil {
		return config.Model{}, "", err
	}
	m := owner.Model
	var vault provider.Keys
	if m.APIKeySecret != "" {
		if o.Home == nil {
			return config.Model{}, "", fmt.Errorf("--live: model.api_key_secret %q needs the home's vault", m.APIKeySecret)
		}
		v, err := secrets.OpenVault(o.Home.VaultFile(), o.Home.VaultKeyFile())
		if err != nil {
			return config.Model{}, "", fmt.Errorf("--live: the model key: %w", err)
		}
		vault = v
	}
	key, err := provider.Key(m, os.Getenv, vault)
	if err != nil {
		return config.Model{}, "", fmt.Errorf("--live: the model key: %w", err)
	}
	if key == "" && !m.Local() {
		return config.Model{}, "", fmt.Errorf("--live: %s has no key (model.api_key_env, model.api_key_secret): homard setup connects one", m.Provider)
	}
	return m, key, nil
}
