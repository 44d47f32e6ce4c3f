package app

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEveryRouteKeepsToItsOwner sends every route of the gateway
// (internal/channel/web, read from its source so a new route cannot be
// missed) to alice's gateway with bob's token (issue 27 point 2, each API
// path). Bob's homard keeps its store elsewhere — a schema of its own on
// PostgreSQL, a file of its own on SQLite — so his token is unknown there:
// every API route answers 401 and no answer shows alice's session, card
// or plan; her card is still pending after. The twin: the same routes with
// alice's own token are not refused.
func TestEveryRouteKeepsToItsOwner(t *testing.T) {
	_, alice, _, _, card := approvalTurn(t, "alice-errands")
	bob := startGateway(t, newTestRuntime(t, "smart"))

	routes := gatewayRoutes(t)
	if len(routes) < 35 {
		t.Fatalf("found %d routes in internal/channel/web; want the gateway's (35 or more)", len(routes))
	}
	ids := map[string]string{
		"/api/sessions/{id}":  "alice-errands",
		"/api/approvals/{id}": card.ApprovalID,
	}
	path := func(pattern string) string {
		for prefix, id := range ids {
			if strings.HasPrefix(pattern, prefix) {
				pattern = strings.Replace(pattern, "{id}", id, 1)
			}
		}
		return strings.NewReplacer("{id}", "1", "{n}", "1").Replace(pattern)
	}
	// Routes that answer without a login, and what they may say.
	open := map[string]bool{
		"GET /login":   true, // a login link's target: with a wrong token, 401 too (checked below)
		"POST /logout": true, // ends this browser's cookie, whoever asks
		"/":            true, // the page's static files
	}
	for _, rt := range routes {
		method, p, ok := strings.Cut(rt, " ")
		if !ok {
			method, p = "GET", rt
		}
		resp, body := briefly(t, alice.req(method, path(p), "{}", bob.token))
		for _, secret := range []string{"alice-errands", card.ApprovalID, "todo.md"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s %s with bob's token answered %d with alice's %q:\n%s", method, path(p), resp.StatusCode, secret, body)
			}
		}
		if open[rt] || strings.HasPrefix(p, "/callbacks/") {
			continue
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s with bob's token = %d; want 401\n%s", method, path(p), resp.StatusCode, body)
		}
	}
	if resp, _ := alice.do(alice.req("GET", "/login?token="+bob.token, "", "")); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /login with bob's token = %d; want 401", resp.StatusCode)
	}
	var still struct {
		Status string `json:"status"`
	}
	alice.getJSON("/api/approvals/"+card.ApprovalID, &still)
	if still.Status != "pending" {
		t.Errorf("alice's card after bob's requests: %q; want pending", still.Status)
	}

	// The twin: alice's token passes the same routes' login (streams are
	// not read; destructive ones come last, in the source's order).
	for _, rt := range routes {
		method, p, ok := strings.Cut(rt, " ")
		if !ok || open[rt] || strings.HasPrefix(p, "/callbacks/") {
			continue
		}
		resp, err := noRedirect.Do(alice.req(method, path(p), "{}", alice.token))
		if err != nil {
			t.Fatalf("%s %s: %v", method, path(p), err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			t.Errorf("%s %s with alice's own token = 401; want it let in", method, path(p))
		}
	}
}

// briefly sends req and reads at most 64 KiB of the answer for at most
// two seconds: a stream let in by mistake fails the test instead of
// holding it.
func briefly(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
	defer cancel()
	resp, err := noRedirect.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp, string(b)
}

// gatewayRoutes returns the patterns internal/channel/web registers with
// mux.HandleFunc or mux.Handle, as written there ("GET /api/info", "/").
func gatewayRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "channel", "web", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "mux" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				return true // the platforms' callbacks: "POST "+path
			}
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
			return true
		})
	}
	return out
}
