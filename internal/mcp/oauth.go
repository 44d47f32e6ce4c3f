package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// TokenSet is a url server's OAuth login as homard keeps it (in the vault,
// bound to the server's host): the tokens and the client registration
// that refreshes them. Its values are credentials: never print them.
type TokenSet struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: the server gave none
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	TokenURL     string    `json:"token_url"`
	AuthStyle    int       `json:"auth_style,omitempty"` // oauth2.AuthStyle
	Scopes       []string  `json:"scopes,omitempty"`
}

// refreshMargin is how long before its expiry a token is refreshed: a
// request never leaves with a token about to lapse on the way.
const refreshMargin = time.Minute

// AuthCode is what the authorization server sent back to the redirect
// URL: the code and the state (and the issuer, RFC 9207, when it sends
// one). All three are the remote server's words.
type AuthCode struct{ Code, State, Iss string }

// CodeFetcher shows the person authURL and returns what the authorization
// server sent back once they logged in.
type CodeFetcher func(ctx context.Context, authURL string) (AuthCode, error)

// LoginConfig is one `homard mcp login`.
type LoginConfig struct {
	// URL is the server's endpoint.
	URL string
	// Transport carries every request of the login (the probe, discovery,
	// registration, the token request): the app passes egress's.
	Transport http.RoundTripper
	// ClientID is a client registered beforehand; empty means dynamic
	// client registration, which the authorization server must offer.
	ClientID string
	// Scopes replace the ones the server asks for; empty keeps those.
	Scopes []string
	// RedirectURL is the loopback address the browser is sent back to.
	RedirectURL string
	// Fetch shows the authorization URL and waits for the code.
	Fetch CodeFetcher
}

// ErrNoLoginAsked: the server answered without asking for a login.
var ErrNoLoginAsked = errors.New("the server did not ask for a login (it answered without 401)")

// Login runs the authorization code flow of the MCP authorization spec
// with the go-sdk's handler: an unauthenticated request draws the
// server's 401 and WWW-Authenticate, from which the protected-resource
// metadata and then the authorization server's metadata are discovered
// (with the well-known fallbacks); the client is the pre-registered one
// or registers itself (RFC 7591); PKCE S256 and state protect the code,
// which is exchanged for the tokens. Every request goes through
// lc.Transport and none follows a redirect.
func Login(ctx context.Context, lc LoginConfig) (TokenSet, error) {
	if !redirectURLOK(lc.RedirectURL) || lc.Fetch == nil {
		return TokenSet{}, errors.New("login: want a redirect URL on http://127.0.0.1 and a code fetcher")
	}
	client := oauthClient(lc.Transport)
	probe, err := http.NewRequestWithContext(ctx, http.MethodPost, lc.URL, bytes.NewReader([]byte(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"homard","version":"1"}}}`)))
	if err != nil {
		return TokenSet{}, err
	}
	probe.Header.Set("Content-Type", "application/json")
	probe.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(probe)
	if err != nil {
		return TokenSet{}, fmt.Errorf("reach the server: %w", err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		_ = resp.Body.Close()
		return TokenSet{}, fmt.Errorf("%w: status %d", ErrNoLoginAsked, resp.StatusCode)
	}

	var (
		mu  sync.Mutex // guards got; the handler calls NewTokenSource once
		got TokenSet
	)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{lc.RedirectURL},
			TokenEndpointAuthMethod: "none", // a public client: homard keeps no secret it did not get
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              "homard",
		}},
		RedirectURL:         lc.RedirectURL,
		RequestRefreshToken: true,
		Client:              client,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			c, err := lc.Fetch(ctx, a.URL)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: c.Code, State: c.State, Iss: c.Iss}, nil
		},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			mu.Lock()
			got = TokenSet{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, Expiry: t.Expiry,
				ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.Endpoint.TokenURL,
				AuthStyle: int(c.Endpoint.AuthStyle), Scopes: slices.Clone(c.Scopes)}
			mu.Unlock()
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if lc.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: lc.ClientID}
		cfg.DynamicClientRegistrationConfig = nil
	}
	if len(lc.Scopes) > 0 {
		cfg.ScopeFilter = func([]string) []string { return slices.Clone(lc.Scopes) }
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		_ = resp.Body.Close()
		return TokenSet{}, err
	}
	if err := h.Authorize(ctx, probe, resp); err != nil { // closes resp.Body
		return TokenSet{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if got.AccessToken == "" {
		return TokenSet{}, errors.New("the authorization server sent no access token")
	}
	return got, nil
}

// oauthClient is the client of the login's and the refreshes' requests:
// base carries them (egress), no redirect is followed (a redirect could
// take a code, a verifier or a refresh token to another host), and every
// body is capped.
func oauthClient(base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{
		Transport: &bearer{base: base}, // no token: only the cap
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the authorization server answered with a redirect; homard follows none")
		},
	}
}

// OAuth is a url server's login (auth = "oauth"), from the vault.
type OAuth struct {
	// Tokens is the login as `homard mcp login` stored it.
	Tokens TokenSet
	// Save writes a refreshed login back to the vault. Nil keeps it in
	// memory only.
	Save func(TokenSet) error
}

// ErrLoginNeeded: the server's login is missing, expired without a
// refresh token, or its refresh was refused.
var ErrLoginNeeded = errors.New("log in again")

// oauthTokens hands out a server's access token, refreshing it refreshMargin
// before it expires and once more when the server refuses it.
type oauthTokens struct {
	name   string
	client *http.Client     // to the token endpoint: never the bearer
	now    func() time.Time // tests set it
	save   func(TokenSet) error

	// mu guards ts; a refresh holds it, so concurrent calls refresh once.
	mu sync.Mutex
	ts TokenSet
}

func newOAuthTokens(name string, o *OAuth, base http.RoundTripper) *oauthTokens {
	return &oauthTokens{name: name, client: oauthClient(base), now: time.Now, save: o.Save, ts: o.Tokens}
}

// token returns the access token to send; renew asks for a fresh one
// even if the current one has not expired (the server refused it).
func (o *oauthTokens) token(ctx context.Context, renew bool, refused string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if refused != "" && o.ts.AccessToken != refused {
		return o.ts.AccessToken, nil // another request renewed it already
	}
	if !renew && o.ts.AccessToken != "" && (o.ts.Expiry.IsZero() || o.now().Add(refreshMargin).Before(o.ts.Expiry)) {
		return o.ts.AccessToken, nil
	}
	if o.ts.RefreshToken == "" || o.ts.TokenURL == "" {
		return "", fmt.Errorf("mcp server %s: its login expired and cannot be refreshed: %w with homard mcp login %s", o.name, ErrLoginNeeded, o.name)
	}
	cfg := oauth2.Config{ClientID: o.ts.ClientID, ClientSecret: o.ts.ClientSecret, Scopes: o.ts.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: o.ts.TokenURL, AuthStyle: oauth2.AuthStyle(o.ts.AuthStyle)}}
	// An empty access token makes the source refresh at once.
	t, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, o.client), &oauth2.Token{RefreshToken: o.ts.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			err = fmt.Errorf("the authorization server refused (status %d, %s)", re.Response.StatusCode, re.ErrorCode)
		}
		return "", fmt.Errorf("mcp server %s: refresh its login: %v: %w with homard mcp login %s", o.name, err, ErrLoginNeeded, o.name)
	}
	next := o.ts
	next.AccessToken, next.Expiry = t.AccessToken, t.Expiry
	if t.RefreshToken != "" { // a rotated refresh token replaces the old one
		next.RefreshToken = t.RefreshToken
	}
	if o.save != nil {
		if err := o.save(next); err != nil {
			return "", fmt.Errorf("mcp server %s: keep its refreshed login: %w", o.name, err)
		}
	}
	o.ts = next
	return next.AccessToken, nil
}

// redirectURLOK reports whether u is a loopback http redirect URL, the
// only kind Login asks an authorization server to send a code to.
func redirectURLOK(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "http" && p.Hostname() == "127.0.0.1"
}
