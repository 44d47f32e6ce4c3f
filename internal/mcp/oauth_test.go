package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/mcp/mcptest"
)

// oauthRig is a fake authorization server and a fake MCP server behind
// its tokens, both on loopback.
type oauthRig struct {
	as     *mcptest.AuthServer
	prot   *mcptest.Protected
	mcp    *mcptest.HTTP
	mcpURL string
}

func newOAuthRig(t *testing.T, register bool) *oauthRig {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := mcptest.WriteSpec(spec, mcptest.Default()); err != nil {
		t.Fatal(err)
	}
	rig := mcptest.NewOAuthRig(spec, register)
	t.Cleanup(rig.Close)
	return &oauthRig{as: rig.Auth, prot: rig.Protected, mcp: rig.Server, mcpURL: rig.URL}
}

// browser plays the person's browser (mcptest.Browse).
func browser(t *testing.T, authURL string) {
	t.Helper()
	if err := mcptest.Browse(authURL); err != nil {
		t.Errorf("browser: %v", err)
	}
}

// login runs Login against the rig with the loopback redirect, the
// browser following the redirect, and tamper changing what came back.
func (r *oauthRig) login(t *testing.T, clientID string, tamper func(*AuthCode)) (TokenSet, error) {
	t.Helper()
	red, err := ListenRedirect()
	if err != nil {
		t.Fatal(err)
	}
	defer red.Close()
	return Login(context.Background(), LoginConfig{URL: r.mcpURL, ClientID: clientID, RedirectURL: red.URL,
		Fetch: func(ctx context.Context, authURL string) (AuthCode, error) {
			browser(t, authURL)
			c, err := red.Wait(ctx, nil, authURL)
			if tamper != nil {
				tamper(&c)
			}
			return c, err
		}})
}

// TestOAuthLoginThenConnect: login discovers the authorization server
// from the server's 401, registers homard (DCR), sends the person to
// authorize with PKCE S256, checks the state and exchanges the code (the
// server refusing nothing: the verifier was the right one); the server
// then lists its tools to that token, sent as a bearer.
func TestOAuthLoginThenConnect(t *testing.T) {
	r := newOAuthRig(t, true)
	ts, err := r.login(t, "", nil)
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if !r.as.Valid(ts.AccessToken) || ts.RefreshToken == "" || !strings.HasPrefix(ts.ClientID, "client-") ||
		ts.TokenURL != r.as.URL+"/token" || ts.Expiry.IsZero() {
		t.Fatalf("Login = %+v; want a valid access token, a refresh token, the registered client and the token URL", ts)
	}
	if got := r.as.Refused(); len(got) != 0 {
		t.Errorf("the authorization server refused %v; want nothing refused", got)
	}
	srv, err := Connect(context.Background(), ServerConfig{Name: "web", URL: r.mcpURL, OAuth: &OAuth{Tokens: ts}}, nil)
	if err != nil {
		t.Fatalf("Connect with the login: %v", err)
	}
	defer srv.Close()
	l, err := srv.Tools(context.Background())
	if err != nil || len(l.Tools) == 0 {
		t.Fatalf("Tools = %+v, %v; want the server's tools", l, err)
	}
	if a := r.mcp.Authorizations(); len(a) == 0 || a[0] != "Bearer "+ts.AccessToken {
		t.Errorf("the server got Authorization %q; want the login's access token", a)
	}
}

// TestOAuthLoginPreregistered: without dynamic registration on offer a
// configured client_id logs in; without one the login says so.
func TestOAuthLoginPreregistered(t *testing.T) {
	r := newOAuthRig(t, false)
	if _, err := r.login(t, "", func(*AuthCode) { t.Error("the browser was sent with no client registered") }); err == nil {
		t.Error("Login without DCR and without a client_id succeeded; want it refused")
	}
	ts, err := r.login(t, "pre", nil)
	if err != nil || ts.ClientID != "pre" || !r.as.Valid(ts.AccessToken) {
		t.Fatalf("Login with client_id pre = %+v, %v; want a valid token for client pre", ts, err)
	}
}

// TestOAuthLoginRefusesAForgedRedirect: a redirect whose state is not
// the one homard sent (a forged or replayed login) is refused and no
// token is asked for; the login of TestOAuthLoginThenConnect is its twin.
func TestOAuthLoginRefusesAForgedRedirect(t *testing.T) {
	r := newOAuthRig(t, true)
	_, err := r.login(t, "", func(c *AuthCode) { c.State = "forged" })
	if err == nil || !strings.Contains(err.Error(), "state") {
		t.Fatalf("Login with a forged state = %v; want a state mismatch", err)
	}
	if got := r.as.Tokens(); len(got) != 0 {
		t.Errorf("tokens were issued after a forged redirect: %d", len(got))
	}
}

// TestOAuthStolenCodeIsUseless: a code intercepted on its way to the
// redirect is worth nothing without homard's PKCE verifier: redeemed
// with another verifier it is refused (and burnt), so homard's own
// exchange fails too rather than a token going to the thief.
func TestOAuthStolenCodeIsUseless(t *testing.T) {
	r := newOAuthRig(t, true)
	_, err := r.login(t, "", func(c *AuthCode) {
		v := url.Values{"grant_type": {"authorization_code"}, "code": {c.Code}, "code_verifier": {"stolen-without-the-verifier-0123456789abcdef"}}
		resp, err := http.PostForm(r.as.URL+"/token", v)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the stolen code was exchanged with a wrong verifier")
		}
	})
	if err == nil {
		t.Fatal("Login after its code was stolen succeeded; want the burnt code refused")
	}
	if got := r.as.Tokens(); len(got) != 0 {
		t.Errorf("%d tokens issued for a stolen code; want none", len(got))
	}
	if got := r.as.Refused(); len(got) == 0 {
		t.Error("the authorization server refused nothing; want the thief's verifier refused")
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestOAuthRefreshBeforeExpiry: a token far from expiry is sent as it is;
// within a minute of its expiry it is refreshed before the request, the
// refreshed login is saved, and the server gets the new token. When the
// server refuses a token it is refreshed once and the request retried.
func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	r := newOAuthRig(t, true)
	ts, err := r.login(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var saved []TokenSet
	srv, err := Connect(context.Background(), ServerConfig{Name: "web", URL: r.mcpURL,
		OAuth: &OAuth{Tokens: ts, Save: func(n TokenSet) error { saved = append(saved, n); return nil }}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if n := r.as.Refreshes(); n != 0 || len(saved) != 0 {
		t.Fatalf("%d refreshes with a fresh token; want none", n)
	}
	clock := &fakeClock{t: time.Now()}
	srv.login.now = clock.now
	clock.add(time.Until(ts.Expiry) - 30*time.Second) // half a minute before expiry
	if _, err := srv.Tools(context.Background()); err != nil {
		t.Fatalf("Tools near expiry: %v", err)
	}
	if n := r.as.Refreshes(); n != 1 || len(saved) != 1 || saved[0].AccessToken == ts.AccessToken || saved[0].RefreshToken == ts.RefreshToken {
		t.Fatalf("near expiry: %d refreshes, saved %d; want one refresh, saved with a new access and refresh token", n, len(saved))
	}
	auths := r.mcp.Authorizations()
	if last := auths[len(auths)-1]; last != "Bearer "+saved[0].AccessToken {
		t.Errorf("after the refresh the server got %q; want the new token", last)
	}

	r.as.Revoke() // the server now refuses the token before its expiry
	if _, err := srv.Tools(context.Background()); err != nil {
		t.Fatalf("Tools after the token was revoked: %v", err)
	}
	if n := r.as.Refreshes(); n != 2 || len(saved) != 2 {
		t.Errorf("after a 401: %d refreshes; want exactly one more", n)
	}
}

// TestOAuthLoginNeeded: a login that expired with no refresh token, or
// whose refresh is refused, fails the start with an error naming
// `homard mcp login`; the token goes to no request.
func TestOAuthLoginNeeded(t *testing.T) {
	r := newOAuthRig(t, true)
	ts, err := r.login(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]TokenSet{
		"expired, no refresh token": {AccessToken: ts.AccessToken, Expiry: time.Now().Add(-time.Hour)},
		"refresh refused":           {AccessToken: "gone", RefreshToken: "unknown-refresh-0123456789", Expiry: time.Now().Add(-time.Hour), ClientID: ts.ClientID, TokenURL: ts.TokenURL},
	} {
		_, err := Connect(context.Background(), ServerConfig{Name: "web", URL: r.mcpURL, OAuth: &OAuth{Tokens: bad}}, nil)
		if err == nil || !errors.Is(err, ErrLoginNeeded) || !strings.Contains(err.Error(), "homard mcp login web") {
			t.Errorf("%s: Connect = %v; want ErrLoginNeeded naming homard mcp login web", name, err)
		}
	}
	if a := r.mcp.Authorizations(); slices.Contains(a, "Bearer "+ts.AccessToken) {
		t.Errorf("the expired token was sent: %q", a)
	}
}

// TestOAuthTokenOnlyToTheServerHost: the login's token goes to the
// endpoint's host and never to another (nor the static token's rules
// loosened).
func TestOAuthTokenOnlyToTheServerHost(t *testing.T) {
	login := &oauthTokens{name: "web", now: time.Now, ts: TokenSet{AccessToken: "oauth-access-0123456789", Expiry: time.Now().Add(time.Hour)}}
	for _, c := range []struct{ url, want string }{
		{"https://mcp.example.com:8443/mcp", "Bearer oauth-access-0123456789"},
		{"https://evil.example/mcp", ""},
		{"https://mcp.example.com/mcp", ""},
		{"http://mcp.example.com:8443/mcp", ""},
	} {
		base := &recordAuth{}
		resp, err := httpClient(base, "https://mcp.example.com:8443/mcp", "", login).Get(c.url)
		if err != nil {
			t.Fatalf("GET %s: %v", c.url, err)
		}
		resp.Body.Close()
		if base.got != c.want {
			t.Errorf("GET %s sent Authorization %q; want %q", c.url, base.got, c.want)
		}
	}
}

// TestParsePasted: over SSH the person pastes the address the browser
// ended on, or only the code (which takes homard's own state).
func TestParsePasted(t *testing.T) {
	const authURL = "https://as.example/authorize?client_id=c&state=S123"
	for _, c := range []struct {
		in      string
		want    AuthCode
		wantErr bool
	}{
		{"http://127.0.0.1:4321/callback?code=abc&state=S123", AuthCode{Code: "abc", State: "S123"}, false},
		{"  http://127.0.0.1:4321/callback?code=abc&state=other\n", AuthCode{Code: "abc", State: "other"}, false},
		{"abc-DEF_123", AuthCode{Code: "abc-DEF_123", State: "S123"}, false},
		{"http://127.0.0.1:4321/callback?error=access_denied", AuthCode{}, true},
		{"http://127.0.0.1:4321/callback?x=1", AuthCode{}, true},
		{"", AuthCode{}, true},
		{"code with spaces", AuthCode{}, true},
	} {
		got, err := ParsePasted(c.in, authURL)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParsePasted(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.wantErr)
		}
	}
}

// TestOAuthDiscoveryRefusals: metadata a hostile or broken server sends
// is refused before the person is sent anywhere: a protected resource
// that names another resource, an authorization server on plain http off
// loopback, an issuer other than the one named, no PKCE S256. The login
// of TestOAuthLoginThenConnect is their twin.
func TestOAuthDiscoveryRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		prm, as func(map[string]any)
		want    string
	}{
		"another resource":       {prm: func(m map[string]any) { m["resource"] = "https://other.example/mcp" }, want: "names resource"},
		"plain http auth server": {prm: func(m map[string]any) { m["authorization_servers"] = []string{"http://as.example"} }, want: "want an https address"},
		"another issuer":         {as: func(m map[string]any) { m["issuer"] = "https://evil.example" }, want: "names issuer"},
		"no PKCE":                {as: func(m map[string]any) { delete(m, "code_challenge_methods_supported") }, want: "PKCE S256"},
		"http token endpoint":    {as: func(m map[string]any) { m["token_endpoint"] = "http://as.example/token" }, want: "want an https address"},
	} {
		r := newOAuthRig(t, true)
		r.prot.Meta, r.as.Meta = c.prm, c.as
		_, err := r.login(t, "", func(*AuthCode) { t.Errorf("%s: the person was sent to authorize", name) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Login = %v; want a refusal containing %q", name, err, c.want)
		}
	}
}

// TestAuthParam reads WWW-Authenticate parameters, quoted or not, and
// only whole parameter names.
func TestAuthParam(t *testing.T) {
	const h = `Bearer error="invalid_token", xresource_metadata="https://evil.example/x", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope=tools`
	for name, want := range map[string]string{
		"resource_metadata": "https://mcp.example/.well-known/oauth-protected-resource/mcp",
		"scope":             "tools",
		"error":             "invalid_token",
		"realm":             "",
	} {
		if got := authParam(h, name); got != want {
			t.Errorf("authParam(%s) = %q; want %q", name, got, want)
		}
	}
}

// TestOAuthLoginNotAsked: a server that answers without a 401 asked for
// no login, and homard sends the person nowhere.
func TestOAuthLoginNotAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer srv.Close()
	_, err := Login(context.Background(), LoginConfig{URL: srv.URL + "/mcp", RedirectURL: "http://127.0.0.1:1/callback",
		Fetch: func(context.Context, string) (AuthCode, error) {
			t.Error("the person was sent to authorize")
			return AuthCode{}, nil
		}})
	if err == nil || !strings.Contains(err.Error(), "did not ask for a login") {
		t.Errorf("Login against a server without a login = %v; want it to say so", err)
	}
}
