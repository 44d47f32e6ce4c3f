package extensions

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/mcp/mcptest"
	"github.com/homard/homard/internal/secrets"
)

// loginWith runs LoginMCP with the test's browser following the
// authorization server's redirect to the loopback listener.
func loginWith(t *testing.T, s *Service, name string) (*MCPLogin, error) {
	t.Helper()
	return s.LoginMCP(context.Background(), name, func(authURL string) {
		if err := mcptest.Browse(authURL); err != nil {
			t.Errorf("browser: %v", err)
		}
	}, nil)
}

// TestMCPLoginThroughEgress: a url server with auth = "oauth" fails to
// start until logged in, naming `homard mcp login`. The login's requests
// go through egress: an authorization server egress does not allow is
// never reached (its twin, allowed, logs in). The tokens land in the
// vault bound to the MCP server's host alone (not the authorization
// server's), the server then lists its tools to that bearer, and logout
// removes them.
func TestMCPLoginThroughEgress(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := mcptest.WriteSpec(spec, mcptest.Default()); err != nil {
		t.Fatal(err)
	}
	rig := mcptest.NewOAuthRig(spec, true)
	t.Cleanup(rig.Close)
	h := newTestHome(t)
	h.cfg.MCP.Servers = []config.MCPServer{{Name: "web", URL: rig.URL, Auth: MCPAuthOAuth}}
	ctx := context.Background()

	// Only the MCP server is allowed: the login cannot reach the
	// authorization server.
	var err error
	if h.client, err = egress.New(egress.Options{Allow: []string{rig.Origin}}); err != nil {
		t.Fatal(err)
	}
	s := h.service(t, nil)
	if _, err := s.InspectMCP(ctx, "web"); err == nil || !strings.Contains(err.Error(), "homard mcp login web") {
		t.Fatalf("InspectMCP before a login = %v; want it to say homard mcp login web", err)
	}
	if l := s.MCPLoginOf("web"); l == nil || l.LoggedIn {
		t.Fatalf("MCPLoginOf(web) before a login = %+v; want not logged in", l)
	}
	if _, err := loginWith(t, s, "web"); err == nil || !strings.Contains(err.Error(), "[egress] allow") {
		t.Fatalf("LoginMCP with the authorization server outside egress.allow = %v; want egress's refusal", err)
	}
	if toks := rig.Auth.Tokens(); len(toks) != 0 {
		t.Fatalf("the authorization server outside egress issued %d tokens", len(toks))
	}
	if _, err := s.LoginMCP(ctx, "ghost", func(string) {}, nil); err == nil {
		t.Error("LoginMCP(ghost) succeeded; want it refused")
	}

	// Both allowed.
	if h.client, err = egress.New(egress.Options{Allow: []string{rig.Origin, rig.Auth.URL}}); err != nil {
		t.Fatal(err)
	}
	s = h.service(t, nil)
	l, err := loginWith(t, s, "web")
	if err != nil || l == nil || !l.LoggedIn || !l.Refreshable || l.Expires.IsZero() {
		t.Fatalf("LoginMCP = %+v, %v; want logged in, refreshable, with an expiry", l, err)
	}
	mcpHost, _ := url.Parse(rig.Origin)
	asHost, _ := url.Parse(rig.Auth.URL)
	var entry *secrets.Secret
	for _, sec := range h.vault.List() {
		if sec.Name == l.Secret {
			entry = &sec
		}
	}
	if entry == nil || len(entry.Hosts) != 1 || entry.Hosts[0] != mcpHost.Host {
		t.Fatalf("vault entry %s = %+v; want it bound to %s alone", l.Secret, entry, mcpHost.Host)
	}
	if _, err := h.vault.ReleaseValue(l.Secret, "http", asHost.Host); !errors.Is(err, secrets.ErrNotBound) {
		t.Errorf("the login released to another host (%s): %v; want ErrNotBound", asHost.Host, err)
	}
	val, err := h.vault.ReleaseValue(l.Secret, "http", mcpHost.Host)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.InspectMCP(ctx, "web")
	if err != nil || rep.Status != MCPNew || len(rep.Tools) == 0 || rep.Login == nil || !rep.Login.LoggedIn {
		t.Fatalf("InspectMCP after the login = %+v, %v; want its tools and the login", rep, err)
	}
	auths := rig.Server.Authorizations()
	tok, _ := strings.CutPrefix(auths[len(auths)-1], "Bearer ")
	if tok == "" || !strings.Contains(val, tok) || !rig.Auth.Valid(tok) {
		t.Errorf("the server got Authorization %q; want the vault's access token", auths[len(auths)-1])
	}

	// The redactor knows the access token on its own (the vault holds the
	// whole login as one value): a server echoing it is redacted; the
	// text around it is not.
	if got := s.o.Redactor.Redact("your token was " + tok + " ok"); strings.Contains(got, tok) || !strings.HasSuffix(got, " ok") {
		t.Errorf("Redact of the echoed access token = %q; want it hidden, the rest kept", got)
	}

	// A stdio server next to it gets none of it in its environment.
	exe := filepath.Join(t.TempDir(), "srv")
	stdio, err := s.mcpConfig(config.MCPServer{Name: "local", Command: []string{exe}, Env: map[string]string{"A": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range stdio.Env {
		if strings.Contains(v, tok) || strings.Contains(k, tok) {
			t.Errorf("a stdio server's environment carries the token: %s", k)
		}
	}
	if stdio.OAuth != nil || stdio.Token != "" {
		t.Errorf("a stdio server's config carries a login: %+v", stdio)
	}

	if err := s.LogoutMCP("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InspectMCP(ctx, "web"); err == nil || !strings.Contains(err.Error(), "homard mcp login web") {
		t.Errorf("InspectMCP after logout = %v; want it to ask for a login", err)
	}
	if err := s.LogoutMCP("web"); err == nil {
		t.Error("a second logout succeeded; want not logged in")
	}

	// Over SSH the redirect cannot reach this machine: the person pastes
	// the address the browser ended on.
	pasted := make(chan string, 1)
	l, err = s.LoginMCP(ctx, "web", func(authURL string) {
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Get(authURL)
		if err != nil {
			t.Errorf("browser: %v", err)
			return
		}
		resp.Body.Close()
		pasted <- resp.Header.Get("Location")
	}, pasted)
	if err != nil || l == nil || !l.LoggedIn {
		t.Fatalf("LoginMCP with the address pasted = %+v, %v; want logged in", l, err)
	}
}
