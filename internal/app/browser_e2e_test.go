package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/homard/homard/internal/llm/llmtest"
)

// The web UI's own browser tests (internal/channel/web/ui) run against a
// fake of the API. This one runs the same headless Chromium against the
// real thing: Runtime.Serve on a loopback listener, the embedded UI, a
// smart-mode Runtime whose writes ask, and a scripted OpenAI-format model.

// e2eReply is one scripted model answer: its chunks are written with a
// short pause between them, as a provider streams; when gate is set, the
// reply stops before chunk gateAt until the test closes gate.
type e2eReply struct {
	chunks []string
	gate   <-chan struct{}
	gateAt int
}

// e2eModel is an OpenAI-format model endpoint answering request i with
// replies[i] (500 beyond the script).
type e2eModel struct {
	srv     *httptest.Server
	stop    chan struct{} // closed at cleanup: no reply waits on a gate
	replies []e2eReply
	calls   atomic.Int64
}

func newE2EModel(t *testing.T, replies ...e2eReply) *e2eModel {
	t.Helper()
	m := &e2eModel{stop: make(chan struct{}), replies: replies}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	t.Cleanup(func() { close(m.stop) }) // runs before Close
	return m
}

func (m *e2eModel) serve(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	n := int(m.calls.Add(1)) - 1
	if n >= len(m.replies) {
		http.Error(w, `{"error":{"message":"e2e: no scripted reply"}}`, http.StatusInternalServerError)
		return
	}
	rep := m.replies[n]
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	for i, c := range rep.chunks {
		if rep.gate != nil && i == rep.gateAt {
			select {
			case <-rep.gate:
			case <-m.stop:
				return
			case <-r.Context().Done():
				return
			}
		}
		if _, err := io.WriteString(w, c); err != nil {
			return
		}
		fl.Flush()
		time.Sleep(15 * time.Millisecond)
	}
}

// e2eChromium finds Chromium as the UI tests do: HOMARD_CHROMIUM, else
// the usual names on PATH.
func e2eChromium() string {
	if p := os.Getenv("HOMARD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// e2ePage is one headless Chromium tab.
type e2ePage struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex // guards exceptions
	exceptions []string
}

func newE2EPage(t *testing.T) *e2ePage {
	t.Helper()
	exe := e2eChromium()
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed; under CI the browser tests must run (apt-get install chromium)")
		}
		t.Skip("Chromium is not installed (apt-get install chromium); skipping the end-to-end browser test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", "new"),
		chromedp.DisableGPU,
		chromedp.Flag("lang", "en-US"),
		chromedp.WindowSize(1200, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // no sandbox as root (CI)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	p := &e2ePage{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // starts the browser, without a time limit
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			msg := "exception"
			if d := ev.ExceptionDetails; d != nil {
				msg = d.Text
				if d.Exception != nil {
					msg += ": " + d.Exception.Description
				}
			}
			p.mu.Lock()
			p.exceptions = append(p.exceptions, msg)
			p.mu.Unlock()
		}
	}()
	p.do(chromedp.EmulateViewport(1200, 900))
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.exceptions {
			t.Errorf("JavaScript exception in the page: %s", e)
		}
	})
	return p
}

func (p *e2ePage) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

func e2eEval[T any](p *e2ePage, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor waits until js is truthy.
func (p *e2ePage) waitFor(what, js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		p.t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, js, err, text)
	}
}

// screenshot saves a PNG of sel ("" for the page) to $HOMARD_TEST_ARTIFACTS,
// else testdata/artifacts (git-ignored).
func (p *e2ePage) screenshot(sel, name string) {
	p.t.Helper()
	dir := os.Getenv("HOMARD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatalf("create artifact folder: %v", err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	var png []byte
	var err error
	if sel == "" {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel), chromedp.NodeVisible))
	}
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("save screenshot: %v", err)
	}
	p.t.Logf("screenshot: %s", path)
}

// send types text into the message box and presses Enter.
func (p *e2ePage) send(text string) {
	p.t.Helper()
	p.do(chromedp.SendKeys(chromedp.CSS("#input"), text), chromedp.KeyEvent("\r"))
}

func e2eTranscript(p *e2ePage) string {
	p.t.Helper()
	return e2eEval[string](p, `document.getElementById("transcript").textContent`)
}

func workspaceFile(t *testing.T, r *Runtime, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// TestBrowserAgainstRealServe: one page, three turns, through the real
// `homard serve`: log in with the one-time URL; a streamed answer then a
// write card, approved with a click; a second card approved on the command
// line, which the page shows without a click; hostile model output shown
// inert.
func TestBrowserAgainstRealServe(t *testing.T) {
	p := newE2EPage(t) // skips (or fails under CI) before anything starts

	var exfil atomic.Int64
	trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exfil.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer trap.Close()
	hostile := "# Report\n" +
		"<script>window.__pwned=1</script>\n" +
		"<img src=x onerror=\"window.__pwned=2\">\n" +
		"![x](" + trap.URL + "/exfil)\n" +
		"<img src=\"" + trap.URL + "/exfil?raw\">\n" +
		"End of report.\n"
	var hostileText []string
	for i := 0; i < len(hostile); i += 7 { // cut mid-tag
		hostileText = append(hostileText, hostile[i:min(i+7, len(hostile))])
	}

	gate := make(chan struct{})
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) })
	first := llmtest.OpenAIStream(llmtest.Turn{
		Text:  []string{"Let me ", "write that ", "file for you. "},
		Calls: []llmtest.CallScript{{ID: "call_1", Name: "write_file", Fragments: []string{`{"path":"hel`, `lo.txt","content":"hi"}`}}},
	})
	r := newTestRuntime(t, "smart")
	t.Setenv("OPENAI_API_KEY", "sk-test-E2EKEY0123456789")
	model := newE2EModel(t,
		// The text streams, then the reply stops (the turn is still
		// running) until the test saw the fragments; then the write.
		e2eReply{chunks: first, gate: gate, gateAt: 4},
		e2eReply{chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"I wrote ", "**hello.txt** ", "for you."}})},
		e2eReply{chunks: llmtest.OpenAIStream(toolCall("call_2", "write_file", `{"path":"second.txt","content":"two"}`))},
		e2eReply{chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Second file ", "written."}})},
		e2eReply{chunks: llmtest.OpenAIStream(llmtest.Turn{Text: hostileText})},
	)
	r.Config.Model.Provider = "openai"
	r.Config.Model.BaseURL = model.srv.URL + "/v1"
	r.Config.Memory.Capture = "off" // capture would take a scripted reply after each turn
	g := startGateway(t, r)

	// Login: the one-time URL leaves the browser at / with no token.
	if u, err := url.Parse(g.login); err != nil || u.Path != "/login" || u.Query().Get("t") == "" {
		t.Fatalf("login URL %q; want /login?t=…", g.login)
	}
	p.do(chromedp.Navigate(g.login))
	p.waitFor("the app to start", `document.body.dataset.ready === "1"`)
	href := e2eEval[string](p, `location.href`)
	if u, err := url.Parse(href); err != nil || u.Path != "/" || u.RawQuery != "" || strings.Contains(href, "t=") {
		t.Fatalf("after login the page is at %q; want %s/ with no token", href, g.base)
	}
	if c := e2eEval[string](p, `document.cookie`); c != "" {
		t.Errorf("page script can read cookies %q; the session cookie must be HttpOnly", c)
	}
	p.waitFor("live updates", `document.getElementById("live").textContent === "live"`)

	// Turn 1: streaming, seen while the model is held mid-reply.
	p.send("Please write hello.txt")
	p.waitFor("the streamed start of the answer", `(document.querySelector("#transcript .msg.assistant") || {textContent: ""}).textContent.includes("Let me write that file for you.")`)
	if n := e2eEval[int](p, `document.querySelectorAll("#transcript .usage, #transcript .card").length`); n != 0 {
		t.Fatalf("the turn shows %d cards or ends while the model is still replying", n)
	}
	if !e2eEval[bool](p, `document.getElementById("send").disabled`) {
		t.Errorf("Send is enabled while a turn streams")
	}
	openGate.Do(func() { close(gate) })

	card := `#transcript .card[data-status="pending"]`
	p.waitFor("the approval card", `document.querySelector('`+card+`')`)
	id := e2eEval[string](p, `document.querySelector('`+card+`').dataset.approvalId`)
	ap, err := r.Owner.Approval(context.Background(), id)
	if err != nil {
		t.Fatalf("the card's approval %q: %v", id, err)
	}
	card = `#transcript .card[data-approval-id="` + id + `"]`
	if plan := e2eEval[string](p, `document.querySelector('`+card+` pre.plan').textContent`); !strings.Contains(plan, "hello.txt") {
		t.Errorf("the card's plan reads %q; want it to name hello.txt", plan)
	}
	h := e2eEval[string](p, `document.querySelector('`+card+` .hash').textContent`)
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(h) || !strings.HasPrefix(ap.PlanHash, h) {
		t.Errorf("the card's hash reads %q; want the first 12 hex digits of %s", h, ap.PlanHash)
	}
	if workspaceFile(t, r, "hello.txt") != "" {
		t.Fatal("hello.txt was written before the card was answered")
	}
	p.screenshot("", "e2e-chat.png")
	p.screenshot(card, "e2e-approval-card.png")

	p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
	p.waitFor("the tool result", `[...document.querySelectorAll('#transcript .tool[data-status="ran"]')].some(e => e.textContent.includes("write_file"))`)
	p.waitFor("the final answer", `[...document.querySelectorAll("#transcript .msg.assistant strong")].some(e => e.textContent === "hello.txt")`)
	p.waitFor("the end of turn 1", `document.querySelectorAll("#transcript .usage").length === 1`)
	if got := workspaceFile(t, r, "hello.txt"); got != "hi" {
		t.Errorf("hello.txt holds %q; want the approved write, hi", got)
	}
	if st := e2eEval[string](p, `document.querySelector('`+card+`').dataset.status`); st != "approved" && st != "consumed" {
		t.Errorf("the clicked card's status is %q; want approved", st)
	}

	// Turn 2: the card is answered on the command line (a second Runtime
	// on the same home, as `homard approval approve ID` opens it).
	p.send("Now write second.txt")
	card2 := `#transcript .card[data-status="pending"]`
	p.waitFor("the second card", `document.querySelector('`+card2+`')`)
	id2 := e2eEval[string](p, `document.querySelector('`+card2+`').dataset.approvalId`)
	if id2 == id {
		t.Fatalf("the second turn shows the first card %s", id)
	}
	card2 = `#transcript .card[data-approval-id="` + id2 + `"]`
	cli, err := Open(context.Background(), r.Paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Owner.Approve(context.Background(), id2, "once"); err != nil {
		t.Fatalf("approve %s on the command line: %v", id2, err)
	}
	p.waitFor("the card to show the decision", `["approved", "consumed"].includes(document.querySelector('`+card2+`').dataset.status)`)
	if out := e2eEval[string](p, `document.querySelector('`+card2+` .outcome').textContent`); !strings.Contains(out, "answered elsewhere") {
		t.Errorf("the card's outcome reads %q; want it answered elsewhere", out)
	}
	if e2eEval[bool](p, `!document.querySelector('`+card2+` .actions').hidden`) {
		t.Errorf("the card answered on the command line still offers its buttons")
	}
	p.waitFor("the second final answer", `document.getElementById("transcript").textContent.includes("Second file written.")`)
	p.waitFor("the end of turn 2", `document.querySelectorAll("#transcript .usage").length === 2`)
	if got := workspaceFile(t, r, "second.txt"); got != "two" {
		t.Errorf("second.txt holds %q; want the write approved on the command line", got)
	}

	// Turn 3: hostile output reaches the page as text only.
	p.send("Summarise the report")
	p.waitFor("the end of turn 3", `document.querySelectorAll("#transcript .usage").length === 3`)
	p.do(chromedp.Sleep(500 * time.Millisecond)) // time for anything let in to load or run
	if v := e2eEval[string](p, `typeof window.__pwned`); v != "undefined" {
		t.Errorf("model output ran as code: typeof window.__pwned = %s", v)
	}
	if n := exfil.Load(); n != 0 {
		t.Errorf("the page fetched the model's image URL %d times", n)
	}
	if n := e2eEval[int](p, `document.querySelectorAll("#transcript img, #transcript script").length`); n != 0 {
		t.Errorf("the transcript holds %d img/script elements", n)
	}
	text := e2eTranscript(p)
	for _, want := range []string{
		"<script>window.__pwned=1</script>",
		`<img src=x onerror="window.__pwned=2">`,
		trap.URL + "/exfil",
		"End of report.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript does not show %q literally; it shows:\n%s", want, text)
		}
	}
	p.screenshot("", "e2e-hostile.png")

	if n := model.calls.Load(); n != 5 {
		t.Errorf("the model was called %d times; want 5 (two per approved write, one for the report)", n)
	}
}
