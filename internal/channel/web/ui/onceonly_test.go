package ui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestOnceOnlyCardOffersTwoButtons: a card the approval service takes only
// once (once_only: a command that runs code ungraded, here of medium risk) shows
// "Approve once" and "Deny" and no cover, and once still answers it. The
// twin, a medium card with four buttons, is TestChatStreamsAndApprovesOnce.
func TestOnceOnlyCardOffersTwoButtons(t *testing.T) {
	f := newFakeServer(t, true, askScript(nil, "medium"))
	f.mu.Lock()
	f.onceOnly = true
	f.mu.Unlock()
	p := newPage(t, f, 1200, 900, false)
	p.login()
	p.sendMessage("Run the tests")
	recv(t, f.messages, "the chat message")

	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
	labels := eval[[]string](p, `[...document.querySelectorAll('`+card+` .actions button')].map(b => b.textContent)`)
	if want := []string{"Approve once", "Deny"}; fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Errorf("once-only card buttons are %q; want %q", labels, want)
	}
	if text := eval[string](p, `document.querySelector('`+card+`').textContent`); strings.Contains(text, "Session or always would cover") {
		t.Errorf("a once-only card names what a session would cover:\n%s", text)
	}
	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
	if got := recv(t, f.choices, "the approval answer"); got != (choiceMsg{id: "ap-1", choice: "once"}) {
		t.Fatalf("server got answer %+v; want ap-1 once", got)
	}
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
}

// TestNoAlwaysCardOffersThreeButtons: a card the approval service takes
// once or for the session but not always (no_always: a command that runs
// code in the graded sandbox) shows "Approve once", "This session" and
// "Deny", says what a session would cover, and session answers it.
func TestNoAlwaysCardOffersThreeButtons(t *testing.T) {
	f := newFakeServer(t, true, askScript(nil, "medium"))
	f.mu.Lock()
	f.noAlways = true
	f.mu.Unlock()
	p := newPage(t, f, 1200, 900, false)
	p.login()
	p.sendMessage("Run the tests")
	recv(t, f.messages, "the chat message")

	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
	choices := eval[[]string](p, `[...document.querySelectorAll('`+card+` .actions button')].map(b => b.dataset.choice)`)
	if want := []string{"once", "session", "deny"}; fmt.Sprint(choices) != fmt.Sprint(want) {
		t.Errorf("no-always card choices are %q; want %q", choices, want)
	}
	if text := eval[string](p, `document.querySelector('`+card+`').textContent`); !strings.Contains(text, "Session would cover") || strings.Contains(text, "or always") {
		t.Errorf("a no-always card does not name what a session (only) would cover:\n%s", text)
	}
	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="session"]`)))
	if got := recv(t, f.choices, "the approval answer"); got != (choiceMsg{id: "ap-1", choice: "session"}) {
		t.Fatalf("server got answer %+v; want ap-1 session", got)
	}
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
}

// TestCodeCardAsksForACode: a card that needs a code from the owner's
// authenticator (needs_code, permissions.totp) shows a code field; a wrong
// code is refused with the server's reason and the card stays open;
// the right code approves it. The twin (no field, no code sent) is
// TestOnceOnlyCardOffersTwoButtons.
func TestCodeCardAsksForACode(t *testing.T) {
	f := newFakeServer(t, true, askScript(nil, "high"))
	f.mu.Lock()
	f.code = "492039"
	f.mu.Unlock()
	p := newPage(t, f, 1200, 900, false)
	p.login()
	p.sendMessage("Deploy")
	recv(t, f.messages, "the chat message")

	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"] input.code')`)
	p.do(chromedp.SendKeys(chromedp.CSS(card+` input.code`), "111111"))
	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
	if got := recv(t, f.choices, "the wrong answer"); got != (choiceMsg{id: "ap-1", choice: "once", code: "111111"}) {
		t.Fatalf("server got %+v; want ap-1 once with the typed code", got)
	}
	p.waitFor("the refusal", `document.querySelector('`+card+` .outcome').textContent.includes("wrong code")`)
	if st := eval[string](p, `document.querySelector('`+card+`').dataset.status`); st != "pending" {
		t.Fatalf("after a wrong code the card is %q; want pending", st)
	}
	eval[string](p, `document.querySelector('`+card+` input.code').value = ""`)
	p.do(chromedp.SendKeys(chromedp.CSS(card+` input.code`), "492039"))
	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
	if got := recv(t, f.choices, "the right answer"); got != (choiceMsg{id: "ap-1", choice: "once", code: "492039"}) {
		t.Fatalf("server got %+v; want ap-1 once with the right code", got)
	}
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
}
