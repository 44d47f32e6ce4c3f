package app

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
)

// TestGatewayCardShowsThePreview: the approval event and the approval list
// carry the write's diff (cut to a card, with its kind); GET
// /api/approvals/{id} adds the whole preview.
func TestGatewayCardShowsThePreview(t *testing.T) {
	_, g, _, _, card := approvalTurn(t, "preview")
	if card.Preview != "--- /dev/null\n+++ todo.md\n@@ -0,0 +1 @@\n+- tea" || card.PreviewKind != "diff" {
		t.Errorf("approval event preview %q kind %q; want the new file's diff", card.Preview, card.PreviewKind)
	}
	var full struct {
		Preview     string  `json:"preview"`
		PreviewKind string  `json:"preview_kind"`
		Omitted     int     `json:"preview_omitted_lines"`
		PreviewFull *string `json:"preview_full"`
		PlanHash    string  `json:"plan_hash"`
	}
	g.getJSON("/api/approvals/"+card.ApprovalID, &full)
	const diff = "--- /dev/null\n+++ todo.md\n@@ -0,0 +1 @@\n+- tea\n"
	if full.Preview != strings.TrimSuffix(diff, "\n") || full.PreviewKind != "diff" || full.Omitted != 0 ||
		full.PreviewFull == nil || *full.PreviewFull != diff || full.PlanHash != card.PlanHash {
		t.Errorf("GET approval = %+v (full %v); want the diff, kind diff, the whole preview and the card's hash", full, full.PreviewFull)
	}
	var list []map[string]any
	g.getJSON("/api/approvals?status=pending", &list)
	if len(list) != 1 || list[0]["preview"] != full.Preview || list[0]["preview_kind"] != "diff" {
		t.Errorf("approval list %v; want the card with its preview", list)
	}
	if v, ok := list[0]["preview_full"]; !ok || v != nil {
		t.Errorf("the list's preview_full = %v (present %v); want null: only GET /api/approvals/{id} fills it", v, ok)
	}
}

// TestApprovalOneShape: GET /api/approvals/{id} and `homard approval show
// --json` (NewApprovalJSON) are one shape with the same values: the
// gateway's body decodes strictly into ApprovalJSON and equals what the
// CLI prints for the same approval; so do the list and the audit page.
func TestApprovalOneShape(t *testing.T) {
	r, g, _, _, card := approvalTurn(t, "shape")
	strict := func(path string, v any) {
		t.Helper()
		resp, body := g.do(g.req("GET", path, "", g.token))
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("GET %s does not decode into the CLI's shape: %v\n%s", path, err, body)
		}
	}
	a, err := r.Owner.Approval(t.Context(), card.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	var one ApprovalJSON
	strict("/api/approvals/"+card.ApprovalID, &one)
	if want := NewApprovalJSON(a, true); !reflect.DeepEqual(one, want) {
		t.Errorf("GET /api/approvals/{id} = %+v\nthe CLI prints %+v", one, want)
	}
	var list []ApprovalJSON
	strict("/api/approvals?status=pending", &list)
	if want := NewApprovalJSON(a, false); len(list) != 1 || !reflect.DeepEqual(list[0], want) {
		t.Errorf("GET /api/approvals = %+v\nthe CLI lists %+v", list, want)
	}
	var page struct {
		Records []AuditJSON `json:"records"`
		Next    int64       `json:"next"`
	}
	strict("/api/audit", &page)
	recs, err := r.Owner.AuditAfter(t.Context(), 0, 100)
	if err != nil || len(recs) == 0 || len(page.Records) != len(recs) {
		t.Fatalf("audit: API %d records, CLI %d (%v)", len(page.Records), len(recs), err)
	}
	for i := range recs {
		if want := NewAuditJSON(recs[i]); !reflect.DeepEqual(page.Records[i], want) {
			t.Errorf("audit record %d: API %+v\nCLI %+v", i, page.Records[i], want)
		}
	}
}

// TestGatewayGrantsListAndRevoke: a session approval leaves a grant that
// GET /api/grants lists; a call it covers runs without asking (the twin);
// after POST /api/grants/{id}/revoke the same call asks again. Revoking
// needs the token and JSON like every POST; an unknown id is 404.
func TestGatewayGrantsListAndRevoke(t *testing.T) {
	r, g, _, s, card := approvalTurn(t, "granted")
	if resp, body := g.do(g.req("POST", "/api/approvals/"+card.ApprovalID, `{"choice":"session"}`, g.token)); resp.StatusCode != 200 {
		t.Fatalf("approve for the session = %d %s", resp.StatusCode, body)
	}
	s.until("done")
	var grants []struct {
		ID       string   `json:"id"`
		Tool     string   `json:"tool"`
		Scope    string   `json:"scope"`
		Session  string   `json:"session"`
		Patterns []string `json:"patterns"`
		MaxRisk  string   `json:"max_risk"`
		Active   bool     `json:"active"`
		Approval string   `json:"approval_id"`
	}
	g.getJSON("/api/grants", &grants)
	if len(grants) != 1 || grants[0].Tool != "write_file" || grants[0].Scope != "session" || grants[0].Session != "granted" ||
		!grants[0].Active || grants[0].MaxRisk != "medium" || grants[0].Approval != card.ApprovalID ||
		len(grants[0].Patterns) != 1 || grants[0].Patterns[0] != "todo.md" {
		t.Fatalf("grants %+v; want the session grant on todo.md", grants)
	}
	id := grants[0].ID
	call := func() arbiter.Outcome {
		t.Helper()
		out, err := r.Call(context.Background(), CallRequest{Tool: "write_file", Args: `{"path":"todo.md","content":"- coffee\n"}`, Session: "granted"})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := call(); out.Decision != arbiter.Ran || out.Rule != "grant."+id {
		t.Fatalf("covered call = %s (%s); want ran by grant.%s", out.Decision, out.Rule, id)
	}

	for _, c := range []struct {
		name, path, body, token string
		want                    int
	}{
		{"no token", "/api/grants/" + id + "/revoke", "{}", "", 401},
		{"not JSON", "/api/grants/" + id + "/revoke", "", g.token, 415},
		{"unknown grant", "/api/grants/gr_0000000000000000/revoke", "{}", g.token, 404},
	} {
		req := g.req("POST", c.path, c.body, c.token)
		if resp, body := g.do(req); resp.StatusCode != c.want {
			t.Errorf("%s: revoke = %d %s; want %d", c.name, resp.StatusCode, body, c.want)
		}
	}
	if out := call(); out.Decision != arbiter.Ran {
		t.Fatalf("a refused revoke ended the grant: %s (%s)", out.Decision, out.Rule)
	}

	resp, body := g.do(g.req("POST", "/api/grants/"+id+"/revoke", "{}", g.token))
	if resp.StatusCode != 200 || !strings.Contains(body, `"active":false`) || !strings.Contains(body, `"revoked_at":"`) {
		t.Fatalf("revoke = %d %s; want 200 with the grant inactive", resp.StatusCode, body)
	}
	g.getJSON("/api/grants", &grants)
	if len(grants) != 0 {
		t.Errorf("grants after revoke %+v; want none active", grants)
	}
	if out := call(); out.Decision != arbiter.Pending {
		t.Errorf("the call after revoke = %s (%s); want it to ask again", out.Decision, out.Rule)
	}
}
