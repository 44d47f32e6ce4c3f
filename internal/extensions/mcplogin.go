package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/secrets"
)

// MCPAuthOAuth is a url server's auth when it asks for a login.
const MCPAuthOAuth = "oauth"

// MCPLogin is what homard knows of a url server's login, without any of
// its tokens: what `homard mcp list` and doctor show.
type MCPLogin struct {
	// LoggedIn: the vault holds a login for the server's host.
	LoggedIn bool `json:"logged_in"`
	// Expires is when its access token expires (homard refreshes it
	// before); zero when the server gave no expiry or there is no login.
	Expires time.Time `json:"expires,omitzero"`
	// Refreshable: the login has a refresh token.
	Refreshable bool `json:"refreshable"`
	// Secret is the vault entry holding it.
	Secret string `json:"secret"`
}

// mcpLoginSecret is the vault entry of server name's login.
func mcpLoginSecret(name string) string { return "mcp-login-" + name }

// loginTarget is where a url server's login may go: its url's scheme and
// host, the one host its vault entry is bound to.
func loginTarget(sc config.MCPServer) (scheme, host string, err error) {
	u, err := url.Parse(sc.URL)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("mcp server %s: url %q has no host to bind its login to", sc.Name, sc.URL)
	}
	return strings.ToLower(u.Scheme), strings.ToLower(u.Host), nil
}

// loadMCPLogin reads server sc's login from the vault, released only to
// its url's host.
func (s *Service) loadMCPLogin(sc config.MCPServer) (mcp.TokenSet, error) {
	scheme, host, err := loginTarget(sc)
	if err != nil {
		return mcp.TokenSet{}, err
	}
	v, err := s.o.Vault.ReleaseValue(mcpLoginSecret(sc.Name), scheme, host)
	if errors.Is(err, secrets.ErrNoSecret) {
		return mcp.TokenSet{}, fmt.Errorf("mcp server %s asks for a login and has none: run homard mcp login %s", sc.Name, sc.Name)
	}
	if err != nil {
		return mcp.TokenSet{}, fmt.Errorf("mcp server %s: its login: %w (run homard mcp login %s)", sc.Name, err, sc.Name)
	}
	var ts mcp.TokenSet
	if err := json.Unmarshal([]byte(v), &ts); err != nil {
		return mcp.TokenSet{}, fmt.Errorf("mcp server %s: its login in the vault is damaged: run homard mcp login %s", sc.Name, sc.Name)
	}
	return ts, nil
}

// saveMCPLogin stores ts as server sc's login, bound to its url's host
// alone (over http only when the url itself is http, which egress allows
// only for an endpoint listed in [egress] allow).
func (s *Service) saveMCPLogin(sc config.MCPServer, ts mcp.TokenSet) error {
	scheme, host, err := loginTarget(sc)
	if err != nil {
		return err
	}
	b, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	return s.o.Vault.Set(secrets.Secret{Name: mcpLoginSecret(sc.Name), Hosts: []string{host}, AllowHTTP: scheme == "http"}, b)
}

// mcpOAuth is a url server's login as mcp.Connect takes it: refreshed
// logins are written back to the vault.
func (s *Service) mcpOAuth(sc config.MCPServer) (*mcp.OAuth, error) {
	ts, err := s.loadMCPLogin(sc)
	if err != nil {
		return nil, err
	}
	return &mcp.OAuth{Tokens: ts, Save: func(next mcp.TokenSet) error { return s.saveMCPLogin(sc, next) }}, nil
}

// MCPLoginOf reports server name's login; ok is false when the server is
// not configured with auth = "oauth".
func (s *Service) MCPLoginOf(name string) (l MCPLogin, ok bool) {
	sc, found := s.o.Config.MCPServerNamed(name)
	if !found || sc.Auth != MCPAuthOAuth {
		return MCPLogin{}, false
	}
	l.Secret = mcpLoginSecret(name)
	if ts, err := s.loadMCPLogin(sc); err == nil {
		l.LoggedIn, l.Expires, l.Refreshable = true, ts.Expiry, ts.RefreshToken != ""
	}
	return l, true
}

// oauthServer returns the configured url server name that asks for a login.
func (s *Service) oauthServer(name string) (config.MCPServer, error) {
	sc, ok := s.o.Config.MCPServerNamed(name)
	switch {
	case !ok:
		return sc, fmt.Errorf("no MCP server named %q in %s: add a [[mcp.servers]] table (docs/CONFIG.md)", name, s.o.Paths.ConfigFile)
	case sc.Auth != MCPAuthOAuth:
		return sc, fmt.Errorf("mcp server %s does not ask for a login: add auth = \"oauth\" to its [[mcp.servers]] table in %s", name, s.o.Paths.ConfigFile)
	}
	return sc, nil
}

// LoginMCP logs in to url server name (auth = "oauth") with the MCP
// authorization flow (mcp.Login), every request through egress under the
// same checks as the server's own. show is given the address the person
// opens (the remote server's: print it through termtext); the browser is
// sent back to a listener on 127.0.0.1, or the person pastes the address
// it ended on (or its code) into pasted, which may be nil. The tokens are
// stored in the vault, bound to the server's host alone.
func (s *Service) LoginMCP(ctx context.Context, name string, show func(authURL string), pasted <-chan string) (MCPLogin, error) {
	sc, err := s.oauthServer(name)
	if err != nil {
		return MCPLogin{}, err
	}
	if s.o.Egress == nil {
		return MCPLogin{}, fmt.Errorf("mcp server %s: no egress client to reach %s through", sc.Name, sc.URL)
	}
	if err := s.o.Egress.Check(sc.URL); err != nil {
		return MCPLogin{}, fmt.Errorf("mcp server %s: url %s: %w", sc.Name, sc.URL, err)
	}
	red, err := mcp.ListenRedirect()
	if err != nil {
		return MCPLogin{}, err
	}
	defer red.Close()
	fetch := func(ctx context.Context, authURL string) (mcp.AuthCode, error) {
		show(authURL)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // ends the wait below
		type result struct {
			code mcp.AuthCode
			err  error
		}
		got := make(chan result, 1)
		go func() {
			c, err := red.Wait(ctx)
			got <- result{c, err}
		}()
		select {
		case r := <-got:
			return r.code, r.err
		case line := <-pasted:
			return mcp.ParsePasted(line, authURL)
		}
	}
	ts, err := mcp.Login(ctx, mcp.LoginConfig{URL: sc.URL, Transport: s.o.Egress.Transport(), ClientID: sc.ClientID,
		Scopes: sc.Scopes, RedirectURL: red.URL, Fetch: fetch})
	if err != nil {
		return MCPLogin{}, fmt.Errorf("mcp server %s: login: %w", sc.Name, err)
	}
	if err := s.saveMCPLogin(sc, ts); err != nil {
		return MCPLogin{}, fmt.Errorf("mcp server %s: keep its login in the vault: %w", sc.Name, err)
	}
	l, _ := s.MCPLoginOf(name)
	return l, nil
}

// LogoutMCP removes server name's login from the vault.
func (s *Service) LogoutMCP(name string) error {
	if _, err := s.oauthServer(name); err != nil {
		return err
	}
	if err := s.o.Vault.Remove(mcpLoginSecret(name)); err != nil {
		if errors.Is(err, secrets.ErrNoSecret) {
			return fmt.Errorf("mcp server %s is not logged in", name)
		}
		return err
	}
	return nil
}

// loginReport is MCPLoginOf for a report: nil for a server without a login.
func (s *Service) loginReport(name string) *MCPLogin {
	if l, ok := s.MCPLoginOf(name); ok {
		return &l
	}
	return nil
}
