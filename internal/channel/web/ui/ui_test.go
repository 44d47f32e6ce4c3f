package ui_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

const lsPlan = "run /usr/bin/ls\nargv: [\"/usr/bin/ls\", \"-la\", \"/home/owner/work/notes\"]\ncwd: /home/owner/work"

// waitOrEnd waits for c or the end of the request; it reports false on the end.
func waitOrEnd[T any](ctx context.Context, c <-chan T) (T, bool) {
	select {
	case v := <-c:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	case <-time.After(30 * time.Second):
		var zero T
		return zero, false
	}
}

// askScript streams a little text, waits for gate (when not nil), asks to
// run ls, waits for the card to be decided anywhere, then finishes.
func askScript(gate <-chan struct{}, risk string) chatScript {
	return func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		s.delta("Let me look ")
		time.Sleep(50 * time.Millisecond)
		s.delta("at the folder. ")
		if gate != nil {
			if _, ok := waitOrEnd(ctx, gate); !ok {
				return
			}
		}
		s.tool("call-1", "run_command", "proposed", lsPlan, "")
		a := f.ask(s, "run_command", risk, lsPlan)
		s.tool("call-1", "run_command", "pending", lsPlan, "")
		status, ok := waitOrEnd(ctx, a.decided)
		if !ok {
			return
		}
		if status != "approved" {
			s.tool("call-1", "run_command", "denied", lsPlan, "")
			s.delta("I was not allowed to look.")
			s.done("I was not allowed to look.")
			return
		}
		s.tool("call-1", "run_command", "ran", lsPlan, "total 2\nnotes.md")
		time.Sleep(50 * time.Millisecond)
		s.delta("The folder holds **notes.md**.")
		s.done("The folder holds **notes.md**.")
	}
}

// sendMessage types into the message box and clicks Send.
func (p *page) sendMessage(text string) {
	p.t.Helper()
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), text), chromedp.Click(chromedp.CSS("#send")))
}

func TestChatStreamsAndApprovesOnce(t *testing.T) {
	gate := make(chan struct{})
	f := newFakeServer(t, true, askScript(gate, "medium"))
	p := newPage(t, f, 1200, 900, false)
	p.login()

	href := eval[string](p, `location.href`)
	if u, err := url.Parse(href); err != nil || u.Path != "/" || u.RawQuery != "" || strings.Contains(href, f.token) {
		t.Fatalf("after login the page is at %q; want %s/ with no token", href, f.srv.URL)
	}

	p.sendMessage("List my notes folder")
	if got := recv(t, f.messages, "the chat message"); got != "List my notes folder" {
		t.Fatalf("server got message %q; want %q", got, "List my notes folder")
	}

	// The answer streams: the first fragments show while the turn still runs.
	p.waitFor("the streamed start of the answer", `document.querySelector("#transcript .msg.assistant") &&
		document.querySelector("#transcript .msg.assistant").textContent.includes("Let me look at the folder.")`)
	if n := eval[int](p, `document.querySelectorAll("#transcript .usage").length`); n != 0 {
		t.Fatalf("the turn shows as done before the server finished it")
	}
	if eval[bool](p, `document.getElementById("send").disabled`) != true {
		t.Errorf("Send is enabled while a turn streams")
	}
	close(gate)

	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
	cardText := eval[string](p, `document.querySelector('`+card+`').textContent`)
	for _, want := range []string{"run_command", "medium", "/usr/bin/ls", `"-la"`, "/home/owner/work/notes", "3f2a9c1b7d4e", "owner", "the model in session web-", "Expires", "runs a program",
		"Session or always would cover", "commands like ls ‹path in notes/›"} {
		if !strings.Contains(cardText, want) {
			t.Errorf("the card does not show %q; it shows:\n%s", want, cardText)
		}
	}
	if plan := eval[string](p, `document.querySelector('`+card+` pre.plan').textContent`); plan != lsPlan {
		t.Errorf("the card's plan is %q; want exactly %q", plan, lsPlan)
	}
	if h := eval[string](p, `document.querySelector('`+card+` .hash').textContent`); h != "3f2a9c1b7d4e" {
		t.Errorf("the card's hash prefix is %q; want the first 12 hex digits 3f2a9c1b7d4e", h)
	}
	if exp := eval[string](p, `document.querySelector('`+card+` .expires').textContent`); !regexp.MustCompile(`^in \d+ min \d+ s`).MatchString(exp) {
		t.Errorf("the card's expiry reads %q; want a countdown like 'in 4 min 59 s'", exp)
	}
	labels := eval[[]string](p, `[...document.querySelectorAll('`+card+` .actions button')].map(b => b.textContent)`)
	if want := []string{"Approve once", "This session", "Always", "Deny"}; fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Errorf("card buttons are %q; want %q", labels, want)
	}
	p.screenshot("", "chat.png")
	p.screenshot(card, "approval-card.png")

	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
	if got := recv(t, f.choices, "the approval answer"); got != (choiceMsg{id: "ap-1", choice: "once"}) {
		t.Fatalf("server got answer %+v; want ap-1 once", got)
	}

	p.waitFor("the tool result", `document.querySelector('#transcript .tool[data-tool-id="call-1"][data-status="ran"]')`)
	p.waitFor("the final answer", `[...document.querySelectorAll("#transcript .msg.assistant strong")].some(e => e.textContent === "notes.md")`)
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
	if st := eval[string](p, `document.querySelector('`+card+`').dataset.status`); st != "approved" {
		t.Errorf("after approving, the card's status is %q; want approved", st)
	}
	if eval[bool](p, `document.querySelector('`+card+` .actions').hidden`) != true {
		t.Errorf("the card still offers its buttons after it was answered")
	}
	text := p.transcriptText()
	if strings.Count(text, "The folder holds") != 1 {
		t.Errorf("the final answer shows %d times; want once:\n%s", strings.Count(text, "The folder holds"), text)
	}
	if !strings.Contains(text, "notes.md") || !strings.Contains(text, "ran") {
		t.Errorf("transcript lacks the tool result:\n%s", text)
	}
	p.screenshot("", "chat-done.png")
}

func TestCardAnsweredElsewhereUpdates(t *testing.T) {
	f := newFakeServer(t, true, askScript(nil, "high"))
	p := newPage(t, f, 1200, 900, false)
	p.login()
	p.waitFor("live updates", `document.getElementById("live").textContent === "live"`)
	if f.subscribers() == 0 {
		t.Fatal("the page shows live but the server has no /api/events subscriber")
	}

	p.sendMessage("List my notes folder")
	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
	p.waitFor("the pending badge", `document.getElementById("pending-count").textContent === "1"`)

	// The owner answers from the CLI (homard approve): the server decides
	// and tells every page through /api/events.
	if _, ok := f.decide("ap-1", "approved"); !ok {
		t.Fatal("fake: ap-1 was not pending")
	}
	p.waitFor("the card to show the decision", `document.querySelector('`+card+`').dataset.status === "approved"`)
	if out := eval[string](p, `document.querySelector('`+card+` .outcome').textContent`); !strings.Contains(out, "answered elsewhere") {
		t.Errorf("the card's outcome reads %q; want it to say it was answered elsewhere", out)
	}
	if eval[bool](p, `document.querySelector('`+card+` .actions').hidden`) != true {
		t.Errorf("the card still offers its buttons after it was answered elsewhere")
	}
	p.waitFor("the pending badge to clear", `document.getElementById("pending-count").hidden`)
	p.waitFor("the final answer", `document.querySelector("#transcript .usage")`)
	select {
	case c := <-f.choices:
		t.Errorf("the page posted an answer %+v although nobody clicked", c)
	default:
	}

	// The live stream drops (a restart, a network change) while a second
	// card is decided: on reconnecting, the page asks the server what is
	// still pending and closes that card.
	p.sendMessage("List it again")
	card2 := `#transcript .card[data-approval-id="ap-2"]`
	p.waitFor("the second card", `document.querySelector('`+card2+`[data-status="pending"]')`)
	f.decideQuietly("ap-2", "approved")
	f.dropEvents()
	p.waitFor("the missed decision after reconnecting", `document.querySelector('`+card2+`').dataset.status === "closed"`)
	p.waitFor("the live stream back", `document.getElementById("live").textContent === "live"`)
	p.waitFor("the second turn's end", `document.querySelectorAll("#transcript .usage").length === 2`)

	// A card asked in another session arrives only through /api/events;
	// the Approvals view lists it and can answer it.
	f.mu.Lock()
	f.approvals["ap-9"] = &fakeApproval{ID: "ap-9", Tool: "write_file", Status: "pending", Risk: "critical", Session: "cron-7",
		Plan: "write /home/owner/work/notes/todo.md (12 bytes)", PlanHash: "sha256:aabbccddeeff00112233", CreatedAt: time.Now().UTC().Format(time.RFC3339),
		ExpiresAt: time.Now().Add(time.Minute).UTC().Format(time.RFC3339), decided: make(chan string, 1)}
	f.mu.Unlock()
	f.broadcast("approval", map[string]string{"approval_id": "ap-9", "tool": "write_file", "plan": "write /home/owner/work/notes/todo.md (12 bytes)",
		"plan_hash": "sha256:aabbccddeeff00112233", "risk": "critical", "expires_at": time.Now().Add(time.Minute).UTC().Format(time.RFC3339), "session": "cron-7",
		"covers": "notes/**"})
	p.waitFor("the badge for the other session's card", `document.getElementById("pending-count").textContent === "1"`)
	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="approvals"]`)))
	other := `#approvals-list .card[data-approval-id="ap-9"]`
	p.waitFor("the other card in the Approvals view", `document.querySelector('`+other+`')`)
	labels := eval[[]string](p, `[...document.querySelectorAll('`+other+` .actions button')].map(b => b.dataset.choice)`)
	if fmt.Sprint(labels) != "[once deny]" {
		t.Errorf("a critical card offers %v; want only [once deny]", labels)
	}
	if txt := eval[string](p, `document.querySelector('`+other+`').textContent`); strings.Contains(txt, "would cover") {
		t.Errorf("a critical card names a session cover:\n%s", txt)
	}
	p.do(chromedp.Click(chromedp.CSS(other + ` button[data-choice="deny"]`)))
	if got := recv(t, f.choices, "the deny answer"); got != (choiceMsg{id: "ap-9", choice: "deny"}) {
		t.Errorf("server got %+v; want ap-9 deny", got)
	}
	p.waitFor("the denied card to leave the pending list", `!document.querySelector('`+other+`')`)
}

func TestHostileOutputIsInert(t *testing.T) {
	// With the server's CSP, and without it: the page alone must keep the
	// output inert (the CSP is a second wall, not the first).
	for _, withCSP := range []bool{true, false} {
		t.Run(fmt.Sprintf("csp=%v", withCSP), func(t *testing.T) {
			var base string
			hostile := func() string {
				return "# Report\n" +
					"<script>window.__pwned=1</script>\n" +
					"<img src=x onerror=\"window.__pwned=2\">\n" +
					"<img src=\"" + base + "/exfil?raw\">\n" +
					"![x](" + base + "/exfil?md)\n" +
					"[click me](javascript:window.__pwned=3)\n" +
					"<a href=\"javascript:window.__pwned=4\">html link</a>\n" +
					"<svg onload=\"window.__pwned=5\"></svg>\n" +
					"See [the docs](https://example.com/docs).\n"
			}
			script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
				h := hostile()
				// Cut the text mid-tag so a renderer that concatenates
				// fragments as HTML would see whole tags only at the end.
				for i := 0; i < len(h); i += 7 {
					s.delta(h[i:min(i+7, len(h))])
				}
				s.tool("call-1", "fetch", "ran", "GET "+base+"/exfil?plan <img src=\""+base+"/exfil?plan2\">", "<img src=\""+base+"/exfil?preview\" onerror=\"window.__pwned=6\">")
				s.done(h)
			}
			f := newFakeServer(t, withCSP, script)
			base = f.srv.URL
			p := newPage(t, f, 1200, 900, false)
			p.login()
			p.sendMessage("summarise this page")
			p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
			// Give any image or script the renderer might have let in time to load.
			p.do(chromedp.Sleep(500 * time.Millisecond))

			if v := eval[string](p, `typeof window.__pwned`); v != "undefined" {
				t.Errorf("model output ran as code: typeof window.__pwned = %s", v)
			}
			if n := f.exfil.Load(); n != 0 {
				t.Errorf("the page fetched /exfil %d times; model output must never load a URL", n)
			}
			if n := eval[int](p, `document.querySelectorAll("#transcript img, #transcript script, #transcript svg, #transcript iframe, #transcript object").length`); n != 0 {
				t.Errorf("the transcript holds %d live img/script/svg/iframe/object elements", n)
			}
			if eval[bool](p, `[...document.querySelectorAll("#transcript *")].some(e => [...e.attributes].some(a => a.name.startsWith("on")))`) {
				t.Errorf("an element in the transcript has an event handler attribute")
			}
			links := eval[[]string](p, `[...document.querySelectorAll("#transcript a")].map(a => a.href + " " + a.rel)`)
			if fmt.Sprint(links) != "[https://example.com/docs noopener noreferrer]" {
				t.Errorf("links in the transcript: %q; want only the https link with rel=noopener noreferrer", links)
			}
			text := p.transcriptText()
			for _, want := range []string{
				"<script>window.__pwned=1</script>",
				`<img src=x onerror="window.__pwned=2">`,
				"[image: x] " + base + "/exfil?md",
				"[click me](javascript:window.__pwned=3)",
				`<a href="javascript:window.__pwned=4">html link</a>`,
				`onerror="window.__pwned=6"`,
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the transcript does not show %q literally; it shows:\n%s", want, text)
				}
			}
			if n := eval[int](p, `document.querySelectorAll("#transcript h3").length`); n != 1 {
				t.Errorf("the heading of the Markdown answer rendered as %d h3 elements; want 1", n)
			}
			if withCSP {
				p.screenshot("", "hostile-output.png")
			}
		})
	}
}

// noHorizontalScroll checks the page fits the viewport's width.
func (p *page) noHorizontalScroll(where string) {
	p.t.Helper()
	sw := eval[int](p, `document.scrollingElement.scrollWidth`)
	iw := eval[int](p, `window.innerWidth`)
	if sw > iw {
		wide := eval[[]string](p, `[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map(e => e.tagName + "." + e.className)`)
		p.t.Errorf("%s: the page scrolls sideways at phone width: scrollWidth %d > innerWidth %d; too wide: %v", where, sw, iw, wide)
	}
}

func TestPhoneWidth(t *testing.T) {
	f := newFakeServer(t, true, askScript(nil, "medium"))
	p := newPage(t, f, 375, 740, true)
	p.login()
	if w := eval[int](p, `window.innerWidth`); w != 375 {
		t.Fatalf("innerWidth = %d; want the emulated 375", w)
	}
	p.noHorizontalScroll("empty chat")
	p.sendMessage("Please list /home/owner/work/a/very/long/path/without/any/spaces/that/would/push/the/layout/sideways/notes.md")
	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
	p.noHorizontalScroll("chat with an approval card")
	p.screenshot("", "phone-chat.png")
	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
	recv(t, f.choices, "the approval answer")
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
	p.noHorizontalScroll("chat after the turn")
	for _, view := range []string{"approvals", "audit", "memory", "sessions"} {
		p.do(chromedp.Navigate(f.srv.URL + "/#" + view))
		p.waitFor(view+" view", `!document.getElementById("view-`+view+`").hidden && document.querySelector("#view-`+view+` li, #view-`+view+` .card, #view-`+view+` .empty")`)
		p.noHorizontalScroll(view + " view")
	}
	p.screenshot("", "phone-audit.png")
}

func TestCJKText(t *testing.T) {
	const question = "请列出我的笔记，谢谢！日本語のメモも。"
	const answer = "好的：这里有**三条笔记**。日本語のテキストも表示されます。한국어도 됩니다."
	script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		// Split inside multi-byte runes' neighbourhood, by runes.
		rs := []rune(answer)
		for i := 0; i < len(rs); i += 3 {
			s.delta(string(rs[i:min(i+3, len(rs))]))
		}
		s.done(answer)
	}
	f := newFakeServer(t, true, script)
	p := newPage(t, f, 900, 700, false)
	p.login()
	p.sendMessage(question)
	if got := recv(t, f.messages, "the chat message"); got != question {
		t.Fatalf("server got %q; want %q", got, question)
	}
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
	text := p.transcriptText()
	for _, want := range []string{question, "好的：这里有三条笔记。日本語のテキストも表示されます。한국어도 됩니다."} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript does not show %q; it shows:\n%s", want, text)
		}
	}
	if got := eval[string](p, `document.querySelector("#transcript .msg.assistant strong").textContent`); got != "三条笔记" {
		t.Errorf("bold CJK text is %q; want 三条笔记", got)
	}
	// The glyphs are drawn with a real font: a CJK run is wider than a
	// missing-glyph box would make a single character.
	if w := eval[float64](p, `(() => { const s = document.createElement("span"); s.textContent = "笔记笔记笔记"; document.body.appendChild(s); const w = s.getBoundingClientRect().width; s.remove(); return w; })()`); w < 30 {
		t.Errorf("six CJK characters are %.1f px wide; is a CJK font installed?", w)
	}
	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="memory"]`)))
	p.waitFor("the memory view", `document.querySelector("#memory-review .unit")`)
	if mem := eval[string](p, `document.getElementById("view-memory").textContent`); !strings.Contains(mem, "猫的名字是味噌。") || !strings.Contains(mem, "用户喜欢简短的回答") {
		t.Errorf("the memory view does not show the CJK units:\n%s", mem)
	}
	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="chat"]`)))
	p.screenshot("", "cjk-chat.png")

	// The same page in dark mode.
	light := eval[string](p, `getComputedStyle(document.documentElement).backgroundColor`)
	p.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		})
		return err
	}))
	p.waitFor("dark colours", `getComputedStyle(document.documentElement).backgroundColor !== `+jsString(light))
	p.screenshot("", "cjk-chat-dark.png")
}

// tabTo presses Tab (or Shift+Tab) until the focused element matches sel.
func (p *page) tabTo(sel string, back bool) {
	p.t.Helper()
	var opts []chromedp.KeyOption
	if back {
		opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
	}
	for range 40 {
		if eval[bool](p, `document.activeElement && document.activeElement.matches('`+sel+`')`) {
			return
		}
		p.do(chromedp.KeyEvent("\t", opts...))
	}
	p.t.Fatalf("Tab never reached %s; focus is on %s", sel, eval[string](p, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : "nothing"`))
}

func TestKeyboardOnly(t *testing.T) {
	f := newFakeServer(t, true, askScript(nil, "medium"))
	p := newPage(t, f, 1200, 900, false)
	p.login()

	p.tabTo("#input", false)
	p.do(chromedp.KeyEvent("line one"), pressEnter(int64(chromedp.ModifierShift)), chromedp.KeyEvent("line two"))
	select {
	case m := <-f.messages:
		t.Fatalf("Shift+Enter sent the message %q; it must insert a new line", m)
	case <-time.After(200 * time.Millisecond):
	}
	// Enter that confirms an IME composition (how CJK is typed) must not send.
	eval[bool](p, `document.getElementById("input").dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", isComposing: true, bubbles: true, cancelable: true}))`)
	select {
	case m := <-f.messages:
		t.Fatalf("Enter during an IME composition sent the message %q", m)
	case <-time.After(200 * time.Millisecond):
	}
	p.do(pressEnter(0))
	if got := recv(t, f.messages, "the message sent with Enter"); got != "line one\nline two" {
		t.Fatalf("Enter sent %q; want %q", got, "line one\nline two")
	}
	if v := eval[string](p, `document.getElementById("input").value`); v != "" {
		t.Errorf("the message box still holds %q after sending", v)
	}

	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
	// From the message box, Shift+Tab walks back into the transcript.
	p.tabTo(card+` button[data-choice="once"]`, true)
	if eval[string](p, `getComputedStyle(document.activeElement).outlineStyle`) == "none" {
		t.Errorf("the focused card button shows no focus outline")
	}
	p.do(chromedp.KeyEvent("\r"))
	if got := recv(t, f.choices, "the approval answer"); got != (choiceMsg{id: "ap-1", choice: "once"}) {
		t.Fatalf("server got %+v; want ap-1 once", got)
	}
	p.waitFor("focus to stay on the answered card", `document.activeElement && document.activeElement.matches('`+card+` .outcome')`)
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
}

// TestOwnTurnDoneKeepsTheTranscript: the real server publishes turn_done on
// /api/events for every turn, and it may reach the page after the page's
// own chat stream closed. For the page's own turn that must change nothing
// (redrawing from history would drop its cards and usage line); a turn of
// the same session that ran elsewhere is still loaded.
func TestOwnTurnDoneKeepsTheTranscript(t *testing.T) {
	script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		s.delta("Here it is.")
		s.done("Here it is.")
	}
	f := newFakeServer(t, true, script)
	p := newPage(t, f, 1200, 900, false)
	p.login()
	p.waitFor("live updates", `document.getElementById("live").textContent === "live"`)
	p.sendMessage("Show me")
	p.waitFor("the end of the turn", `!document.getElementById("send").disabled && document.querySelector("#transcript .usage")`)
	f.mu.Lock()
	session := f.sessions[0]
	f.history[session] = []map[string]string{{"role": "user", "text": "from the CLI"}, {"role": "assistant", "text": "Answered elsewhere."}}
	f.mu.Unlock()

	f.broadcast("turn_done", map[string]string{"session": session, "text": "Here it is."})
	p.do(chromedp.Sleep(300 * time.Millisecond))
	if n := eval[int](p, `document.querySelectorAll("#transcript .usage").length`); n != 1 {
		t.Fatalf("the page's own turn_done redrew the transcript (usage lines: %d; want 1):\n%s", n, p.transcriptText())
	}

	f.broadcast("turn_done", map[string]string{"session": session, "text": "Answered elsewhere."})
	p.waitFor("the turn that ran elsewhere", `document.getElementById("transcript").textContent.includes("Answered elsewhere.")`)
}

// TestHiddenCharactersAreMarked: a tool name, a plan and a preview holding
// bidi, zero-width and control characters show each as a marked escape
// (\u202e in a span.hidden-char), in the tool line and in the approval
// card; the twin, an ordinary tool line, has no mark.
func TestHiddenCharactersAreMarked(t *testing.T) {
	const plan = "write notes/\u202etxt.exe\nsize 3\u200b bytes\x1b[2J"
	script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		s.tool("call-0", "read_file", "ran", "read notes/plain.txt", "tea\n")
		s.tool("call-1", "write\u2066_file", "proposed", plan, "out\u200dput")
		a := f.ask(s, "write\u2066_file", "medium", plan)
		waitOrEnd(ctx, a.decided)
	}
	f := newFakeServer(t, true, script)
	p := newPage(t, f, 1200, 900, false)
	p.login()
	p.sendMessage("write it")
	card := `#transcript .card[data-approval-id="ap-1"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`')`)

	marks := func(sel string) []string {
		return eval[[]string](p, `[...document.querySelectorAll('`+sel+` .hidden-char')].map(e => e.textContent)`)
	}
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{`#transcript .tool[data-tool-id="call-1"] .tool-name`, []string{`\u2066`}},
		{`#transcript .tool[data-tool-id="call-1"] .tool-plan`, []string{`\u202e`, `\u200b`, `\x1b`}},
		{`#transcript .tool[data-tool-id="call-1"] .tool-preview`, []string{`\u200d`}},
		{card + ` h3`, []string{`\u2066`}},
		{card + ` pre.plan`, []string{`\u202e`, `\u200b`, `\x1b`}},
		{`#transcript .tool[data-tool-id="call-0"]`, nil},
	} {
		if got := marks(tc.sel); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("marks in %s = %q; want %q", tc.sel, got, tc.want)
		}
	}
	// No hidden character is left raw, and the plan's lines stay lines.
	text := p.transcriptText()
	for _, bad := range []string{"\u202e", "\u2066", "\u200b", "\u200d", "\x1b"} {
		if strings.Contains(text, bad) {
			t.Errorf("the transcript holds %q raw:\n%q", bad, text)
		}
	}
	if !strings.Contains(text, "notes/\\u202etxt.exe\nsize 3") {
		t.Errorf("the plan does not show as its marked lines:\n%s", text)
	}
}
