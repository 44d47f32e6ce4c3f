package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/homard/homard/internal/mcp/mcptest"
)

// TestMCPServerUsesSecretThroughProxy: a stdio MCP server with network =
// [host] and secrets = ["api"] requests http://host/… through homard's
// proxy. The upstream (a TLS server) is reached over TLS with the vault
// secret's header in place of the server's own, while the tool result —
// the response's status, headers and body, all echoing the header — and
// the server's environment never hold the value. The other half: a host
// outside network, although [egress] allows it, is refused by the proxy
// and never reached.
func TestMCPServerUsesSecretThroughProxy(t *testing.T) {
	const value = "sk-mcp-3b9d7e1f5a2c4e60"
	var mu sync.Mutex
	seen := map[string][]string{} // upstream name -> "tls=<bool> auth=<header>" per request
	upstream := func(name string) *httptest.Server {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = append(seen[name], fmt.Sprintf("tls=%v auth=%s", r.TLS != nil, r.Header.Get("Authorization")))
			mu.Unlock()
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
			fmt.Fprintf(w, "%s says hi; you sent %s\n", name, r.Header.Get("Authorization"))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	api, other := upstream("api"), upstream("other")
	host, otherHost := api.Listener.Addr().String(), other.Listener.Addr().String()
	// One client config trusts both test servers' certificate (httptest
	// uses the same one).
	tlsConf := api.Client().Transport.(*http.Transport).TLSClientConfig

	h := newMCPHome(t, "yolo", fmt.Sprintf("network = [%q]\nsecrets = [\"api\"]\nread_only = [\"fetch\", \"env\"]", host))
	cfg, err := os.ReadFile(h.paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(cfg), "[egress]")
	cfg = []byte(string(cfg[:i]) + strings.Replace(string(cfg[i:]), "allow = []", fmt.Sprintf("allow = [%q, %q]", "https://"+host, "https://"+otherHost), 1))
	if err := os.WriteFile(h.paths.ConfigFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	spec := mcptest.Default()
	spec.Tools = append(spec.Tools,
		mcptest.Tool{Name: "fetch", Description: "Fetch a URL.", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
		mcptest.Tool{Name: "env", Description: "Show the environment.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	writeSpec(t, h.spec, spec)
	open := func() *Runtime {
		r, err := Open(context.Background(), h.paths, Options{EgressTLS: tlsConf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	r := open()
	if err := r.Owner.SecretSet(Secret{Name: "api", Hosts: []string{host}}, []byte(value)); err != nil {
		t.Fatal(err)
	}
	h.trust(t, r)
	r = open()

	out := mcpCall(t, r, "", "mcp__fake__fetch", `{"url":"http://`+host+`/x"}`)
	if out.Result == nil || !strings.Contains(out.Result.Text, "api says hi") {
		t.Fatalf("fetch through the proxy = %+v (%v); want the upstream's answer", out, out.Result)
	}
	env := mcpCall(t, r, "", "mcp__fake__env", `{}`)
	for what, o := range map[string]string{"the fetch result": out.Result.Text, "the server's environment": fmt.Sprint(env.Result)} {
		if strings.Contains(o, value) || strings.Contains(o, "sk-mcp") {
			t.Errorf("%s holds the secret's value:\n%s", what, o)
		}
	}
	mu.Lock()
	if got, want := strings.Join(seen["api"], "\n"), "tls=true auth=Bearer "+value; got != want {
		t.Errorf("the upstream saw %q; want one request over TLS with %q", got, want)
	}
	mu.Unlock()

	out = mcpCall(t, r, "", "mcp__fake__fetch", `{"url":"http://`+otherHost+`/x"}`)
	if out.Result == nil || !strings.Contains(out.Result.Text, "403") {
		t.Errorf("fetch of a host outside network = %+v; want the proxy's 403", out)
	}
	mu.Lock()
	if n := len(seen["other"]); n != 0 {
		t.Errorf("the host outside network saw %d requests; want none", n)
	}
	mu.Unlock()
}
