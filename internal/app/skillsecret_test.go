package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store/storetest"
)

// lockedBuffer is a bytes.Buffer safe for the proxy's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSkillUsesSecretThroughProxy: a skill declaring a vault secret bound
// to its host runs curl on a plain http:// URL in the service sandbox; the
// upstream (a TLS server) is reached over TLS with the secret's header in
// place of the skill's own, while the skill's output (the response with
// its headers, its whole environment, every file in its home and /tmp)
// never holds the value, and homard's log has one line for the request,
// with the host and credential=true but not the value. The twin: the same
// skill asking for https:// (CONNECT) is refused with 403, and the
// upstream sees no request from it.
func TestSkillUsesSecretThroughProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("curl is needed for this test: %v", err)
		}
		t.Skip("curl not installed")
	}
	const value = "sk-proxy-7f3e9a1c5b2d4e6f"
	var mu sync.Mutex
	var seen []string // "tls=<bool> auth=<header>" of each upstream request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("tls=%v auth=%s", r.TLS != nil, r.Header.Get("Authorization")))
		mu.Unlock()
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		fmt.Fprintf(w, "upstream says hi; you sent %s\n", r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	host := srv.Listener.Addr().String() // 127.0.0.1:PORT
	tlsConf := srv.Client().Transport.(*http.Transport).TLSClientConfig

	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Mode: "yolo"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(cfg), "[egress]")
	cfg = []byte(string(cfg[:i]) + strings.Replace(string(cfg[i:]), "allow = []", fmt.Sprintf("allow = [%q]", "https://"+host), 1))
	if err := os.WriteFile(paths.ConfigFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), paths, Options{EgressTLS: tlsConf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.Owner.SecretSet(Secret{Name: "api", Hosts: []string{host}}, []byte(value)); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "fetch")
	files := map[string]string{
		"SKILL.md":   "---\nname: fetch\ndescription: Fetches from the API\n---\nCall it with scheme http.\n",
		"skill.json": `{"entrypoint":["./run.sh"],"parameters":{"type":"object","properties":{"scheme":{"type":"string"}},"required":["scheme"],"additionalProperties":false},"permissions":{"hosts":["` + host + `"],"secrets":["api"]}}`,
		"run.sh": "#!/bin/sh\nscheme=${1#--scheme=}\n" +
			"echo ---response\ncurl -sS -i -H 'Authorization: Bearer skill-own' \"$scheme://" + host + "/x\" 2>&1\n" +
			"echo ---env\nenv\necho ---files\nfind \"$HOME\" /tmp -type f -exec cat {} + 2>/dev/null\necho ---done\n",
	}
	installSkill(t, r, src, files)
	ctx := context.Background()
	r.Close()
	r2, err := Open(ctx, paths, Options{EgressTLS: tlsConf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r2.Close() })
	useBackend(t, r2, "bwrap")
	var logs lockedBuffer
	r2.log.Store(slog.New(slog.NewTextHandler(&logs, nil)))

	out := call(t, r2, CallRequest{Tool: "run_skill", Args: `{"name":"fetch","args":{"scheme":"http"}}`})
	wantDecision(t, out, "ran", "mode.yolo")
	text := out.Result.Text
	if !strings.Contains(text, "upstream says hi") || !strings.Contains(text, "---done") {
		t.Fatalf("skill output = %q; want the upstream's answer and the end of the script", text)
	}
	if strings.Contains(text, value) || strings.Contains(text, "sk-proxy") {
		t.Errorf("skill output holds the secret's value (response, environment or files):\n%s", text)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	if want := "tls=true auth=Bearer " + value; got != want {
		t.Errorf("the upstream saw %q; want one request over TLS with %q", got, want)
	}
	line := logs.String()
	if !strings.Contains(line, "egress proxy") || !strings.Contains(line, "host="+host) || !strings.Contains(line, "credential=true") || strings.Contains(line, value) {
		t.Errorf("homard's log = %q; want one line naming host %s with credential=true and never the value", line, host)
	}

	// The twin: https:// goes through CONNECT, which cannot carry the
	// credential: refused, saying what to do, and nothing reaches upstream.
	out = call(t, r2, CallRequest{Tool: "run_skill", Args: `{"name":"fetch","args":{"scheme":"https"}}`})
	// curl shows the status, not the body (TestProxyRefusesConnectWithCredential
	// reads the body's advice).
	if !strings.Contains(out.Result.Text, "response 403") {
		t.Errorf("skill output for https = %q; want curl's report of the proxy's 403", out.Result.Text)
	}
	mu.Lock()
	if len(seen) != 1 {
		t.Errorf("the upstream saw %d requests; want only the http:// one", len(seen))
	}
	mu.Unlock()
}

// TestMCPServerSecretMustBeBound: an MCP server naming a secret that is
// not in the vault, or is bound to none of its network hosts, is not
// started, and the error says how to fix it; the twin: once the secret is
// bound to its host, the same server starts and lists its tools.
func TestMCPServerSecretMustBeBound(t *testing.T) {
	h := newMCPHome(t, "smart", `network = ["api.example.com"]`+"\n"+`secrets = ["apikey"]`)
	r := h.open(t)
	if _, err := r.Extensions.InspectMCP(context.Background(), "fake"); err == nil || !strings.Contains(err.Error(), "not in the vault") {
		t.Errorf("InspectMCP with the secret missing = %v; want it refused, saying the secret is not in the vault", err)
	}
	if err := r.Owner.SecretSet(Secret{Name: "apikey", Hosts: []string{"other.example.com"}}, []byte("v-0123456789")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Extensions.InspectMCP(context.Background(), "fake"); err == nil || !strings.Contains(err.Error(), "bound to none of its network hosts") {
		t.Errorf("InspectMCP with the secret bound elsewhere = %v; want it refused, saying so", err)
	}
	if err := r.Owner.SecretSet(Secret{Name: "apikey", Hosts: []string{"api.example.com"}}, []byte("v-0123456789")); err != nil {
		t.Fatal(err)
	}
	if rep, err := r.Extensions.InspectMCP(context.Background(), "fake"); err != nil || len(rep.Tools) == 0 {
		t.Errorf("InspectMCP with the secret bound to its host = %+v, %v; want it started, listing its tools", rep, err)
	}
}
