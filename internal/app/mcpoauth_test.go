package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/mcp/mcptest"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

// TestMCPOAuthTurn: a hosted server with auth = "oauth" fails to start
// until logged in, naming `homard mcp login`. Once logged in and trusted,
// a turn calls its tool: the access token (30 s long, so always within
// the refresh margin) is refreshed before it is sent, the refreshed login
// is written back to the vault, and no token, access or refresh, appears
// in any request to the model, in the audit log or in the tool result;
// nor in the environment of a stdio server configured beside it (its env
// tool shows it, with its own variable as the twin).
func TestMCPOAuthTurn(t *testing.T) {
	sandboxOK(t) // the stdio server runs in the service sandbox
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	local := mcptest.Default()
	local.Tools = append(local.Tools, mcptest.Tool{Name: "env", Description: "Show the environment.", InputSchema: json.RawMessage(`{"type":"object"}`)})
	localSpec := filepath.Join(t.TempDir(), "local.json")
	writeSpec(t, localSpec, local)
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeSpec(t, spec, mcptest.Default())
	rig := mcptest.NewOAuthRig(spec, true)
	t.Cleanup(rig.Close)
	rig.Auth.ExpiresIn = 30 * time.Second

	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
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
	cfg := string(b)
	i := strings.Index(cfg, "[egress]")
	cfg = cfg[:i] + strings.Replace(cfg[i:], "allow = []", fmt.Sprintf("allow = [%q, %q]", rig.Origin, rig.Auth.URL), 1)
	cfg += fmt.Sprintf("\n[[mcp.servers]]\nname = \"web\"\nurl = %q\nauth = \"oauth\"\n", rig.URL)
	cfg += fmt.Sprintf("\n[[mcp.servers]]\nname = \"local\"\ncommand = [%q]\nenv = { %s = %q }\nmounts = [%q, %q]\n",
		exe, mcptest.SpecEnv, localSpec, filepath.Dir(exe), filepath.Dir(localSpec))
	if err := os.WriteFile(paths.ConfigFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := Open(ctx, paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if st := r.Extensions.MCPServers()[0]; st.Status != MCPFailed || !strings.Contains(st.Error, "homard mcp login web") {
		t.Fatalf("before a login: status %s, error %q; want failed, naming homard mcp login web", st.Status, st.Error)
	}
	browse := func(authURL string) {
		if err := mcptest.Browse(authURL); err != nil {
			t.Errorf("browser: %v", err)
		}
	}
	if _, err := r.Extensions.LoginMCP(ctx, "web", browse, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web", "local"} {
		rep, err := r.Extensions.InspectMCP(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Extensions.TrustMCP(ctx, rep); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	before := rig.Auth.Refreshes()

	r = reopenWith(t, r, func(cfg string) string { return cfg })
	srv := runServer(t, r, openAI(toolCall("call_1", "mcp__web__echo", `{"text":"hi"}`)), openAI(llmtest.Turn{Text: []string{"It said hi."}}))
	res, err := r.Run(ctx, channel.TurnRequest{Text: "echo hi"})
	if err != nil || res.Text != "It said hi." {
		t.Fatalf("Run = %+v, %v; want the final answer", res, err)
	}
	recs := auditSince(t, r, 0)
	if len(recs) != 1 || recs[0].Tool != "mcp__web__echo" || recs[0].Decision != "ran" {
		t.Fatalf("audit = %+v; want the one echo call, ran", recs)
	}
	if rig.Auth.Refreshes() <= before {
		t.Errorf("refreshes %d → %d; want the token refreshed before it was sent", before, rig.Auth.Refreshes())
	}
	auths := rig.Server.Authorizations()
	sent, _ := strings.CutPrefix(auths[len(auths)-1], "Bearer ")
	u, _ := url.Parse(rig.Origin)
	kept, err := r.Vault.ReleaseValue("mcp-login-web", "http", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	var ts struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(kept), &ts); err != nil || ts.AccessToken != sent || !rig.Auth.Valid(sent) {
		t.Errorf("the vault keeps access token %q, the server got %q; want the refreshed one, kept and sent", ts.AccessToken, sent)
	}

	tokens := rig.Auth.Tokens()
	if len(tokens) < 4 {
		t.Fatalf("the authorization server issued %d tokens; want a login and its refreshes", len(tokens))
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "echo: hi") {
		t.Fatalf("the model got %d requests; want 2, the second with the tool's result", len(reqs))
	}
	var seen []string
	for _, req := range reqs {
		seen = append(seen, string(req.Body), fmt.Sprint(req.Header))
	}
	if err := r.Store.AuditFrom(ctx, 0, func(a store.AuditRow) error {
		seen = append(seen, a.Args, a.Reason)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	env := mcpCall(t, r, "", "mcp__local__env", `{}`)
	if env.Result == nil || !strings.Contains(env.Result.Text, mcptest.SpecEnv+"=") {
		t.Fatalf("the stdio server's env tool: %s (%s) %+v; want its environment", env.Decision, env.Reason, env.Result)
	}
	seen = append(seen, env.Result.Text)
	for _, s := range seen {
		for _, tok := range tokens {
			if strings.Contains(s, tok) {
				t.Errorf("token %s appears in what the model, the audit log or the stdio server got", tok)
			}
		}
	}
}
