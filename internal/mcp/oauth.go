package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The OAuth 2.1 flow of the MCP authorization spec is written here rather
// than taken from the go-sdk's auth and oauthex packages with
// golang.org/x/oauth2: those three weigh 123 KB in the binary, which its
// 25 MB ceiling cannot pay; the flow homard needs (one authorization code
// grant with PKCE, one refresh grant) is this file.

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
	Resource     string    `json:"resource"` // RFC 8707: the server's URL
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

// ErrLoginNeeded: the server's login is missing, expired without a
// refresh token, or its refresh was refused.
var ErrLoginNeeded = errors.New("its login expired")

// Login runs the authorization code flow of the MCP authorization spec:
// an unauthenticated request draws the server's 401, whose
// WWW-Authenticate names the protected-resource metadata (RFC 9728; else
// its well-known addresses), which names the authorization server, whose
// metadata (RFC 8414) must offer PKCE S256. The client is lc.ClientID or
// registers itself (RFC 7591) as a public client; the person is sent to
// authorize with a PKCE challenge, a random state and the resource
// (RFC 8707); the state and issuer that come back are checked before the
// code is exchanged. Every request goes through lc.Transport, none
// follows a redirect, and every metadata address must be https (or http
// on loopback, which egress allows only when [egress] allow lists it).
func Login(ctx context.Context, lc LoginConfig) (TokenSet, error) {
	if p, err := url.Parse(lc.RedirectURL); err != nil || p.Scheme != "http" || p.Hostname() != "127.0.0.1" || lc.Fetch == nil {
		return TokenSet{}, errors.New("login: want a redirect URL on http://127.0.0.1 and a code fetcher")
	}
	c := oauthClient(lc.Transport)
	// An initialize request without a token: the server answers 401.
	err := post(ctx, c, lc.URL, "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"homard","version":"1"}}}`, nil)
	var st *statusError
	if !errors.As(err, &st) || st.code != http.StatusUnauthorized {
		return TokenSet{}, fmt.Errorf("the server did not ask for a login (401): %v", err)
	}
	challenge := st.challenge

	// The protected resource's metadata: where the challenge says, then
	// at the endpoint's path, then at the root.
	u, _ := url.Parse(lc.URL)
	root := u.Scheme + "://" + u.Host
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	found := false
	for _, at := range [][2]string{{authParam(challenge, "resource_metadata"), lc.URL},
		{root + "/.well-known/oauth-protected-resource" + u.EscapedPath(), lc.URL}, {root + "/.well-known/oauth-protected-resource", root}} {
		if at[0] != "" && metadataURL(at[0]) == nil && getJSON(ctx, c, at[0], &prm) == nil {
			if strings.TrimSuffix(prm.Resource, "/") != strings.TrimSuffix(at[1], "/") {
				return TokenSet{}, fmt.Errorf("the server's metadata names resource %q, not %q", prm.Resource, at[1])
			}
			found = true
			break
		}
	}
	if !found || len(prm.AuthorizationServers) == 0 {
		return TokenSet{}, errors.New("the server names no authorization server (no protected-resource metadata)")
	}

	// The authorization server's metadata (RFC 8414, then OpenID).
	issuer := prm.AuthorizationServers[0]
	if err = metadataURL(issuer); err != nil {
		return TokenSet{}, err
	}
	var as struct {
		Issuer       string   `json:"issuer"`
		Authorize    string   `json:"authorization_endpoint"`
		Token        string   `json:"token_endpoint"`
		Register     string   `json:"registration_endpoint"`
		PKCE         []string `json:"code_challenge_methods_supported"`
		Scopes       []string `json:"scopes_supported"`
		IssParameter bool     `json:"authorization_response_iss_parameter_supported"`
	}
	iu, _ := url.Parse(issuer)
	iroot, ipath := iu.Scheme+"://"+iu.Host, strings.TrimSuffix(iu.EscapedPath(), "/")
	err = errors.New("no metadata")
	for _, at := range []string{iroot + "/.well-known/oauth-authorization-server" + ipath, iroot + "/.well-known/openid-configuration" + ipath, issuer + "/.well-known/openid-configuration"} {
		if err = getJSON(ctx, c, at, &as); err == nil {
			break
		}
	}
	switch {
	case err != nil:
		return TokenSet{}, fmt.Errorf("the authorization server's metadata: %w", err)
	case strings.TrimSuffix(as.Issuer, "/") != strings.TrimSuffix(issuer, "/"):
		return TokenSet{}, fmt.Errorf("the authorization server's metadata names issuer %q, not %q", as.Issuer, issuer)
	case !slices.Contains(as.PKCE, "S256"):
		return TokenSet{}, errors.New("the authorization server does not offer PKCE S256, which the MCP authorization spec requires")
	}
	for _, e := range []string{as.Authorize, as.Token} {
		if err := metadataURL(e); err != nil {
			return TokenSet{}, err
		}
	}

	ts := TokenSet{ClientID: lc.ClientID, TokenURL: as.Token, Resource: lc.URL}
	if ts.ClientID == "" {
		if as.Register == "" || metadataURL(as.Register) != nil {
			return TokenSet{}, errors.New("the authorization server offers no dynamic client registration: register homard there and set client_id")
		}
		var reg struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		// A public client (no secret) that may refresh; the redirect URL
		// is homard's own loopback address, with nothing to escape.
		body := `{"redirect_uris":["` + lc.RedirectURL + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"homard"}`
		if err := post(ctx, c, as.Register, "application/json", body, &reg); err != nil || reg.ClientID == "" {
			return TokenSet{}, fmt.Errorf("register homard with the authorization server: %v", err)
		}
		ts.ClientID, ts.ClientSecret = reg.ClientID, reg.ClientSecret
	}

	scopes := lc.Scopes
	if len(scopes) == 0 {
		scopes = strings.Fields(authParam(challenge, "scope"))
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if slices.Contains(as.Scopes, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clip(scopes), "offline_access") // a refresh token, where asked for so
	}
	verifier, state := rand.Text()+rand.Text(), rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := "response_type=code&code_challenge_method=S256&client_id=" + url.QueryEscape(ts.ClientID) + "&redirect_uri=" + url.QueryEscape(lc.RedirectURL) +
		"&state=" + state + "&code_challenge=" + base64.RawURLEncoding.EncodeToString(sum[:]) + "&resource=" + url.QueryEscape(lc.URL)
	if len(scopes) > 0 {
		q += "&scope=" + url.QueryEscape(strings.Join(scopes, " "))
	}
	sep := "?"
	if strings.Contains(as.Authorize, "?") {
		sep = "&"
	}
	code, err := lc.Fetch(ctx, as.Authorize+sep+q)
	switch {
	case err != nil:
		return TokenSet{}, err
	case code.State != state:
		return TokenSet{}, errors.New("the redirect's state is not the one homard sent: a forged or stale login; start again")
	case code.Iss != "" && code.Iss != as.Issuer, code.Iss == "" && as.IssParameter:
		return TokenSet{}, errors.New("the redirect's issuer is not the authorization server homard asked")
	}
	err = ts.grant(ctx, c, "authorization_code&code="+url.QueryEscape(code.Code)+"&redirect_uri="+url.QueryEscape(lc.RedirectURL)+"&code_verifier="+verifier, time.Now())
	return ts, err
}

// grant asks the token endpoint for tokens and keeps them in ts; form is
// the grant type and its parameters, URL-encoded.
func (ts *TokenSet) grant(ctx context.Context, c *http.Client, form string, now time.Time) error {
	form = "grant_type=" + form + "&client_id=" + url.QueryEscape(ts.ClientID) + "&resource=" + url.QueryEscape(ts.Resource)
	if ts.ClientSecret != "" {
		form += "&client_secret=" + url.QueryEscape(ts.ClientSecret) // client_secret_post
	}
	var t struct {
		Access    string `json:"access_token"`
		Refresh   string `json:"refresh_token"`
		ExpiresIn int64  `json:"expires_in"`
	}
	if err := post(ctx, c, ts.TokenURL, "application/x-www-form-urlencoded", form, &t); err != nil {
		return fmt.Errorf("the token endpoint: %w", err)
	}
	if t.Access == "" {
		return errors.New("the token endpoint sent no access token")
	}
	ts.AccessToken, ts.Expiry = t.Access, time.Time{}
	if t.ExpiresIn > 0 {
		ts.Expiry = now.Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	if t.Refresh != "" { // a rotated refresh token replaces the old one
		ts.RefreshToken = t.Refresh
	}
	return nil
}

// authParam is the value of one auth-param of a WWW-Authenticate header
// (name="value" or name=token), "" when absent.
func authParam(h, name string) string {
	for i := 0; ; {
		j := strings.Index(h[i:], name+"=")
		if j < 0 {
			return ""
		}
		i += j
		if i > 0 && h[i-1] != ' ' && h[i-1] != ',' {
			i += len(name)
			continue
		}
		v := h[i+len(name)+1:]
		if rest, ok := strings.CutPrefix(v, `"`); ok {
			v, _, _ = strings.Cut(rest, `"`)
			return v
		}
		v, _, _ = strings.Cut(v, ",")
		return strings.TrimSpace(v)
	}
}

// metadataURL refuses an address from metadata that is neither https nor
// http on loopback (the spec's rule; egress then applies its own).
func metadataURL(s string) error {
	u, err := url.Parse(s)
	if err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost" || u.Hostname() == "::1")) {
		return nil
	}
	return fmt.Errorf("the authorization metadata names %q: want an https address", s)
}

func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	return do(c, req, v)
}

func post(ctx context.Context, c *http.Client, u, contentType, body string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	return do(c, req, v)
}

// do sends req and decodes a 2xx JSON answer (at most 1 MiB) into v; an
// OAuth error answer becomes its error code (RFC 6749 5.2), the remote
// server's words.
func do(c *http.Client, req *http.Request, v any) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		return &statusError{resp.StatusCode, e.Error, strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")}
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}

// statusError is an answer other than 2xx: its status, its OAuth error
// code (RFC 6749 5.2) and its WWW-Authenticate challenge, the remote
// server's words.
type statusError struct {
	code             int
	oauth, challenge string
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d %s", e.code, e.oauth) }

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
// even if the current one has not expired, unless it is no longer
// refused (another request renewed it already).
func (o *oauthTokens) token(ctx context.Context, renew bool, refused string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if renew && o.ts.AccessToken != refused {
		return o.ts.AccessToken, nil
	}
	if !renew && o.ts.AccessToken != "" && (o.ts.Expiry.IsZero() || o.now().Add(refreshMargin).Before(o.ts.Expiry)) {
		return o.ts.AccessToken, nil
	}
	next := o.ts
	err := ErrLoginNeeded
	if next.RefreshToken != "" {
		if err = next.grant(ctx, o.client, "refresh_token&refresh_token="+url.QueryEscape(next.RefreshToken), o.now()); err != nil {
			err = fmt.Errorf("%w (refresh: %v)", ErrLoginNeeded, err)
		}
	}
	if err == nil && o.save != nil {
		err = o.save(next) // the vault: a rotated refresh token must not be lost
	}
	if err != nil {
		return "", fmt.Errorf("mcp server %s: %w: run homard mcp login %s", o.name, err, o.name)
	}
	o.ts = next
	return next.AccessToken, nil
}
