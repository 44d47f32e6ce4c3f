package app

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/mcp/mcptest"
	"github.com/homard/homard/internal/store/storetest"
)

// TestMCPHTTPThroughEgress: a url server is reached through egress. On
// loopback and not in [egress] allow it is refused, with an error saying
// how to allow it, before anything (the token included) is sent; its
// twin, the same server listed in [egress] allow, lists its tools with
// the vault's token, is trusted and its tool runs.
func TestMCPHTTPThroughEgress(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeSpec(t, spec, mcptest.Default())
	fake := mcptest.NewHTTP(spec)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	const token = "mcp-token-0123456789abcdef"

	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Mode: "yolo"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(paths.ConfigFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[[mcp.servers]]\nname = \"web\"\nurl = %q\ntoken_secret = \"webtok\"\n", srv.URL+"/mcp")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.Owner.SecretSet(Secret{Name: "webtok", Hosts: []string{u.Host}, AllowHTTP: true}, []byte(token)); err != nil {
		t.Fatal(err)
	}

	// Not in [egress] allow: refused at Open and by homard mcp test.
	const hint = "[egress] allow"
	if st := mcpStatus(t, r); st.Status != MCPFailed || !strings.Contains(st.Error, hint) {
		t.Errorf("a loopback url server not in egress.allow: status %s, error %q; want failed with %q", st.Status, st.Error, hint)
	}
	if _, err := r.Extensions.InspectMCP(context.Background(), "web"); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("InspectMCP(web) = %v; want a refusal naming %q", err, hint)
	}
	if a := fake.Authorizations(); len(a) != 0 {
		t.Fatalf("the refused server got %d requests; want none", len(a))
	}

	// Listed in [egress] allow: it is reached, with the token.
	r.Close()
	r = reopenWith(t, r, func(cfg string) string {
		i := strings.Index(cfg, "[egress]")
		return cfg[:i] + strings.Replace(cfg[i:], "allow = []", fmt.Sprintf("allow = [%q]", srv.URL), 1)
	})
	rep, err := r.Extensions.InspectMCP(context.Background(), "web")
	if err != nil || rep.Status != MCPNew || len(rep.Tools) == 0 {
		t.Fatalf("InspectMCP(web) with it in egress.allow = %+v, %v; want a new server listing its tools", rep, err)
	}
	auth := fake.Authorizations()
	if len(auth) == 0 {
		t.Fatal("the allowed server got no request")
	}
	for i, a := range auth {
		if a != "Bearer "+token {
			t.Errorf("request %d to the server had Authorization %q; want the vault's token", i, a)
		}
	}
	if err := r.Extensions.TrustMCP(context.Background(), rep); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r = reopenWith(t, r, func(cfg string) string { return cfg })
	out := mcpCall(t, r, "", "mcp__web__echo", `{"text":"hi"}`)
	if out.Decision != arbiter.Ran || out.Result == nil || !strings.Contains(out.Result.Text, "echo: hi") {
		t.Errorf("mcp__web__echo through egress: %s (%s) %+v; want it to run and echo", out.Decision, out.Reason, out.Result)
	}
}
