package app

import (
	"context"
	"os"
	"strings"
	"testing"
)

// weeklyMemory has three pairs of exact duplicates (three merge proposals
// the review finds without the model) and a note no proposal names.
const weeklyMemory = `# Memory

## m_aaaaaaaaaaa1
- kind: fact
- created: 2026-11-01T10:00:00Z
- updated: 2026-11-01T10:00:00Z
- source: owner

Lives in Lyon

## m_bbbbbbbbbbb1
- kind: fact
- created: 2026-11-02T10:00:00Z
- updated: 2026-11-02T10:00:00Z
- source: owner

Has a cat called Miso

## m_ccccccccccc1
- kind: preference
- created: 2026-11-03T10:00:00Z
- updated: 2026-11-03T10:00:00Z
- source: owner

Prefers oolong tea

## m_aaaaaaaaaaa2
- kind: fact
- created: 2026-11-04T10:00:00Z
- updated: 2026-11-04T10:00:00Z
- source: owner

Lives in Lyon

## m_bbbbbbbbbbb2
- kind: fact
- created: 2026-11-05T10:00:00Z
- updated: 2026-11-05T10:00:00Z
- source: owner

Has a cat called Miso

## m_ccccccccccc2
- kind: preference
- created: 2026-11-06T10:00:00Z
- updated: 2026-11-06T10:00:00Z
- source: owner

Prefers oolong tea

## m_ddddddddddd1
- kind: fact
- created: 2026-11-07T10:00:00Z
- updated: 2026-11-07T10:00:00Z
- source: owner

Works from home on Fridays
`

type weeklyReviewJSON struct {
	ID        string `json:"id"`
	Error     string `json:"error"`
	Proposals []struct {
		N      int    `json:"n"`
		Action string `json:"action"`
		Before []struct {
			ID   string `json:"id"`
			Text string `json:"text"`
			Gone bool   `json:"gone"`
		} `json:"before"`
		After  string `json:"after"`
		Status string `json:"status"`
	} `json:"proposals"`
	Review *weeklyReviewJSON `json:"review"`
}

// TestGatewayWeeklyMemoryReview: the weekly memory review over the API.
// Its proposals are listed with the units' texts before and the text
// after; approving one changes only the units it names; a request without
// credentials changes nothing (401) and its twin with the session cookie
// does; a proposal whose note was edited by hand since is refused (409)
// and memory.md stays as edited; "all" approves what is left and closes
// the review.
func TestGatewayWeeklyMemoryReview(t *testing.T) {
	r := newTestRuntime(t, "smart")
	r.Config.Memory.Review = "off" // exact duplicates only: no model call
	ctx := context.Background()
	path, err := r.Owner.MemoryPath()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(strings.TrimSuffix(path, "/memory.md"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(weeklyMemory), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, r)
	if resp, body := g.do(g.req("GET", "/api/memory/weekly", "", g.token)); resp.StatusCode != 404 {
		t.Fatalf("GET /api/memory/weekly before any review = %d %s; want 404", resp.StatusCode, body)
	}
	if _, err := r.Owner.MemoryReviewRun(ctx); err != nil {
		t.Fatalf("review run: %v", err)
	}
	var rev weeklyReviewJSON
	g.getJSON("/api/memory/weekly", &rev)
	if rev.ID == "" || len(rev.Proposals) != 3 {
		t.Fatalf("review = %+v; want three proposals", rev)
	}
	byText := map[string]int{}
	for _, p := range rev.Proposals {
		if p.Action != "merge" || p.Status != "pending" || len(p.Before) != 2 || p.Before[0].Text != p.After || p.Before[1].Text != p.After || p.Before[0].Gone {
			t.Fatalf("proposal %+v; want a pending merge of two units with the same text", p)
		}
		byText[p.After] = p.N
	}
	units := func() map[string]string {
		t.Helper()
		us, _, err := r.Owner.MemoryList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, u := range us {
			out[u.ID] = u.Text
		}
		return out
	}
	lyon, cat, tea := byText["Lives in Lyon"], byText["Has a cat called Miso"], byText["Prefers oolong tea"]
	n := func(i int) string { return string(rune('0' + i)) }

	// Refused: bad requests and no credentials; nothing changes.
	for _, c := range []struct{ path, body, token string }{
		{"/api/memory/weekly/" + n(lyon), `{"action":"approve"}`, ""},
		{"/api/memory/weekly/" + n(lyon), `{"action":"maybe"}`, g.token},
		{"/api/memory/weekly/0", `{"action":"approve"}`, g.token},
		{"/api/memory/weekly/x", `{"action":"approve"}`, g.token},
		{"/api/memory/weekly/9", `{"action":"approve"}`, g.token},
	} {
		want := map[string]int{"": 401}[c.token]
		if want == 0 {
			want = 400
			if strings.HasSuffix(c.path, "/9") {
				want = 404
			}
		}
		if resp, body := g.do(g.req("POST", c.path, c.body, c.token)); resp.StatusCode != want {
			t.Errorf("POST %s %s = %d %s; want %d", c.path, c.body, resp.StatusCode, body, want)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != weeklyMemory {
		t.Fatalf("memory.md after refused requests:\n%s\nwant it unchanged", got)
	}

	// The twin of the request without credentials: the page's session
	// cookie, from its own origin.
	resp, _ := g.do(g.req("GET", strings.TrimPrefix(g.login, g.base), "", ""))
	if len(resp.Cookies()) != 1 {
		t.Fatalf("login set %v; want one cookie", resp.Header["Set-Cookie"])
	}
	req := g.req("POST", "/api/memory/weekly/"+n(lyon), `{"action":"approve"}`, "")
	req.AddCookie(resp.Cookies()[0])
	req.Header.Set("Origin", g.base)
	if resp, body := g.do(req); resp.StatusCode != 200 {
		t.Fatalf("approve %d with the cookie = %d %s; want 200", lyon, resp.StatusCode, body)
	}
	after := units()
	want := map[string]string{"m_bbbbbbbbbbb1": "Has a cat called Miso", "m_bbbbbbbbbbb2": "Has a cat called Miso",
		"m_ccccccccccc1": "Prefers oolong tea", "m_ccccccccccc2": "Prefers oolong tea", "m_ddddddddddd1": "Works from home on Fridays"}
	kept := 0
	for id, text := range after {
		if strings.HasPrefix(id, "m_aaaaaaaaaaa") && text == "Lives in Lyon" {
			kept++
		} else if want[id] != text {
			t.Errorf("after approving %d: unit %s = %q; want it untouched", lyon, id, text)
		}
	}
	if kept != 1 || len(after) != len(want)+1 {
		t.Fatalf("after approving %d memory = %v; want the two Lyon notes merged into one, the rest as it was", lyon, after)
	}

	// A hand edit since the review: the cat's proposal is stale.
	b, _ := os.ReadFile(path)
	edited := strings.Replace(string(b), "Has a cat called Miso\n", "Has a cat called Miso, since 2020\n", 1)
	if edited == string(b) {
		t.Fatal("the hand edit did not apply")
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, body := g.do(g.req("POST", "/api/memory/weekly/"+n(cat), `{"action":"approve"}`, g.token))
	if resp.StatusCode != 409 || !strings.Contains(body, "memory.md changed") {
		t.Fatalf("approve the stale %d = %d %s; want 409 saying memory.md changed", cat, resp.StatusCode, body)
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Fatalf("memory.md after a stale approval:\n%s\nwant it as edited", got)
	}

	// Approve all: the tea notes merge; the review closes.
	code, text := g.do(g.req("POST", "/api/memory/weekly/all", `{"action":"approve"}`, g.token))
	if code.StatusCode != 200 {
		t.Fatalf("approve all = %d %s; want 200", code.StatusCode, text)
	}
	done := decode[weeklyReviewJSON](t, text)
	status := map[int]string{}
	for _, p := range done.Proposals {
		status[p.N] = p.Status
	}
	if status[lyon] != "approved" || status[cat] != "stale" || status[tea] != "approved" {
		t.Fatalf("after approve all: %v; want Lyon and tea approved, the cat stale", status)
	}
	teas := 0
	for _, text := range units() {
		if text == "Prefers oolong tea" {
			teas++
		}
	}
	if teas != 1 {
		t.Fatalf("after approve all there are %d tea notes; want 1", teas)
	}
	if resp, body := g.do(g.req("GET", "/api/memory/weekly", "", g.token)); resp.StatusCode != 404 {
		t.Fatalf("GET /api/memory/weekly after answering all = %d %s; want 404 (closed)", resp.StatusCode, body)
	}
}
