package app

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

type sessionRow struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Turns int    `json:"turns"`
}

// TestGatewaySessionTitleAndDelete: a session is titled with the first
// words of the owner's first message; DELETE removes it and its history
// (the audit stays); a session whose card waits is refused with a message
// that says what to do, and deleted once the card is answered; an
// unknown session is 404.
func TestGatewaySessionTitleAndDelete(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r, openAI(llmtest.Turn{Text: []string{"Done."}}))
	g := startGateway(t, r)
	s := g.stream(g.req("POST", "/api/chat", `{"session":"kitchen","message":"What colour is the kettle in the kitchen, and why is it so loud?"}`, g.token))
	s.until("done")
	ctx := context.Background()
	out, err := r.Call(ctx, CallRequest{Tool: "write_file", Args: `{"path":"a.txt","content":"x"}`, Session: "asks"})
	if err != nil || out.Decision != "pending" {
		t.Fatalf("write_file in smart mode = %+v, %v; want pending", out, err)
	}

	var list []sessionRow
	g.getJSON("/api/sessions", &list)
	titles := map[string]string{}
	for _, x := range list {
		titles[x.ID] = x.Title
	}
	if want := "What colour is the kettle in the kitchen,…"; titles["kitchen"] != want || titles["asks"] != "" {
		t.Fatalf("titles = %q; want kitchen %q and asks empty (no stored turn)", titles, want)
	}
	auditBefore, err := r.Owner.AuditVerify(ctx)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, id string
		status   int
		body     string
	}{
		{"unknown session", "nope", http.StatusNotFound, "not found"},
		{"a card waits", "asks", http.StatusConflict, "approve or deny them first"},
		{"delete", "kitchen", http.StatusOK, `"session":"kitchen"`},
		{"deleted twice", "kitchen", http.StatusNotFound, "not found"},
	}
	for _, c := range cases {
		resp, body := g.do(g.req("DELETE", "/api/sessions/"+url.PathEscape(c.id), "{}", g.token))
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s: DELETE /api/sessions/%s = %d %s; want %d with %q", c.name, c.id, resp.StatusCode, body, c.status, c.body)
		}
	}
	g.getJSON("/api/sessions", &list)
	if len(list) != 1 || list[0].ID != "asks" {
		t.Errorf("sessions after delete = %+v; want only asks", list)
	}
	var msgs []map[string]string
	g.getJSON("/api/sessions/kitchen/messages", &msgs)
	if len(msgs) != 0 {
		t.Errorf("history of the deleted session = %v; want none", msgs)
	}
	if n, err := r.Owner.AuditVerify(ctx); err != nil || n != auditBefore {
		t.Errorf("audit after delete: %d records, %v; want the same %d, intact", n, err, auditBefore)
	}

	// The twin: once its card is denied, the session can go.
	if err := r.Owner.Deny(ctx, out.ApprovalID); err != nil {
		t.Fatal(err)
	}
	if resp, body := g.do(g.req("DELETE", "/api/sessions/asks", "{}", g.token)); resp.StatusCode != http.StatusOK {
		t.Errorf("DELETE a session whose card was denied = %d %s; want 200", resp.StatusCode, body)
	}
}

// TestGatewayDeleteRunningSession: a session whose turn runs (here,
// waiting on its card) is not deleted; its twin, another session, is.
func TestGatewayDeleteRunningSession(t *testing.T) {
	r, g, _, s, _ := approvalTurn(t, "work")
	defer s.close()
	if _, err := r.Call(context.Background(), CallRequest{Tool: "current_time", Args: `{}`, Session: "idle"}); err != nil {
		t.Fatal(err)
	}
	resp, body := g.do(g.req("DELETE", "/api/sessions/work", "{}", g.token))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "running a turn") {
		t.Errorf("DELETE a session running a turn = %d %s; want 409 saying it runs a turn", resp.StatusCode, body)
	}
	if resp, body := g.do(g.req("DELETE", "/api/sessions/idle", "{}", g.token)); resp.StatusCode != http.StatusOK {
		t.Errorf("DELETE an idle session beside it = %d %s; want 200", resp.StatusCode, body)
	}
}

// TestGatewayApprovalListErrors: an unknown status is the caller's
// mistake (400); a failing database is homard's (500), not "invalid
// choice".
func TestGatewayApprovalListErrors(t *testing.T) {
	r := newTestRuntime(t, "smart")
	g := startGateway(t, r)
	cases := []struct {
		name, query string
		status      int
		body        string
	}{
		{"pending", "?status=pending", http.StatusOK, "[]"},
		{"all", "", http.StatusOK, "[]"},
		{"unknown status", "?status=maybe", http.StatusBadRequest, `status \"maybe\"`},
	}
	for _, c := range cases {
		resp, body := g.do(g.req("GET", "/api/approvals"+c.query, "", g.token))
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s: GET /api/approvals%s = %d %s; want %d with %q", c.name, c.query, resp.StatusCode, body, c.status, c.body)
		}
	}
	// The bearer token is checked before the list: use the local key,
	// which needs no database, then close the database under the server.
	si, ok := r.RunningServe()
	if !ok {
		t.Fatal("serve.json not written")
	}
	r.Store.Close()
	resp, body := g.do(g.req("GET", "/api/approvals?status=pending", "", si.Key))
	if resp.StatusCode != http.StatusInternalServerError || strings.Contains(body, "invalid choice") {
		t.Errorf("GET /api/approvals with the database closed = %d %s; want 500, not invalid choice", resp.StatusCode, body)
	}
}

// TestGatewayAuditNewestFirst: order=newest pages backwards with before.
func TestGatewayAuditNewestFirst(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	for range 5 {
		if _, err := r.Call(ctx, CallRequest{Tool: "current_time", Args: `{}`, Session: "clock"}); err != nil {
			t.Fatal(err)
		}
	}
	g := startGateway(t, r)
	type page struct {
		Records []struct {
			Seq int64 `json:"seq"`
		} `json:"records"`
		Next int64 `json:"next"`
	}
	seqs := func(p page) []int64 {
		var out []int64
		for _, x := range p.Records {
			out = append(out, x.Seq)
		}
		return out
	}
	cases := []struct {
		query    string
		want     []int64
		wantNext int64
	}{
		{"?order=newest&limit=2", []int64{5, 4}, 4},
		{"?order=newest&limit=2&before=4", []int64{3, 2}, 2},
		{"?order=newest&limit=2&before=2", []int64{1}, 0},
		{"?order=newest&limit=10&before=1", nil, 0},
		{"?limit=2", []int64{1, 2}, 2}, // the twin: oldest first stays the default
	}
	for _, c := range cases {
		var p page
		g.getJSON("/api/audit"+c.query, &p)
		if got := seqs(p); !equalSeqs(got, c.want) || p.Next != c.wantNext {
			t.Errorf("GET /api/audit%s = %v next %d; want %v next %d", c.query, got, p.Next, c.want, c.wantNext)
		}
	}
	for _, q := range []string{"?order=sideways", "?before=3"} {
		if resp, body := g.do(g.req("GET", "/api/audit"+q, "", g.token)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /api/audit%s = %d %s; want 400", q, resp.StatusCode, body)
		}
	}
}

func equalSeqs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLoginLink: `homard login` (LoginLink) gets a fresh one-time URL
// from the running serve; it logs a browser in once. Only the local key
// may ask: an API token or a browser session gets 403.
func TestLoginLink(t *testing.T) {
	r := newTestRuntime(t, "smart")
	if _, _, err := r.LoginLink(context.Background()); err != ErrNoServe {
		t.Errorf("LoginLink without a serve = %v; want ErrNoServe", err)
	}
	g := startGateway(t, r)
	link, exp, err := r.LoginLink(context.Background())
	if err != nil || !strings.HasPrefix(link, g.base+"/login?t=") || exp.IsZero() {
		t.Fatalf("LoginLink = %q, %v, %v; want a login URL under %s", link, exp, err, g.base)
	}
	if link == g.login {
		t.Error("LoginLink returned the URL serve printed; want a new one")
	}
	get := func(u string) *http.Response {
		req, _ := http.NewRequest("GET", u, nil)
		resp, _ := g.do(req)
		return resp
	}
	first := get(link)
	if first.StatusCode != http.StatusSeeOther || len(first.Cookies()) == 0 {
		t.Fatalf("GET the new link = %d; want 303 with a session cookie", first.StatusCode)
	}
	if again := get(link); again.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET the link again = %d; want 401 (single use)", again.StatusCode)
	}
	// The link serve printed at start still works: asking for a new one
	// revokes nothing.
	if printed := get(g.login); printed.StatusCode != http.StatusSeeOther {
		t.Errorf("GET the printed link after login = %d; want 303", printed.StatusCode)
	}
	cookieReq := g.req("POST", "/api/login", "{}", "")
	cookieReq.AddCookie(first.Cookies()[0])
	for name, req := range map[string]*http.Request{
		"api token":       g.req("POST", "/api/login", "{}", g.token),
		"browser session": cookieReq,
	} {
		if resp, body := g.do(req); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "homard login") {
			t.Errorf("POST /api/login with a %s = %d %s; want 403 naming homard login", name, resp.StatusCode, body)
		}
	}
	if resp, _ := g.do(g.req("POST", "/api/login", "{}", "")); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /api/login without credentials = %d; want 401", resp.StatusCode)
	}
}
