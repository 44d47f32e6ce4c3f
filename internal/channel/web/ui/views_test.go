package ui_test

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/homard/homard/internal/channel/web/ui"
)

// TestFilesAreSelfContained checks the embedded files without a browser:
// no inline script, style or handler (the CSP would block them), no remote
// URL, and no HTML sink in the script.
func TestFilesAreSelfContained(t *testing.T) {
	fsys := ui.FS()
	read := func(name string) string {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatalf("embedded %s: %v", name, err)
		}
		return string(b)
	}
	html := read("index.html")
	js := read("app.js")
	md := read("markdown.js")
	tasks := read("tasks.js")
	browser := read("browser.js")
	css := read("app.css")
	// The one image the UI loads: a screenshot artifact from the
	// gateway's own origin, its id URL-encoded. Nothing else may create an
	// image or set a src.
	const picture = `const img = document.createElement("img");
    img.src = "/api/artifacts/" + encodeURIComponent(id);`
	if n := strings.Count(js, picture); n != 1 {
		t.Errorf("app.js builds the screenshot picture %d times as %q; want once", n, picture)
	}
	js = strings.Replace(js, picture, "", 1)
	const sinks = `innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|\.src\s*=|createElement\("(?:img|script|iframe)`
	checks := []struct {
		file, text string
		re         string
		why        string
	}{
		{"index.html", html, `<script(?:\s[^>]*)?>\s*[^<\s]`, "an inline script"},
		{"index.html", html, `\son[a-z]+\s*=`, "an inline event handler"},
		{"index.html", html, `\sstyle\s*=|<style`, "an inline style"},
		{"index.html", html, `(?:src|href)\s*=\s*"(?:https?:)?//`, "a remote URL"},
		{"app.css", css, `url\(|@import`, "a URL that would be fetched"},
		{"app.js", js, sinks, "an HTML sink, eval or a src assignment"},
		{"markdown.js", md, sinks, "an HTML sink, eval or a src assignment"},
		{"tasks.js", tasks, sinks, "an HTML sink, eval or a src assignment"},
		{"browser.js", browser, sinks, "an HTML sink, eval or a src assignment"},
	}
	for _, c := range checks {
		re, err := regexp.Compile(c.re)
		if err != nil {
			t.Fatalf("pattern %s: %v", c.re, err)
		}
		if m := re.FindString(c.text); m != "" {
			t.Errorf("%s has %s: %q", c.file, c.why, m)
		}
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(tag, " src=") {
			t.Errorf("index.html has a script without src: %s", tag)
		}
	}
	if !strings.Contains(html, `<html lang="`) {
		t.Errorf("index.html does not declare its language")
	}
}

func TestMarkdownSubset(t *testing.T) {
	f := newFakeServer(t, true, nil)
	p := newPage(t, f, 1000, 700, false)
	p.login()
	tests := []struct{ in, want string }{
		{"plain <b>text</b>", `<div class="md"><p>plain &lt;b&gt;text&lt;/b&gt;</p></div>`},
		{"## Title\nbody", `<div class="md"><h4>Title</h4><p>body</p></div>`},
		{"a **bold** and *em* and `code <i>`", `<div class="md"><p>a <strong>bold</strong> and <em>em</em> and <code>code &lt;i&gt;</code></p></div>`},
		{"__init__ and snake_case_name", `<div class="md"><p>__init__ and snake_case_name</p></div>`},
		{"```go\nfmt.Println(\"<x>\")\n```", `<div class="md"><pre class="code" data-lang="go"><code>fmt.Println("&lt;x&gt;")</code></pre></div>`},
		{"- one\n- two\n1. first", `<div class="md"><ul><li>one</li><li>two</li></ul><ol><li>first</li></ol></div>`},
		{"> quoted", `<div class="md"><blockquote>quoted</blockquote></div>`},
		{"[site](https://example.com/a?b=1)", `<div class="md"><p><a href="https://example.com/a?b=1" rel="noopener noreferrer" target="_blank">site</a><span class="url"> &lt;https://example.com/a?b=1&gt;</span></p></div>`},
		{"[x](javascript:alert(1))", `<div class="md"><p>[x](javascript:alert(1))</p></div>`},
		{"[x](data:text/html,hi)", `<div class="md"><p>[x](data:text/html,hi)</p></div>`},
		{"[x](/relative)", `<div class="md"><p>[x](/relative)</p></div>`},
		{"![logo](https://example.com/l.png)", `<div class="md"><p><span class="image">[image: logo] https://example.com/l.png</span></p></div>`},
		{"**[x](https://e.com)**", `<div class="md"><p><strong><a href="https://e.com/" rel="noopener noreferrer" target="_blank">x</a><span class="url"> &lt;https://e.com/&gt;</span></strong></p></div>`},
		{"**unclosed", `<div class="md"><p>**unclosed</p></div>`},
		{"中文**加粗**文字", `<div class="md"><p>中文<strong>加粗</strong>文字</p></div>`},
	}
	for _, tt := range tests {
		got := eval[string](p, `homardMarkdown(`+jsString(tt.in)+`).outerHTML`)
		if got != tt.want {
			t.Errorf("markdown(%q) =\n  %s\nwant\n  %s", tt.in, got, tt.want)
		}
	}
}

func TestAuditAndMemoryViews(t *testing.T) {
	f := newFakeServer(t, true, nil)
	p := newPage(t, f, 1000, 800, false)
	p.login()

	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="audit"]`)))
	if q := recv(t, f.audits, "the audit request"); q != "order=newest&limit=50" {
		t.Errorf("first audit request asks %q; want order=newest&limit=50", q)
	}
	p.waitFor("the first page", `document.querySelectorAll("#audit-list .rec").length === 50`)
	if first, last := eval[string](p, `document.querySelector("#audit-list .rec .seq").textContent`),
		eval[string](p, `[...document.querySelectorAll("#audit-list .rec .seq")].pop().textContent`); first != "#60" || last != "#11" {
		t.Errorf("the first page shows %s to %s; want #60 to #11 (newest first)", first, last)
	}
	if got := eval[string](p, `document.querySelector("#audit-list .rec .reason").textContent`); got != "<b>not bold</b> 审计记录" {
		t.Errorf("an audit reason reads %q; want the literal text", got)
	}
	p.do(chromedp.Click(chromedp.CSS(`#audit-more`)))
	if q := recv(t, f.audits, "the next audit page"); q != "order=newest&before=11&limit=50" {
		t.Errorf("Load more asks %q; want order=newest&before=11&limit=50", q)
	}
	p.waitFor("the second page", `document.querySelectorAll("#audit-list .rec").length === 60 && document.getElementById("audit-more").hidden`)

	p.do(
		chromedp.SendKeys(chromedp.CSS("#audit-tool"), "run_command"),
		chromedp.SetValue(chromedp.CSS("#audit-decision"), "denied"),
		chromedp.Click(chromedp.CSS(`#audit-filter button[type="submit"]`)),
	)
	if q := recv(t, f.audits, "the filtered audit request"); q != "order=newest&limit=50&tool=run_command&decision=denied" {
		t.Errorf("the filtered request asks %q; want order=newest&limit=50&tool=run_command&decision=denied", q)
	}

	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="memory"]`)))
	p.waitFor("the memory list", `document.querySelector("#memory-list .unit")`)
	p.do(chromedp.Click(chromedp.CSS(`#memory-list .unit button`)))
	p.waitFor("the confirmation", `document.querySelector("#memory-list .confirm")`)
	f.mu.Lock()
	early := len(f.deleted)
	f.mu.Unlock()
	if early != 0 {
		t.Fatal("Forget deleted before it was confirmed")
	}
	if got := eval[string](p, `document.activeElement.textContent`); got != "Yes, forget" {
		t.Errorf("after Forget the focus is on %q; want the confirm button", got)
	}
	p.do(chromedp.KeyEvent("\r"))
	p.waitFor("the unit to leave the list", `!document.querySelector("#memory-list .unit")`)
	f.mu.Lock()
	deleted := fmt.Sprint(f.deleted)
	f.mu.Unlock()
	if deleted != "[m1]" {
		t.Errorf("deleted %s; want [m1]", deleted)
	}
}

func TestStopSessionsAndHistory(t *testing.T) {
	stop := make(chan string, 1)
	script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		s.delta("Working on it…")
		if _, ok := waitOrEnd(ctx, stop); !ok {
			return
		}
		s.doneStopped("Working on it…", "cancelled")
	}
	f := newFakeServer(t, true, script)
	f.mu.Lock()
	f.sessions = append(f.sessions, "old-1")
	f.busy["old-1"] = true
	f.history["old-1"] = []map[string]string{
		{"role": "user", "text": "hi <b>there</b>"},
		{"role": "tool", "tool": "read_file", "status": "ran", "text": "<img src=\"/exfil?history\">"},
		{"role": "assistant", "text": "Your **notes** say ![chart](/exfil?hist) hello."},
	}
	f.mu.Unlock()
	p := newPage(t, f, 1000, 800, false)
	p.login()

	// Stop cancels the running turn of this session.
	p.sendMessage("a long task")
	p.waitFor("the streamed start", `document.querySelector("#transcript .msg.assistant")`)
	p.waitFor("the Stop button", `!document.getElementById("cancel-turn").hidden`)
	p.do(chromedp.Click(chromedp.CSS("#cancel-turn")))
	sess := recv(t, f.cancels, "the cancel request")
	if !strings.HasPrefix(sess, "web-") {
		t.Errorf("Stop cancelled session %q; want the turn's web-… session", sess)
	}
	stop <- sess
	p.waitFor("the stopped turn", `(document.querySelector("#transcript .usage") || {}).textContent?.includes("stopped: cancelled")`)

	// The Sessions view lists both; Open shows a stored transcript, inert.
	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="sessions"]`)))
	p.waitFor("the session list", `document.querySelectorAll("#sessions-list .session").length === 2`)
	p.do(chromedp.Click(chromedp.CSS(`#sessions-list .session:last-child button`)))
	p.waitFor("the stored transcript", `!document.getElementById("view-chat").hidden && document.querySelector("#transcript .tool")`)
	text := p.transcriptText()
	for _, want := range []string{"hi <b>there</b>", "read_file", `<img src="/exfil?history">`, "[image: chart] /exfil?hist"} {
		if !strings.Contains(text, want) {
			t.Errorf("the stored transcript does not show %q; it shows:\n%s", want, text)
		}
	}
	if got := eval[string](p, `document.querySelector("#transcript .msg.assistant strong").textContent`); got != "notes" {
		t.Errorf("stored Markdown bold reads %q; want notes", got)
	}
	if got := eval[string](p, `document.getElementById("session-select").value`); got != "old-1" {
		t.Errorf("the session picker shows %q; want old-1", got)
	}

	// old-1 runs a turn elsewhere: the server answers 409 and the page says so.
	p.sendMessage("another question")
	p.waitFor("the busy error", `(document.querySelector("#transcript .msg.error") || {}).textContent === "session old-1 is busy with another turn"`)
	if eval[bool](p, `document.getElementById("send").disabled`) {
		t.Errorf("Send stays disabled after a refused turn")
	}
	p.do(chromedp.Sleep(200 * time.Millisecond))
	if n := f.exfil.Load(); n != 0 {
		t.Errorf("the page fetched /exfil %d times from a stored transcript", n)
	}
}
