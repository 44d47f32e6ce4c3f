package app

import (
	"context"
	"strings"
	"testing"

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
