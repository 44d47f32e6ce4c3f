package ui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWeeklyMemoryReviewCard: the memory view shows the open weekly review
// as one card, each proposal before → after; a hostile note text is text
// (no element, no fetch, its bidi override marked); Approve, Dismiss and
// Approve all send the answer for the proposal pressed and the card
// shows the server's answer; a stale proposal shows the server's refusal.
func TestWeeklyMemoryReviewCard(t *testing.T) {
	f := newFakeServer(t, true, nil)
	hostile := "<img src=/exfil onerror=\"window.__pwned=1\">Lives in \u202eLyon"
	f.weekly = &fakeWeekly{
		answers: make(chan string, 8),
		stale:   map[int]bool{2: true},
		proposals: []map[string]any{
			{"n": 1, "action": "merge", "before": []map[string]any{{"id": "m_a1", "text": hostile, "gone": false}, {"id": "m_a2", "text": "Lives in Lyon", "gone": false}},
				"after": "Lives in Lyon", "reason": "the same place", "status": "pending"},
			{"n": 2, "action": "replace", "before": []map[string]any{{"id": "m_c1", "text": "Prefers oolong tea", "gone": false}},
				"after": "Prefers coffee", "reason": "", "status": "pending"},
			{"n": 3, "action": "merge", "before": []map[string]any{{"id": "m_b1", "text": "Has a cat", "gone": false}, {"id": "m_b2", "text": "Has a cat", "gone": false}},
				"after": "Has a cat", "reason": "", "status": "pending"},
			{"n": 4, "action": "delete", "before": []map[string]any{{"id": "m_d1", "text": "Old note", "gone": false}},
				"after": "", "reason": "stale", "status": "pending"},
		},
	}
	p := newPage(t, f, 1000, 800, false)
	p.login()
	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="memory"]`)))
	p.waitFor("the weekly card", `document.querySelectorAll("#memory-weekly .proposal").length === 4`)

	first := eval[string](p, `document.querySelector("#memory-weekly .proposal .before .unit-text").textContent`)
	if first != `<img src=/exfil onerror="window.__pwned=1">Lives in \u202eLyon` {
		t.Errorf("the hostile note reads %q; want the literal text with the override marked", first)
	}
	if n := eval[int](p, `document.querySelectorAll("#memory-weekly img").length`); n != 0 || f.exfil.Load() != 0 || eval[bool](p, `window.__pwned === 1`) {
		t.Errorf("a note became markup: %d images, %d fetches", n, f.exfil.Load())
	}
	// The twin: the hidden character is marked once, in the hostile note
	// only; the plain one reads as it is.
	if n := eval[int](p, `document.querySelectorAll("#memory-weekly .hidden-char").length`); n != 1 {
		t.Errorf("%d hidden characters marked; want the one override", n)
	}
	card := eval[string](p, `document.getElementById("memory-weekly").innerText`)
	for _, want := range []string{"Weekly memory review", "1. merge", "m_a2 Lives in Lyon", "→ Prefers coffee", "4. delete", "Approve all"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card reads %q; want %q in it", card, want)
		}
	}

	press := func(sel, want string) {
		t.Helper()
		p.do(chromedp.Click(chromedp.CSS(sel)))
		if got := recv(t, f.weekly.answers, "the answer to "+want); got != want {
			t.Fatalf("pressing %s sent %q; want %q", sel, got, want)
		}
	}
	press(`#memory-weekly .proposal:nth-child(1) button.approve`, "1 approve")
	p.waitFor("proposal 1 approved", `document.querySelector("#memory-weekly .proposal:nth-child(1)").dataset.status === "approved" &&
		!document.querySelector("#memory-weekly .proposal:nth-child(1) button")`)
	press(`#memory-weekly .proposal:nth-child(4) button.deny`, "4 dismiss")
	p.waitFor("proposal 4 dismissed", `document.querySelector("#memory-weekly .proposal:nth-child(4)").dataset.status === "dismissed"`)
	if s := eval[string](p, `document.querySelector("#memory-weekly .proposal:nth-child(3)").dataset.status`); s != "pending" {
		t.Errorf("proposal 3 is %q after answering 1 and 4; want pending", s)
	}

	press(`#memory-weekly .proposal:nth-child(2) button.approve`, "2 approve")
	p.waitFor("the refusal", `document.querySelector("#memory-weekly .error") && document.querySelector("#memory-weekly .proposal:nth-child(2)").dataset.status === "stale"`)
	if msg := eval[string](p, `document.querySelector("#memory-weekly .error").textContent`); !strings.Contains(msg, "memory.md changed since the review was made") {
		t.Errorf("the refusal reads %q; want the server's message", msg)
	}

	p.screenshot("#view-memory", "weekly-review.png")
	press(`#memory-weekly > .actions button.approve`, "all approve")
	p.waitFor("all answered", `document.querySelector("#memory-weekly .proposal:nth-child(3)").dataset.status === "approved" &&
		!document.querySelector("#memory-weekly button") && !document.querySelector("#memory-weekly .error")`)
}
