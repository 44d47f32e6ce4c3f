package app

import (
	"context"
	"strings"
	"testing"

	"github.com/homard/homard/internal/memory"
)

// TestGatewayMemoryReview: the review queue of automatic capture is served
// and answered over the API: a conflicting preference is listed with the
// unit it contradicts; accepting it with replace swaps the two in one
// write; dismissing drops a buffered note; an unknown id is 404 and a bad
// action 400.
func TestGatewayMemoryReview(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	owner := r.Config.Owner
	old, err := r.Owner.MemoryAdd(ctx, "I prefer oolong tea", "preference", 0)
	if err != nil {
		t.Fatal(err)
	}
	conflict, err := r.Memory.Offer(ctx, owner, "session s turn 1", memory.Proposal{Text: "I prefer coffee, not tea", Kind: memory.KindPreference})
	if err != nil {
		t.Fatal(err)
	}
	buffered, err := r.Memory.Offer(ctx, owner, "session s turn 1", memory.Proposal{Text: "The owner's bike is red", Kind: memory.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	if conflict.Status != memory.Review || conflict.ConflictsWith != old.ID {
		t.Fatalf("offer = %+v; want it in review against %s", conflict, old.ID)
	}
	g := startGateway(t, r)

	var items []struct {
		ID, Text, Kind, Status string
		ConflictsWith          string `json:"conflicts_with"`
		Count                  int
	}
	g.getJSON("/api/memory/review", &items)
	if len(items) != 2 || items[0].ID != conflict.ID || items[0].ConflictsWith != old.ID || items[1].ID != buffered.ID || items[1].Status == "" {
		t.Fatalf("review = %+v; want the conflict (against %s) first, then the buffered note", items, old.ID)
	}

	for _, c := range []struct {
		id, body string
		want     int
	}{
		{conflict.ID, `{"action":"maybe"}`, 400},
		{buffered.ID, `{"action":"dismiss","replace":"` + old.ID + `"}`, 400},
		{"mc_nope", `{"action":"accept"}`, 404},
		{conflict.ID, `{"action":"accept","replace":"m_nope"}`, 404},
	} {
		if resp, body := g.do(g.req("POST", "/api/memory/review/"+c.id, c.body, g.token)); resp.StatusCode != c.want {
			t.Errorf("POST review/%s %s = %d %s; want %d", c.id, c.body, resp.StatusCode, body, c.want)
		}
	}

	if resp, body := g.do(g.req("POST", "/api/memory/review/"+conflict.ID, `{"action":"accept","replace":"`+old.ID+`"}`, g.token)); resp.StatusCode != 200 {
		t.Fatalf("accept = %d %s", resp.StatusCode, body)
	}
	if resp, body := g.do(g.req("POST", "/api/memory/review/"+buffered.ID, `{"action":"dismiss"}`, g.token)); resp.StatusCode != 200 {
		t.Fatalf("dismiss = %d %s", resp.StatusCode, body)
	}
	units, _, err := r.Owner.MemoryList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, u := range units {
		texts = append(texts, u.Text)
	}
	if got := strings.Join(texts, "|"); got != "I prefer coffee, not tea" {
		t.Fatalf("memory = %q; want only the accepted note (the old one replaced, the dismissed one not added)", got)
	}
	g.getJSON("/api/memory/review", &items)
	if len(items) != 0 {
		t.Fatalf("review after answering = %+v; want empty", items)
	}
}
