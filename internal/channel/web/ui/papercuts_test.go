package ui_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// longPlan is a write's plan as a card shows it: many lines of content.
func longPlan() string {
	var b strings.Builder
	b.WriteString("write_file notes/journal.md (replace, 2.4 KiB)\n")
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&b, "+ line %d of the new journal entry, long enough to wrap on a phone screen\n", i)
	}
	return b.String()
}

// addPending stores a pending approval as if a turn had asked for it.
func (f *fakeServer) addPending(session, tool, risk, plan string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextApprov++
	now := time.Now().UTC()
	a := &fakeApproval{
		ID: fmt.Sprintf("ap-%d", f.nextApprov), Tool: tool, Status: "pending", Risk: risk, Session: session, Plan: plan,
		PlanHash: "sha256:3f2a9c1b7d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff", Reason: "writes a file",
		CreatedAt: now.Format(time.RFC3339), ExpiresAt: now.Add(5 * time.Minute).Format(time.RFC3339), decided: make(chan string, 1),
	}
	f.approvals[a.ID] = a
}

// inViewport is JavaScript that is true when the element matching sel is
// wholly inside the viewport, the page not scrolled.
func inViewport(sel string) string {
	return `(() => { const e = document.querySelector(` + jsString(sel) + `); if (!e) return false;
		const r = e.getBoundingClientRect();
		return window.scrollY === 0 && r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth; })()`
}

// TestPhoneApproveButtonVisible: at 375×667 a card with a long plan shows
// its approve button without any scrolling, in the approvals view and in
// the chat; the plan itself scrolls inside the card.
func TestPhoneApproveButtonVisible(t *testing.T) {
	plan := longPlan()
	script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		a := f.ask(s, "write_file", "high", plan)
		if st, ok := waitOrEnd(ctx, a.decided); ok {
			s.tool("c1", "write_file", map[string]string{"approved": "ran", "denied": "denied"}[st], "", "")
			s.done("Written.")
		}
	}
	f := newFakeServer(t, true, script)
	f.addPending("web-1", "write_file", "high", plan)
	p := newPage(t, f, 375, 667, true)
	p.login()

	p.do(chromedp.Navigate(f.srv.URL + "/#approvals"))
	card := `#approvals-list .card[data-approval-id="ap-1"]`
	p.waitFor("the approvals view's card", `document.querySelector('`+card+`[data-status="pending"]')`)
	btn := card + ` button[data-choice="once"]`
	if !eval[bool](p, inViewport(btn)) {
		box := eval[string](p, `JSON.stringify(document.querySelector(`+jsString(btn)+`).getBoundingClientRect())`)
		p.screenshot("", "phone-approve-hidden.png")
		t.Errorf("approvals view at 375x667: the approve button %s is not in view without scrolling (innerHeight %d)", box, eval[int](p, `window.innerHeight`))
	}
	if h := eval[int](p, `document.querySelector(`+jsString(card+" .plan")+`).scrollHeight - document.querySelector(`+jsString(card+" .plan")+`).clientHeight`); h <= 0 {
		t.Errorf("the long plan does not scroll inside the card (overflow %d px); its full text must stay reachable", h)
	}
	p.screenshot("", "phone-approvals.png")

	// In the chat the card is the last thing in the transcript, below
	// the fold on a phone: the page brings its buttons into view.
	p.do(chromedp.Navigate(f.srv.URL + "/#chat"))
	p.waitFor("the chat view", `!document.getElementById("view-chat").hidden`)
	p.sendMessage("Write my journal")
	chatCard := `#transcript .card[data-approval-id="ap-2"]`
	p.waitFor("the chat's card", `document.querySelector('`+chatCard+`[data-status="pending"]')`)
	chatBtn := chatCard + ` button[data-choice="once"]`
	p.waitFor("the chat's approve button in view", `(() => { const e = document.querySelector(`+jsString(chatBtn)+`);
		const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`)
	p.do(chromedp.Click(chromedp.CSS(chatBtn)))
	if c := recv(t, f.choices, "the approval answer"); c.id != "ap-2" || c.choice != "once" {
		t.Errorf("answer = %+v; want ap-2 once", c)
	}
	p.screenshot("", "phone-chat-card.png")
}

// TestSessionsTitlesDeleteAndHistory: the sessions view shows each
// session's title (inert text); Delete asks first, then removes it; a
// refused delete shows the server's reason and keeps the session; a
// resumed session's tool calls read as text, not escaped JSON.
func TestSessionsTitlesDeleteAndHistory(t *testing.T) {
	f := newFakeServer(t, true, nil)
	f.sessions = []string{"asks", "old", "kitchen"}
	f.titles["kitchen"] = "What colour is the kettle…"
	f.titles["old"] = "<img src=/exfil> hello"
	f.refuse["asks"] = "the session has approvals waiting for your answer; approve or deny them first, then delete it"
	f.history["kitchen"] = []map[string]string{
		{"role": "user", "text": "Note the kettle"},
		{"role": "tool", "tool": "write_file", "status": "ran", "text": `{"path":"notes/kettle.md","content":"line one\nline \"two\""}`},
		{"role": "assistant", "text": "Noted."},
	}
	p := newPage(t, f, 1000, 800, false)
	p.login()

	p.do(chromedp.Navigate(f.srv.URL + "/#sessions"))
	p.waitFor("the sessions list", `document.querySelectorAll("#sessions-list .session").length === 3`)
	titles := eval[[]string](p, `[...document.querySelectorAll("#sessions-list .session .title")].map(e => e.textContent)`)
	if !slices.Equal(titles, []string{"What colour is the kettle…", "<img src=/exfil> hello", "(no message yet)"}) {
		t.Errorf("session titles = %q; want kitchen's and old's titles as text, and a placeholder", titles)
	}
	if n := eval[int](p, `document.querySelectorAll("#sessions-list img").length`); n != 0 || f.exfil.Load() != 0 {
		t.Errorf("a title became markup: %d images, %d fetches", n, f.exfil.Load())
	}
	if opt := eval[string](p, `[...document.getElementById("session-select").options].find(o => o.value === "kitchen").textContent`); opt != "What colour is the kettle… — kitchen" {
		t.Errorf("the session picker shows %q; want the title and the id", opt)
	}

	del := func(id string) string { return `#sessions-list .session[data-session="` + id + `"] button.deny` }
	p.do(chromedp.Click(chromedp.CSS(del("old"))))
	p.waitFor("the confirmation", `document.querySelector('#sessions-list .session[data-session="old"] .confirm')`)
	f.mu.Lock()
	early := len(f.dropped)
	f.mu.Unlock()
	if early != 0 {
		t.Fatalf("Delete deleted before the owner confirmed")
	}
	p.do(chromedp.Click(chromedp.CSS(del("old")))) // "Yes, delete" is the confirming button
	p.waitFor("the session to leave the list", `!document.querySelector('#sessions-list .session[data-session="old"]')`)
	f.mu.Lock()
	dropped := slices.Clone(f.dropped)
	f.mu.Unlock()
	if !slices.Equal(dropped, []string{"old"}) {
		t.Errorf("DELETE requests for %v; want old", dropped)
	}
	if eval[bool](p, `[...document.getElementById("session-select").options].some(o => o.value === "old")`) {
		t.Error("the deleted session is still in the session picker")
	}

	p.do(chromedp.Click(chromedp.CSS(del("asks"))))
	p.waitFor("the confirmation", `document.querySelector('#sessions-list .session[data-session="asks"] .confirm')`)
	p.do(chromedp.Click(chromedp.CSS(del("asks"))))
	p.waitFor("the refusal", `document.querySelector('#sessions-list .session[data-session="asks"] .error')`)
	if msg := eval[string](p, `document.querySelector('#sessions-list .session[data-session="asks"] .error').textContent`); !strings.Contains(msg, "approve or deny them first") {
		t.Errorf("a refused delete shows %q; want the server's reason", msg)
	}

	// History: the write's arguments as text.
	p.do(chromedp.Click(chromedp.CSS(`#sessions-list .session[data-session="kitchen"] button:not(.deny)`)))
	p.waitFor("the history", `document.querySelector("#transcript .tool .tool-preview")`)
	preview := eval[string](p, `document.querySelector("#transcript .tool .tool-preview").textContent`)
	if want := "path: notes/kettle.md\ncontent: line one\nline \"two\""; preview != want {
		t.Errorf("a stored tool call reads %q; want its arguments as text %q", preview, want)
	}
}
