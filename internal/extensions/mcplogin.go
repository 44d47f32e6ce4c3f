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
	// Secret is the vault entry holding it: mcp-login-NAME.
	Secret string `json:"secret"`
}

// mcpLogin reads server sc's login from the vault, released only to its
// url's scheme and host.
func (s *Service) mcpLogin(sc config.MCPServer) (mcp.TokenSet, error) {
	var ts mcp.TokenSet
	u, err := url.Parse(sc.URL)
	if err == nil {
		var v string
		if v, err = s.o.Vault.ReleaseValue("mcp-login-"+sc.Name, u.Scheme, strings.ToLower(u.Host)); err == nil {
			err = json.Unmarshal([]byte(v), &ts)
		}
	}
	if errors.Is(err, secrets.ErrNoSecret) {
		err = errors.New("none is stored")
	}
	if err != nil {
		return ts, fmt.Errorf("mcp server %s asks for a login: %w: run homard mcp login %s", sc.Name, err, sc.Name)
	}
	s.learn(ts)
	return ts, nil
}

// learn tells the redactor ts's tokens: a login stored after this
// process started, or refreshed, is redacted like the vault's values.
func (s *Service) learn(ts mcp.TokenSet) {
	if s.o.Redactor != nil {
		s.o.Redactor.Learn(ts.AccessToken, ts.RefreshToken, ts.ClientSecret)
	}
}

// saveMCPLogin stores ts as server sc's login, bound to its url's host
// alone (over http only when the url itself is http, which egress allows
// only for an endpoint listed in [egress] allow).
func (s *Service) saveMCPLogin(sc config.MCPServer, ts mcp.TokenSet) error {
	u, err := url.Parse(sc.URL)
	if err != nil {
		return err
	}
	s.learn(ts)
	b, _ := json.Marshal(ts)
	return s.o.Vault.Set(secrets.Secret{Name: "mcp-login-" + sc.Name, Hosts: []string{u.Host}, AllowHTTP: u.Scheme == "http"}, b)
}

// MCPLoginOf reports server name's login; nil when the server is not
// configured with auth = "oauth".
func (s *Service) MCPLoginOf(name string) *MCPLogin {
	sc, err := s.oauthServer(name)
	if err != nil {
		return nil
	}
	l := &MCPLogin{Secret: "mcp-login-" + name}
	if ts, err := s.mcpLogin(sc); err == nil {
		l.LoggedIn, l.Expires, l.Refreshable = true, ts.Expiry, ts.RefreshToken != ""
	}
	return l
}

// LoginMCP logs in to url server name (auth = "oauth") with the MCP
// authorization flow (mcp.Login), every request through egress's
// transport, under the same checks as the server's own. show is given the address the person
// opens (the remote server's: print it through termtext); the browser is
// sent back to a listener on 127.0.0.1, or the person pastes the address
// it ended on (or its code) into pasted, which may be nil. The tokens are
// stored in the vault, bound to the server's host alone.
func (s *Service) LoginMCP(ctx context.Context, name string, show func(authURL string), pasted <-chan string) (*MCPLogin, error) {
	sc, err := s.oauthServer(name)
	if err != nil {
		return nil, err
	}
	red, err := mcp.ListenRedirect()
	if err != nil {
		return nil, err
	}
	defer red.Close()
	ts, err := mcp.Login(ctx, mcp.LoginConfig{URL: sc.URL, Transport: s.o.Egress.Transport(), ClientID: sc.ClientID,
		Scopes: sc.Scopes, RedirectURL: red.URL, Fetch: func(ctx context.Context, authURL string) (mcp.AuthCode, error) {
			show(authURL)
			return red.Wait(ctx, pasted, authURL)
		}})
	if err == nil {
		err = s.saveMCPLogin(sc, ts)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: login: %w", sc.Name, err)
	}
	return s.MCPLoginOf(name), nil
}

// LogoutMCP removes server name's login from the vault.
func (s *Service) LogoutMCP(name string) error {
	if _, err := s.oauthServer(name); err != nil {
		return err
	}
	return s.o.Vault.Remove("mcp-login-" + name)
}

// oauthServer returns the configured url server name that asks for a login.
func (s *Service) oauthServer(name string) (config.MCPServer, error) {
	sc, ok := s.o.Config.MCPServerNamed(name)
	if !ok || sc.Auth != MCPAuthOAuth {
		return sc, fmt.Errorf("no MCP server %q with auth = \"oauth\" in %s: add it to its [[mcp.servers]] table (docs/CONFIG.md)", name, s.o.Paths.ConfigFile)
	}
	return sc, nil
}
