package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestBrowserCardShowsTheDiff: through the real `homard serve`, a write
// card shows its diff against the file on disk — the removed line red,
// the added ones green, markup in the content as text, an ESC and a bidi
// override as visible tokens — cut at 200 lines with a button that loads
// the rest; approving it for the session leaves a grant that the
// Approvals view lists, and its Revoke button ends it.
func TestBrowserCardShowsTheDiff(t *testing.T) {
	p := newE2EPage(t) // skips (or fails under CI) before anything starts

	var content strings.Builder
	content.WriteString("new line <img src=x onerror=\"window.__pwned=1\">\n\x1b[31mred\u202eevil\n")
	for i := 1; i <= 250; i++ {
		fmt.Fprintf(&content, "line %d\n", i)
	}
	args := fmt.Sprintf(`{"path":"notes.md","content":%q}`, content.String())
	args = strings.ReplaceAll(args, `\x1b`, `\u001b`) // %q writes Go escapes; JSON wants \u
	r := newTestRuntime(t, "smart")
	if err := os.WriteFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "notes.md"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-E2EKEY0123456789")
	model := newE2EModel(t,
		e2eReply{chunks: llmtest.OpenAIStream(toolCall("call_1", "write_file", args))},
		e2eReply{chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Written."}})},
	)
	r.Config.Model.Provider = "openai"
	r.Config.Model.BaseURL = model.srv.URL + "/v1"
	r.Config.Memory.Capture = "off"
	g := startGateway(t, r)

	p.do(chromedp.Navigate(g.login))
	p.waitFor("the app to start", `document.body.dataset.ready === "1"`)
	p.send("Rewrite notes.md")
	card := `#transcript .card[data-status="pending"]`
	p.waitFor("the approval card", `document.querySelector('`+card+` pre.preview')`)
	id := e2eEval[string](p, `document.querySelector('`+card+`').dataset.approvalId`)
	card = `#transcript .card[data-approval-id="` + id + `"]`
	pre := card + ` pre.preview`

	lines := func(cls string) []string {
		t.Helper()
		return e2eEval[[]string](p, `[...document.querySelectorAll('`+pre+` span.`+cls+`')].map(e => e.textContent)`)
	}
	if got := lines("diff-head"); len(got) != 2 || got[0] != "--- notes.md" || got[1] != "+++ notes.md" {
		t.Errorf("diff headers %q; want --- notes.md, +++ notes.md", got)
	}
	if got := lines("diff-del"); len(got) != 1 || got[0] != "-old line" {
		t.Errorf("removed lines %q; want -old line", got)
	}
	added := lines("diff-add")
	if len(added) < 3 || added[0] != `+new line <img src=x onerror="window.__pwned=1">` || added[1] != `+\x1b[31mred\u202eevil` {
		t.Errorf("added lines start %q; want the content as text, with its ESC and bidi override as tokens", added[:min(3, len(added))])
	}
	if n := e2eEval[int](p, `document.querySelectorAll('`+pre+` .hidden-char').length`); n != 2 {
		t.Errorf("the preview marks %d hidden characters; want 2 (ESC, U+202E)", n)
	}
	if n := e2eEval[int](p, `document.querySelectorAll('`+card+` img, `+card+` script').length`); n != 0 {
		t.Errorf("the card holds %d img/script elements from the content", n)
	}
	if c := e2eEval[string](p, `getComputedStyle(document.querySelector('`+pre+` span.diff-add')).color`); c == e2eEval[string](p, `getComputedStyle(document.querySelector('`+pre+` span.pl:not(.diff-add):not(.diff-del):not(.diff-head):not(.diff-hunk)') || document.body).color`) {
		t.Errorf("added lines have the plain text colour %s", c)
	}
	shown := e2eEval[int](p, `document.querySelectorAll('`+pre+` span.pl').length`)
	more := e2eEval[string](p, `(document.querySelector('`+card+` button.expand') || {textContent: ""}).textContent`)
	if shown != 200 || more != "Show all (56 more lines)" {
		t.Errorf("the card shows %d lines and the button %q; want 200 and Show all (56 more lines)", shown, more)
	}
	if e2eEval[bool](p, `document.querySelector('`+pre+`').textContent.includes("line 250")`) {
		t.Error("the clipped preview already holds the last line")
	}
	p.screenshot(card, "e2e-preview-card.png")

	p.do(chromedp.Click(chromedp.CSS(card + ` button.expand`)))
	p.waitFor("the whole preview", `document.querySelector('`+pre+`').textContent.includes("+line 250")`)
	if n := e2eEval[int](p, `document.querySelectorAll('`+pre+` span.pl').length`); n != 256 {
		t.Errorf("the expanded preview has %d lines; want 256", n)
	}
	if e2eEval[bool](p, `!!document.querySelector('`+card+` button.expand')`) {
		t.Error("the Show all button is still there after expanding")
	}
	p.screenshot(card, "e2e-preview-card-full.png")

	// Approve for the session: a grant the Approvals view lists and revokes.
	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="session"]`)))
	p.waitFor("the final answer", `document.getElementById("transcript").textContent.includes("Written.")`)
	if got := workspaceFile(t, r, "notes.md"); got != content.String() {
		t.Errorf("notes.md holds %d bytes; want the approved %d", len(got), content.Len())
	}
	if v := e2eEval[string](p, `typeof window.__pwned`); v != "undefined" {
		t.Errorf("content in the preview ran as code: typeof window.__pwned = %s", v)
	}
	p.do(chromedp.Navigate(g.base + "/#approvals"))
	p.waitFor("the grant", `document.querySelector("#grants-list li.grant")`)
	what := e2eEval[string](p, `document.querySelector("#grants-list li.grant .grant-what").textContent`)
	if what != "write_file on notes.md" {
		t.Errorf("the grant reads %q; want write_file on notes.md", what)
	}
	p.screenshot("#view-approvals", "e2e-grants.png")
	p.do(chromedp.Click(chromedp.CSS(`#grants-list li.grant button`)))
	p.waitFor("the grant to go", `!document.querySelector("#grants-list li.grant") && document.getElementById("grants-list").textContent.includes("No standing approvals.")`)
	if list, err := r.Owner.Grants(context.Background(), false); err != nil || len(list) != 0 {
		t.Errorf("active grants after Revoke: %v, %v; want none", list, err)
	}
}
