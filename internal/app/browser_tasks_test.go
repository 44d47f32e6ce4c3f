package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/homard/homard/internal/store"
)

// TestBrowserTasksPage: through the real `homard serve`, the Tasks view
// lists a pending task and an approved one; the pending task's body shows
// verbatim in a <pre>, its markup as text (a prompt holding an <img
// onerror> and a <script> runs nothing and loads nothing), with its hash
// and the seal it will get; Approve makes it active under that seal. The
// approved task's runs table shows a failed chat delivery with its error.
func TestBrowserTasksPage(t *testing.T) {
	p := newE2EPage(t) // skips (or fails under CI) before anything starts

	r := newTestRuntime(t, "smart")
	const prompt = `Summarise inbox.txt <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>`
	in := addPending(t, r, "digest", prompt)
	weekly := addApproved(t, r, TaskSpec{Name: "weekly", Prompt: "Check the backups", Every: "2h", Tools: []string{"read_file"}})
	recordRun(t, r, weekly.ID, "s1", "Backups are late.", "telegram", "chat not found (403)")
	g := startGateway(t, r)

	p.do(chromedp.Navigate(g.login))
	p.waitFor("the app to start", `document.body.dataset.ready === "1"`)
	p.do(chromedp.Navigate(g.base + "/#tasks"))
	p.waitFor("the task list", `document.querySelectorAll("#tasks-list li.task").length === 2`)
	item := `#tasks-list li[data-task-id="` + in.ID + `"]`
	if got := e2eEval[string](p, `document.querySelector('`+item+`').textContent`); !strings.Contains(got, "pending") ||
		!strings.Contains(got, "waiting for approval") {
		t.Errorf("the pending task's entry reads %q; want its status and why it will not run", got)
	}

	p.do(chromedp.Click(chromedp.CSS(item + ` button`)))
	detail := `#task-detail[data-task-id="` + in.ID + `"]`
	p.waitFor("the task", `document.querySelector('`+detail+` pre.task-body')`)
	if body := e2eEval[string](p, `document.querySelector('`+detail+` pre.task-body').textContent`); body != in.Canonical {
		t.Errorf("the page shows the body\n%s\nwant it verbatim\n%s", body, in.Canonical)
	}
	if h := e2eEval[string](p, `document.querySelector('`+detail+` .task-hash').textContent`); h != in.Hash {
		t.Errorf("the page shows the hash %q; want %s", h, in.Hash)
	}
	if s := e2eEval[string](p, `document.querySelector('`+detail+` .task-seal-next').textContent`); s != in.SealIfApproved {
		t.Errorf("the page shows the seal it will get as %q; want %s", s, in.SealIfApproved)
	}
	if n := e2eEval[int](p, `document.querySelectorAll("#view-tasks img, #view-tasks script").length`); n != 0 {
		t.Errorf("the tasks view holds %d img/script elements from the prompt", n)
	}
	p.screenshot("#view-tasks", "e2e-task-pending.png")

	p.do(chromedp.Click(chromedp.CSS(detail + ` button[data-action="approve"]`)))
	p.waitFor("the task to be active", `(document.querySelector('#task-detail') || {}).dataset.status === "active"`)
	now, err := r.Tasks.Info(context.Background(), in.ID)
	if err != nil || now.Status != store.TaskActive || now.Seal != in.SealIfApproved || now.Problem != "" {
		t.Fatalf("after Approve the task is %+v (%v); want active, sealed %s", now, err, in.SealIfApproved)
	}
	if e2eEval[bool](p, `!!document.querySelector('#task-detail button[data-action="approve"]')`) {
		t.Error("the approved task still offers Approve")
	}
	if v := e2eEval[string](p, `typeof window.__pwned`); v != "undefined" {
		t.Errorf("the prompt ran as code: typeof window.__pwned = %s", v)
	}

	p.do(chromedp.Click(chromedp.CSS(`#tasks-list li[data-task-id="` + weekly.ID + `"] button`)))
	p.waitFor("the runs table", `document.querySelector('#task-detail[data-task-id="`+weekly.ID+`"] table.runs')`)
	want := "telegram: failed — chat not found (403)"
	if got := e2eEval[string](p, `document.querySelector("#task-detail table.runs td.run-delivery").textContent`); got != want {
		t.Errorf("the run's delivery reads %q; want %q", got, want)
	}
	if got := e2eEval[string](p, `document.querySelector("#task-detail table.runs td.run-result").textContent`); got != "Backups are late." {
		t.Errorf("the run's summary reads %q; want Backups are late.", got)
	}
	p.screenshot("#view-tasks", "e2e-task-runs.png")
}

// TestBrowserTasksAddForm: through the real `homard serve`, the Tasks
// view's "Add a task" form adds a task from the page. A refused add shows
// the server's reason as text (markup in it stays text) and stores
// nothing. A good one is stored pending, from the web, and drawn as any
// pending task: its exact body (verbatim, the prompt's markup inert) and
// hash, and Approve, which makes it active under the seal it announced.
// A reminder at a local time is read in the zone the form filled in (the
// browser's).
func TestBrowserTasksAddForm(t *testing.T) {
	p := newE2EPage(t) // skips (or fails under CI) before anything starts

	r := newTestRuntime(t, "smart")
	g := startGateway(t, r)
	p.do(chromedp.Navigate(g.login))
	p.waitFor("the app to start", `document.body.dataset.ready === "1"`)
	p.do(chromedp.Navigate(g.base + "/#tasks"))
	p.waitFor("the empty list", `(document.querySelector("#tasks-list li.empty") || {}).textContent?.includes("No tasks yet")`)

	p.do(chromedp.Click(chromedp.CSS(`#task-add-open`)))
	p.waitFor("the form", `!document.getElementById("task-add").hidden && document.activeElement.id === "task-name"`)
	const prompt = `Summarise inbox.txt <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>`
	p.do(
		chromedp.SendKeys(chromedp.CSS(`#task-name`), `<b>digest</b>`),
		chromedp.SendKeys(chromedp.CSS(`#task-prompt`), prompt),
		chromedp.SendKeys(chromedp.CSS(`#task-when-value`), "2h"),
		chromedp.SetValue(chromedp.CSS(`#task-tools-mode`), "list"),
	)
	// SetValue fires no change event: the page's own listener enables the list.
	e2eEval[bool](p, `document.getElementById("task-tools-mode").dispatchEvent(new Event("change"))`)
	p.do(chromedp.SendKeys(chromedp.CSS(`#task-tools`), "read_file"))
	p.screenshot("#view-tasks", "e2e-task-add-form.png")
	p.do(chromedp.Click(chromedp.CSS(`#task-add-submit`)))
	p.waitFor("the refusal", `document.getElementById("task-add-outcome").textContent.includes("task name")`)
	if got := e2eEval[string](p, `document.getElementById("task-add-outcome").textContent`); !strings.Contains(got, `"<b>digest</b>"`) ||
		e2eEval[int](p, `document.querySelectorAll("#task-add b, #view-tasks img").length`) != 0 {
		t.Errorf("the refusal reads %q; want the server's words, the name's markup as text", got)
	}
	if list, _ := r.Tasks.List(context.Background()); len(list) != 0 {
		t.Fatalf("after a refused add there are %d tasks; want none", len(list))
	}

	// A mode above automation.max_mode is refused by the server, saying
	// what is allowed; its twin, a mode within it, is sealed with the
	// ceiling and expiry the form carried.
	e2eEval[string](p, `document.getElementById("task-name").value = ""`)
	p.do(
		chromedp.SendKeys(chromedp.CSS(`#task-name`), "digest"),
		chromedp.SendKeys(chromedp.CSS(`#task-mode`), "yolo"),
		chromedp.SendKeys(chromedp.CSS(`#task-ceiling`), "write"),
		chromedp.SendKeys(chromedp.CSS(`#task-expires`), "30d"),
	)
	p.do(chromedp.Click(chromedp.CSS(`#task-add-submit`)))
	p.waitFor("the mode's refusal", `document.getElementById("task-add-outcome").textContent.includes("max_mode")`)
	if list, _ := r.Tasks.List(context.Background()); len(list) != 0 {
		t.Fatalf("after a mode above max_mode there are %d tasks; want none", len(list))
	}
	e2eEval[string](p, `document.getElementById("task-mode").value = ""`)
	p.do(chromedp.SendKeys(chromedp.CSS(`#task-mode`), "safe"))
	p.do(chromedp.Click(chromedp.CSS(`#task-add-submit`)))
	p.waitFor("the pending task", `(document.querySelector('#task-detail') || {}).dataset?.status === "pending"`)
	list, err := r.Tasks.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("tasks after the add: %+v (%v); want one", list, err)
	}
	in := list[0]
	if in.Status != store.TaskPending || in.Origin != store.TaskFromWeb || in.Body.Prompt != prompt || strings.Join(in.Body.Tools, ",") != "read_file" ||
		in.Body.Sched.Kind != "every" || !strings.HasPrefix(in.Schedule, "every 2h") {
		t.Fatalf("stored %+v; want pending, from the web, the prompt as typed, every 2h, read_file", in)
	}
	if lasts := time.Until(in.Body.Expires); in.Body.Mode != "safe" || in.Body.Ceiling.String() != "write" || lasts < 29*24*time.Hour || lasts > 30*24*time.Hour {
		t.Fatalf("stored mode %q, ceiling %q, expiring %s; want the form's safe, write and 30 days", in.Body.Mode, in.Body.Ceiling, in.Body.Expires)
	}
	if !e2eEval[bool](p, `document.getElementById("task-add").hidden`) {
		t.Error("the form is still open after the add")
	}
	detail := `#task-detail[data-task-id="` + in.ID + `"]`
	if body := e2eEval[string](p, `document.querySelector('`+detail+` pre.task-body').textContent`); body != in.Canonical {
		t.Errorf("the page shows the body\n%s\nwant it verbatim\n%s", body, in.Canonical)
	}
	if c := e2eEval[string](p, `document.querySelector('`+detail+` .task-ceiling').textContent`); c != "write" {
		t.Errorf("the pending card's ceiling reads %q; want write", c)
	}
	if h := e2eEval[string](p, `document.querySelector('`+detail+` .task-hash').textContent`); h != in.Hash {
		t.Errorf("the page shows the hash %q; want %s", h, in.Hash)
	}
	if from := e2eEval[string](p, `document.querySelector('`+detail+` .task-from').textContent`); !strings.HasPrefix(from, "web") {
		t.Errorf("the task's From reads %q; want web", from)
	}
	if out := e2eEval[string](p, `document.querySelector('`+detail+` .outcome').textContent`); !strings.Contains(out, "nothing runs until you approve") {
		t.Errorf("the outcome reads %q; want it to say the task waits for approval", out)
	}
	p.waitFor("the list entry", `(document.querySelector('#tasks-list li[data-task-id="`+in.ID+`"] .task-origin') || {}).textContent === "from web"`)
	if n := e2eEval[int](p, `document.querySelectorAll("#view-tasks img, #view-tasks script").length`); n != 0 {
		t.Errorf("the tasks view holds %d img/script elements from the prompt", n)
	}
	p.screenshot("#view-tasks", "e2e-task-added.png")

	p.do(chromedp.Click(chromedp.CSS(detail + ` button[data-action="approve"]`)))
	p.waitFor("the task to be active", `(document.querySelector('#task-detail') || {}).dataset.status === "active"`)
	now, err := r.Tasks.Info(context.Background(), in.ID)
	if err != nil || now.Status != store.TaskActive || now.Seal != in.SealIfApproved || now.Origin != store.TaskFromWeb {
		t.Fatalf("after Approve the task is %+v (%v); want active, sealed %s, from the web", now, err, in.SealIfApproved)
	}
	p.waitFor("the list to say active", `(document.querySelector('#tasks-list li[data-task-id="`+in.ID+`"] .task-status') || {}).textContent === "active"`)
	if v := e2eEval[string](p, `typeof window.__pwned`); v != "undefined" {
		t.Errorf("the prompt ran as code: typeof window.__pwned = %s", v)
	}

	// A reminder once, at a local time in the zone the form filled in.
	p.do(chromedp.Click(chromedp.CSS(`#task-add-open`)))
	p.waitFor("the form again", `!document.getElementById("task-add").hidden`)
	zone := e2eEval[string](p, `document.getElementById("task-tz").value`)
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		t.Fatalf("the form's time zone is %q (%v); want the browser's", zone, err)
	}
	at := time.Now().In(loc).Add(48 * time.Hour).Truncate(time.Minute)
	p.do(
		chromedp.SendKeys(chromedp.CSS(`#task-name`), "mum"),
		chromedp.SendKeys(chromedp.CSS(`#task-prompt`), "Call mum."),
		chromedp.Click(chromedp.CSS(`#task-remind`)),
		chromedp.SetValue(chromedp.CSS(`#task-when`), "at"),
	)
	e2eEval[bool](p, `document.getElementById("task-when").dispatchEvent(new Event("change"))`)
	if typ := e2eEval[string](p, `document.getElementById("task-when-value").type + " " + document.getElementById("task-tools-mode").disabled`); typ != "datetime-local true" {
		t.Errorf("after choosing at and reminder the fields are %q; want a datetime-local and no tools to pick", typ)
	}
	p.do(chromedp.SetValue(chromedp.CSS(`#task-when-value`), at.Format("2006-01-02T15:04")))
	p.do(chromedp.Click(chromedp.CSS(`#task-add-submit`)))
	p.waitFor("the pending reminder", `(document.querySelector('#task-detail') || {}).dataset?.status === "pending" && document.querySelector('#task-detail h2').textContent.includes("mum")`)
	id := e2eEval[string](p, `document.getElementById("task-detail").dataset.taskId`)
	rem, err := r.Tasks.Info(context.Background(), id)
	if err != nil || !rem.Body.Reminder || len(rem.Body.Tools) != 0 || rem.Body.Sched.Expr != at.UTC().Format(time.RFC3339) || rem.Origin != store.TaskFromWeb {
		t.Errorf("the reminder is %+v (%v); want a reminder with no tools at %s, from the web", rem, err, at.UTC().Format(time.RFC3339))
	}
}
