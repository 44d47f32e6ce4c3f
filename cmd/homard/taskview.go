package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
)

// taskJSON is a task as `homard task list|show|add|approve … --json`
// print it. Body is the canonical body, the exact sealed value.
type taskJSON struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Owner          string          `json:"owner"`
	Status         string          `json:"status"`
	Origin         string          `json:"origin"`
	Schedule       string          `json:"schedule"`
	Body           json.RawMessage `json:"body"`
	Hash           string          `json:"hash"`
	Ceiling        string          `json:"ceiling"`
	Seal           string          `json:"seal"`
	SealIfApproved string          `json:"seal_if_approved"`
	ApprovedAt     *time.Time      `json:"approved_at"`
	ExpiresAt      *time.Time      `json:"expires_at"`
	NextRunAt      *time.Time      `json:"next_run_at"`
	Next           []time.Time     `json:"next"`
	Problem        string          `json:"problem"`
	LastRun        *taskRunJSON    `json:"last_run"`
}

func taskOut(in app.TaskInfo) taskJSON {
	body := json.RawMessage("null")
	if json.Valid([]byte(in.Canonical)) {
		body = json.RawMessage(in.Canonical)
	}
	next := make([]time.Time, 0, len(in.Next))
	for _, t := range in.Next {
		next = append(next, t.UTC())
	}
	out := taskJSON{ID: in.ID, Name: in.Name, Owner: in.Owner, Status: in.Status, Origin: in.Origin, Schedule: in.Schedule, Body: body,
		Hash: in.Hash, Ceiling: in.Body.Ceiling.String(), Seal: in.Seal, SealIfApproved: in.SealIfApproved, ApprovedAt: timeOrNull(in.ApprovedAt),
		ExpiresAt: timeOrNull(in.ExpiresAt), NextRunAt: timeOrNull(in.NextRunAt), Next: next, Problem: in.Problem}
	if in.LastRun != nil {
		r := taskRunOut(*in.LastRun)
		out.LastRun = &r
	}
	return out
}

// taskRunJSON is one run of `homard task runs ID --json` and
// `homard task run-now ID --json`.
type taskRunJSON struct {
	ID            int64           `json:"id"`
	TaskID        string          `json:"task_id"`
	Slot          string          `json:"slot"`
	SlotAt        time.Time       `json:"slot_at"`
	Status        string          `json:"status"`
	StartedAt     *time.Time      `json:"started_at"`
	EndedAt       *time.Time      `json:"ended_at"`
	Summary       string          `json:"summary"`
	Error         string          `json:"error"`
	Refused       string          `json:"refused"`
	Tokens        int64           `json:"tokens"`
	Usage         json.RawMessage `json:"usage"`
	Delivery      string          `json:"delivery"`
	DeliveryState string          `json:"delivery_state"`
	DeliveryError string          `json:"delivery_error"`
}

func taskRunOut(r store.TaskRun) taskRunJSON {
	usage := json.RawMessage("{}")
	if json.Valid(r.Usage) {
		usage = json.RawMessage(r.Usage)
	}
	return taskRunJSON{ID: r.ID, TaskID: r.TaskID, Slot: r.SlotKey, SlotAt: r.SlotAt.UTC(), Status: r.Status,
		StartedAt: timeOrNull(r.StartedAt), EndedAt: timeOrNull(r.EndedAt), Summary: r.Summary, Error: r.Error,
		Refused: r.Refused, Tokens: r.Tokens, Usage: usage, Delivery: r.Delivery, DeliveryState: r.DeliveryState, DeliveryError: r.DeliveryError}
}

// when is t for a person: local time, with UTC beside it when the local
// zone is another; "-" for the zero time.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	l := t.Local()
	s := l.Format("2006-01-02 15:04 MST") // lang:en: a layout
	if _, off := l.Zone(); off != 0 {
		s += " (" + t.UTC().Format("15:04 UTC") + ")" // lang:en: a layout
	}
	return s
}

// printBody prints the body the owner approves, indented for reading,
// and its hash. The prompt inside may hold anything: the one printer.
func (c *cli) printBody(w io.Writer, in app.TaskInfo) {
	var b bytes.Buffer
	text := in.Canonical
	if json.Indent(&b, []byte(in.Canonical), "", "  ") == nil {
		text = b.String()
	}
	c.say.Fprintf(w, "task %s (%s)  [%s]\n", termtext.Line(in.ID), termtext.Line(in.Name), in.Status)
	c.say.Fprintln(w, "body (its canonical JSON, indented here for reading; the sealed bytes are the compact form):")
	fmt.Fprintln(w, termtext.Visible(text))
	c.say.Fprintf(w, "sha256 of the body  %s\n", in.Hash)
}

func (c *cli) taskListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List your tasks (not removed ones): kind, where from, status, schedule, next run, last run, problem")}
	load := func(ctx context.Context, r *app.Runtime) ([]app.TaskInfo, error) { return r.Tasks.List(ctx) }
	return listCmd(c, cmd, lang.N("print a JSON array (docs/JSON.md, \"task\")"), load, listing[app.TaskInfo]{
		json:   jsonEach(taskOut),
		empty:  c.say.T(`no tasks; add one: homard task add NAME --every 1d "PROMPT"`),
		header: "ID\tNAME\tKIND\tFROM\tSTATUS\tSCHEDULE\tNEXT RUN\tLAST RUN\tPROBLEM", // lang:en: column names (tabwriter aligns bytes, not wide characters)
		row: func(w io.Writer, in app.TaskInfo) {
			last := "-"
			if in.LastRun != nil {
				last = in.LastRun.Status
			}
			next := "-"
			if len(in.Next) > 0 {
				next = when(in.Next[0])
			}
			problem := in.Problem
			if problem == "" {
				problem = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(in.ID), termtext.Line(in.Name), taskKind(in), termtext.Line(in.Origin), in.Status,
				termtext.Line(in.Schedule), next, last, termtext.Line(problem))
		},
	})
}

// taskKind is what a task's runs do: deliver a reminder's text, run a
// sealed split plan, or run a turn on its prompt.
func taskKind(in app.TaskInfo) string {
	switch {
	case in.Body.Reminder:
		return "reminder"
	case in.Body.Split != nil:
		return "split"
	}
	return "task"
}

func (c *cli) taskShowCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "show ID", Short: lang.N("Show a task: its body, hash, seal, next 3 runs, problem and last run")} // lang:en
	return showCmd(c, cmd, lang.N("print the task as JSON (docs/JSON.md, \"task\")"), c.taskInfo, taskOut, c.printTask)
}

// printTask shows a task in full: its body and hash (printBody), schedule,
// tools, budgets, seal, next runs, problem and last run.
func (c *cli) printTask(w io.Writer, in app.TaskInfo) {
	line := termtext.Line
	c.printBody(w, in)
	c.say.Fprintf(w, "schedule  %s\n", line(in.Schedule))
	b := in.Body
	c.say.Fprintf(w, "kind      %s\n", taskKind(in))
	c.say.Fprintf(w, "from      %s\n", c.originText(in.Origin))
	c.say.Fprintf(w, "tools     %s\n", c.toolList(b.Tools))
	c.say.Fprintf(w, "ceiling   %s\n", c.ceilingText(b.Ceiling.String()))
	c.printPlan(w, in)
	c.say.Fprintf(w, "mode      %s   deliver %s   catch-up %s\n", line(string(b.Mode)), line(b.Deliver), line(b.CatchUp))
	c.say.Fprintf(w, "budgets   %d tool calls, %d model calls, %d tokens, %v per run\n",
		b.Budgets.MaxCalls, b.Budgets.MaxTurns, b.Budgets.MaxTokens, b.Budgets.MaxRuntime)
	seal := in.Seal
	if seal == "" {
		seal = c.say.Sprintf("(not approved; approving would store %s)", in.SealIfApproved)
	}
	c.say.Fprintf(w, "seal      %s\n", seal)
	c.say.Fprintf(w, "approved  %s\n", when(in.ApprovedAt))
	c.say.Fprintf(w, "expires   %s\n", when(b.Expires))
	for i, t := range in.Next {
		label := "          "
		if i == 0 {
			label = c.say.T("next runs ")
		}
		fmt.Fprintf(w, "%s%s\n", label, when(t))
	}
	if in.Problem != "" {
		c.say.Fprintf(w, "problem   %s\n", line(in.Problem))
	}
	if lr := in.LastRun; lr != nil {
		c.say.Fprintf(w, "last run  %d %s, started %s: %s\n", lr.ID, lr.Status, when(lr.StartedAt), runResult(*lr, 100))
		if lr.Refused != "" {
			c.say.Fprintf(w, "refused   %s\n", c.refusedText(*lr, 100))
		}
	}
}

// originText says where a task came from, for a person.
func (c *cli) originText(origin string) string {
	switch origin {
	case "cli":
		return c.say.T("cli (homard task add)")
	case "web":
		return c.say.T("web (the web UI's tasks page)")
	case "chat":
		return c.say.T("chat (approved in a conversation)")
	}
	return termtext.Line(origin)
}

// printPlan shows a split task's sealed plan as a plan's card does
// (split.Plan.String: items, kinds, hosts, return types, its hash), made
// inert: the planner wrote it. Nothing for a normal task.
func (c *cli) printPlan(w io.Writer, in app.TaskInfo) {
	if in.Body.Split == nil {
		return
	}
	c.say.Fprintln(w, "split     each run runs this plan's workers, then the planner answers from their values:")
	fmt.Fprintln(w, termtext.Visible(in.Body.Split.String()))
}

// ceilingText is a task's blast ceiling (policy.Ceiling.String) for a
// person.
func (c *cli) ceilingText(ceiling string) string {
	if ceiling == "" {
		return c.say.T("none (sealed before ceilings: its tools and mode limit it)")
	}
	return termtext.Line(ceiling)
}

// refusedText is the calls refused during a run on one line of at most
// n characters, made inert: the first, and how many more; "-" for none.
func (c *cli) refusedText(r store.TaskRun, n int) string {
	if r.Refused == "" {
		return "-"
	}
	lines := strings.Split(r.Refused, "\n")
	s := lines[0]
	if len(lines) > 1 {
		s = c.say.Sprintf("%s (+%d more: --json)", s, len(lines)-1)
	}
	return shorten(s, n)
}

// taskInfo loads the task id, an error told as taskErr tells it.
func (c *cli) taskInfo(ctx context.Context, r *app.Runtime, id string) (app.TaskInfo, error) {
	in, err := r.Tasks.Info(ctx, id)
	return in, c.taskErr(err, id)
}

// runResult is a run's summary, or its error, on one line of at most n
// characters, made inert.
func runResult(r store.TaskRun, n int) string {
	s := r.Summary
	if r.Error != "" {
		s = r.Error
	}
	if s == "" {
		return "-"
	}
	return shorten(s, n)
}

// delivery says where a run's result went: web, or the platform with its
// outbox row's state ("telegram sent", "telegram failed: why").
func delivery(r store.TaskRun) string {
	switch {
	case r.Delivery == "":
		return "-"
	case r.Delivery == "web" || r.DeliveryState == "":
		return termtext.Line(r.Delivery)
	case r.DeliveryState == "failed":
		return termtext.Line(r.Delivery + " failed: " + r.DeliveryError)
	}
	return termtext.Line(r.Delivery + " " + r.DeliveryState)
}

func (c *cli) taskRunsCmd() *cobra.Command {
	var n int
	var asJSON bool
	cmd := &cobra.Command{Use: "runs ID", Short: lang.N("List a task's last runs: slot, status, duration, tokens, delivery, summary or error, refused calls")} // lang:en
	cmd.Flags().IntVarP(&n, "n", "n", 20, lang.N("how many runs, newest first"))
	jsonFlag(cmd, &asJSON, lang.N("print a JSON array (docs/JSON.md, \"task run\"), summaries whole"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		if n < 1 || n > 1000 {
			return usage(c.say.Errorf("-n %d: want 1 to 1000 runs", n))
		}
		runs, err := r.Tasks.Runs(ctx, args[0], n)
		if err != nil {
			return c.taskErr(err, args[0])
		}
		return listing[store.TaskRun]{
			json:   jsonEach(taskRunOut),
			empty:  c.say.Sprintf("no runs yet; try one now: homard task run-now %s", termtext.Line(args[0])),
			header: "RUN\tSLOT\tSTATUS\tSTARTED\tDURATION\tTOKENS\tDELIVERY\tSUMMARY OR ERROR\tREFUSED CALLS", // lang:en: column names (tabwriter aligns bytes, not wide characters)
			row: func(w io.Writer, run store.TaskRun) {
				dur := "-"
				if !run.EndedAt.IsZero() && !run.StartedAt.IsZero() {
					dur = run.EndedAt.Sub(run.StartedAt).Round(time.Second / 10).String()
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", run.ID, when(run.SlotAt), run.Status, when(run.StartedAt),
					dur, run.Tokens, delivery(run), runResult(run, 80), c.refusedText(run, 80))
			},
		}.print(c, runs, asJSON)
	})
}

func (c *cli) taskRunNowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "run-now ID", // lang:en
		Short: lang.N("Run one slot of an approved task now, in the foreground, and print how it ended"),
		Long: lang.N(`run-now runs the task once, here, exactly as a scheduled slot runs: the seal
and the expiry are checked first (a task not approved, changed or expired
is refused and nothing runs), then the model works within the task's tools,
mode and budgets until it calls complete_task. The run is recorded and its
result delivered like any other ('homard task runs ID').

Exit status: 0 the run succeeded, 1 it failed or was refused, 130 Ctrl+C
(the run is recorded as interrupted).`),
	}
	jsonFlag(cmd, &asJSON, lang.N("print the run as JSON (docs/JSON.md, \"task run\")"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		// Each tool call is a line on stderr, as in `homard run`.
		tools := &toolLog{say: c.say}
		if !asJSON {
			tools.w = c.stderr
		}
		run, err := r.Tasks.RunNow(ctx, args[0], tools.event)
		tools.flush()
		if err != nil {
			return c.taskErr(err, args[0])
		}
		if ctx.Err() != nil {
			return ctx.Err() // Ctrl+C: exit 130
		}
		if asJSON {
			if err := writeJSON(c.stdout, taskRunOut(run)); err != nil {
				return err
			}
		} else {
			c.say.Fprintf(c.stdout, "run %d %s (%d tokens, delivery %s)\n", run.ID, run.Status, run.Tokens, delivery(run))
			if run.Summary != "" {
				fmt.Fprintln(c.stdout, termtext.Visible(strings.TrimRight(run.Summary, "\n")))
			}
			if run.Refused != "" {
				c.say.Fprintln(c.stdout, "refused during the run:")
				fmt.Fprintln(c.stdout, termtext.Visible(run.Refused))
			}
		}
		if run.Status != store.TaskRunSucceeded {
			why := run.Error
			if why == "" {
				why = run.Status
			}
			return &exitError{code: exitFailure, err: c.say.Errorf("the run did not succeed: %s", why)}
		}
		return nil
	})
}

// taskPlanJSON is one line of `task tick --dry-run --json`
// (docs/JSON.md, "task plan").
type taskPlanJSON struct {
	TaskID  string `json:"task_id"`
	Name    string `json:"name"`
	Slot    string `json:"slot"` // RFC 3339; "" for refuse and none
	SlotKey string `json:"slot_key"`
	Action  string `json:"action"` // run, skip, refuse or none
	Why     string `json:"why"`
}

func (c *cli) taskTickCmd() *cobra.Command {
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "tick --dry-run", // lang:en
		Short: lang.N("Show what the scheduler would do now with each due task, and why (writes nothing)"),
		Long: lang.N(`tick --dry-run asks the scheduler what a tick now would do with each task
that is due: run a slot, skip it (missed while homard was down, the
previous run still running, the task's runs per day or the day's token
limit reached) or refuse it (its body does not decode), and why. Nothing is
claimed, run or written: the scheduler in 'homard serve' is what runs tasks.
A task not due yet is not listed; 'homard task list' shows the next runs.`),
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, lang.N("only show the plan (required)"))
	jsonFlag(cmd, &asJSON, lang.N("print a JSON array (docs/JSON.md, \"task plan\")"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if !dryRun {
			return &exitError{code: exitUsage, err: c.say.Errorf("task tick only plans: add --dry-run (homard serve runs the tasks)")}
		}
		plan, err := r.Tasks.Plan(ctx)
		if err != nil {
			return err
		}
		out := make([]taskPlanJSON, 0, len(plan))
		for _, p := range plan {
			j := taskPlanJSON{TaskID: p.TaskID, Name: p.Name, SlotKey: p.SlotKey, Action: p.Action, Why: p.Why}
			if !p.Slot.IsZero() {
				j.Slot = p.Slot.UTC().Format(time.RFC3339)
			}
			out = append(out, j)
		}
		if asJSON {
			return writeJSON(c.stdout, out)
		}
		if len(out) == 0 {
			c.say.Fprintln(c.stdout, "nothing is due now; homard task list shows the next runs")
			return nil
		}
		tw := c.table("ID\tNAME\tACTION\tSLOT\tWHY")
		for i, p := range plan {
			slot := "-"
			if !p.Slot.IsZero() {
				slot = when(p.Slot)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Line(out[i].TaskID), termtext.Line(p.Name), p.Action, slot, termtext.Line(p.Why))
		}
		return tw.Flush()
	})
}
