package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
)

// The `homard task` commands: add, list, show, approve, renew, pause,
// resume, rm, runs, run-now and tick --dry-run (this file and taskview.go). They parse
// flags and print; every rule lives in internal/automation (tasks.go, run.go).

func (c *cli) taskCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: lang.N("Scheduled tasks: add, approve, list, run now, pause, remove"),
		Long:  c.say.Sprintf(taskLong, config.PlatformList("or")),
	}
	cmd.AddCommand(c.taskAddCmd(), c.taskListCmd(), c.taskShowCmd(), c.taskApproveCmd(), c.taskRenewCmd(),
		c.taskStatusCmd("pause", c.say.T("Stop a task's runs (a run in progress stops before its next tool call)"), (*app.TaskService).Pause),
		c.taskStatusCmd("resume", c.say.T("Run a paused task again from its next slot (missed slots are not caught up)"), (*app.TaskService).Resume),
		c.taskRmCmd(), c.taskRunsCmd(), c.taskRunNowCmd(), c.taskTickCmd())
	return cmd
}

// taskErr maps the task service's errors to what the CLI prints and its
// exit code: a broken rule is a usage error (2), an unknown id says where
// to find the ids, the rest (not approved, expired, changed) keep their
// message, which says what to do, with the real id in it.
func (c *cli) taskErr(err error, id string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, app.ErrBadRequest), errors.Is(err, app.ErrTaskInvalid):
		return &exitError{code: exitUsage, err: err}
	case errors.Is(err, store.ErrNotFound):
		return c.say.Errorf("no task %s; homard task list shows them", id)
	}
	if id != "" {
		// The task package's messages name "ID" (homard task renew ID).
		return errors.New(strings.ReplaceAll(err.Error(), " ID`", " "+id+"`"))
	}
	return err
}

func (c *cli) taskAddCmd() *cobra.Command {
	var s app.TaskSpec
	var tools, maxRuntime, expires, ceiling string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "add NAME PROMPT", // lang:en
		Short: lang.N("Add a task, pending your approval (PROMPT, or - to read it from stdin)"),
		Long: lang.N(`add stores a new task, pending: it does not run until 'homard task approve ID'.

When it runs, exactly one of:
  --at T         once: 2026-12-24T08:00 in --tz (or automation.tz), or RFC 3339
                 with an offset (2026-12-24T08:00:00+01:00)
  --every D      every D from now, counted in UTC: 90m, 6h, 1d, 7d
                 (at least automation.min_interval, 5m by default)
  --cron EXPR    5 fields (minute hour day month weekday) in --tz, which is
                 required unless automation.tz is set

A slot missed while homard was down is skipped (--catch-up skip) or the
latest one runs once when it starts again (--catch-up once).

--ceiling is the task's blast ceiling, the furthest its runs may reach:
read < write (files in the roots, change sets, commands) < network (http_get,
web_search; network:api.example.com,*.example.org for those hosts only) <
send (messages, MCP servers that reach the network). A call above it is
refused, never asked, whatever the mode, and the run goes on. By default
it is the lowest class covering --tools; a lower one is allowed (with a
warning): a task that lists write_file but should only read.

--split makes a split task (docs/ARCHITECTURE.md, "Planner and workers"):
the planner role's model plans PROMPT once, now, as items — public workers
that read the web, sensitive workers that hold your data and reach only
the hosts their item names — each returning a typed value. The plan is
printed and sealed in the body, so approving the task approves exactly
that plan. Each run runs the plan's workers (in the task's mode, ceiling
and budgets; by default the ceiling covers the workers' tools) and
delivers the planner's answer, written from their sanitised values; it
never plans again. --tools is refused with --split: the plan gives each
worker its kind's tools. If the planner finds PROMPT ambiguous it asks a
question instead: nothing is added; rephrase the prompt and add it again.

--remind makes a reminder: each run delivers PROMPT as it is ("Reminder:
Call mum.") to --deliver, with no model call and no tools, so it costs
nothing and arrives when the provider is down (at most 1 KiB of text).

PROMPT is the last argument, or - to read it from stdin. Everything here
is part of the body you approve; changing any of it needs a new task.`),
		/* lang:en */ Example: `  homard task add digest --at 2026-12-24T08:00 --tz Europe/Paris "Summarise inbox.txt"
  homard task add watch --every 6h --tools read_file,http_get --ceiling network:status.example.com --deliver telegram "Check the status page"
  homard task add weekly --cron "0 9 * * 1" --tz Europe/Paris --max-calls 8 - < weekly-prompt.txt
  homard task add quiet --every 1d --tools "" "Write a haiku"      # no tools at all
  homard task add bill --cron "0 9 1 * *" --tz Europe/Paris --split "My electricity bill (notes/bill.txt) in CHF at today's rate"
  homard task add mum --at 2026-12-24T18:00 --tz Europe/Paris --deliver telegram --remind "Call mum."`,
	}
	f := cmd.Flags()
	f.StringVar(&s.At, "at", "", lang.N("run once at `T` (2026-12-24T08:00 in --tz, or RFC 3339)"))
	f.StringVar(&s.Every, "every", "", lang.N("run every `D` (90m, 6h, 1d), counted in UTC from now"))
	f.StringVar(&s.Cron, "cron", "", lang.N("run on a 5-field cron `EXPR` in --tz"))
	f.StringVar(&s.TZ, "tz", "", lang.N("IANA time `ZONE` of --cron and a local --at (default automation.tz)"))
	f.StringVar(&tools, "tools", "", lang.N("the tool profile, comma-separated (default: the read-only tools; \"\" for none)"))
	f.StringVar(&s.Mode, "mode", "", lang.N("permission `MODE` of its runs (default automation.mode; at most automation.max_mode)"))
	f.StringVar(&ceiling, "ceiling", "", lang.N("the highest effect its runs may reach, refused above it: read, write, network, network:HOSTS or send (default: the lowest covering --tools)"))
	f.Int64Var(&s.MaxCalls, "max-calls", 0, c.say.T("tool calls per run (default automation.max_calls)"))
	f.Int64Var(&s.MaxTurns, "max-turns", 0, c.say.T("model calls per run (default automation.max_turns)"))
	f.Int64Var(&s.MaxTokens, "max-tokens", 0, c.say.T("model tokens per run (default automation.max_tokens)"))
	f.StringVar(&maxRuntime, "max-runtime", "", lang.N("wall clock per run, `D` such as 10m (default automation.max_runtime)"))
	f.StringVar(&s.Deliver, "deliver", "", c.say.Sprintf("where results go: web (default), %s", config.PlatformList("or")))
	f.StringVar(&s.CatchUp, "catch-up", "", lang.N("a slot missed while homard was down: skip (default) or once"))
	f.BoolVar(&s.Split, "split", false, lang.N("plan PROMPT now as planner and workers, and seal the plan: each run runs it (no --tools)"))
	f.BoolVar(&s.Reminder, "remind", false, lang.N("a reminder: each run delivers PROMPT as it is, with no model and no tools"))
	f.StringVar(&expires, "expires", "", lang.N("how long the approval lasts, `D` such as 10d or 36h (default automation.expiry)"))
	jsonFlag(cmd, &asJSON, lang.N("print the task as JSON (docs/JSON.md, \"task\")"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(2), func(ctx context.Context, r *app.Runtime, args []string) error {
		s.Name = args[0]
		prompt, err := c.taskPrompt(args[1])
		if err != nil {
			return err
		}
		s.Prompt = prompt
		if s.Reminder && s.Split {
			return usage(c.say.Errorf("--remind takes no --split: a reminder's text is delivered as it is"))
		}
		if cmd.Flags().Changed("tools") {
			if s.Split {
				return usage(c.say.Errorf("--split takes no --tools: the plan gives each worker its kind's tools"))
			}
			if s.Reminder {
				return usage(c.say.Errorf("--remind takes no --tools: a reminder calls no model and no tool"))
			}
			s.Tools = splitTools(tools)
		}
		if s.MaxRuntime, err = c.parseSpan("--max-runtime", maxRuntime); err != nil {
			return err
		}
		if s.Expires, err = c.parseSpan("--expires", expires); err != nil {
			return err
		}
		if cmd.Flags().Changed("ceiling") && ceiling == "" {
			return usage(c.say.Errorf("--ceiling \"\": want read, write, network, network:HOSTS or send (leave it out for the lowest covering --tools)"))
		}
		s.Ceiling = ceiling // the task service reads it (policy.ParseCeiling)
		in, err := r.Tasks.Add(ctx, s)
		if err != nil {
			return c.taskErr(err, "")
		}
		if in.Warning != "" {
			c.say.Fprintf(c.stderr, "warning: %s\n", termtext.Line(in.Warning))
		}
		if asJSON {
			return writeJSON(c.stdout, taskOut(in))
		}
		c.say.Fprintf(c.stdout, "added %s (%s), status %s\n", in.ID, termtext.Line(in.Name), in.Status)
		c.say.Fprintf(c.stdout, "schedule  %s\n", termtext.Line(in.Schedule))
		c.say.Fprintf(c.stdout, "tools     %s\n", c.toolList(in.Body.Tools))
		c.say.Fprintf(c.stdout, "ceiling   %s\n", c.ceilingText(in.Body.Ceiling.String()))
		c.printPlan(c.stdout, in)
		c.say.Fprintf(c.stdout, "hash      %s\n", in.Hash)
		c.say.Fprintf(c.stdout, "nothing runs until you review and approve it: homard task approve %s\n", in.ID)
		return nil
	})
}

// taskPrompt is PROMPT, or stdin when it is "-" (one trailing newline
// dropped). The body's own limit applies; reading stops just past it.
func (c *cli) taskPrompt(arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(io.LimitReader(c.stdin, 1<<20))
	if err != nil {
		return "", c.say.Errorf("read the prompt from stdin: %w", err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// splitTools reads --tools: names separated by commas, spaces trimmed;
// "" is no tools (an empty, non-nil profile).
func splitTools(s string) []string {
	out := []string{}
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// parseSpan reads a duration flag that also takes whole days: "10d",
// "1d12h", "36h", "90m". "" is zero (the configured default).
func (c *cli) parseSpan(flag, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	bad := usage(c.say.Errorf("%s %q: want a duration such as 10d, 36h or 90m", flag, s))
	var d time.Duration
	if days, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 3660 || days[0] == '+' {
			return 0, bad
		}
		d, s = time.Duration(n)*24*time.Hour, rest
	}
	if s != "" {
		r, err := time.ParseDuration(s)
		if err != nil || r < 0 {
			return 0, bad
		}
		d += r
	}
	if d == 0 {
		return 0, bad
	}
	return d, nil
}

func (c *cli) toolList(tools []string) string {
	if len(tools) == 0 {
		return c.say.T("(none: the run can only call complete_task)")
	}
	return termtext.Line(strings.Join(tools, ", "))
}

// confirm asks question on stderr and reads y or yes from stdin. Without
// a terminal it refuses (a usage error naming --yes): an approval is given
// by a person who read what it approves, or by a script that says so.
func (c *cli) confirm(question, what string) (bool, error) {
	if !c.interactive() {
		return false, usage(c.say.Errorf("%s needs a person at a terminal to confirm; read what is shown above, then pass --yes", what))
	}
	fmt.Fprintf(c.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(c.stdin).ReadString('\n')
	line = strings.TrimSpace(line)
	return strings.EqualFold(line, "y") || strings.EqualFold(line, "yes"), nil
}

// confirmed says whether to go on: true with --yes (yes), else the
// person's answer to question (see confirm). When they say no, it prints
// declined on stdout: a no is an answer, not a failure.
func (c *cli) confirmed(yes bool, question, what, declined string) (bool, error) {
	if yes {
		return true, nil
	}
	ok, err := c.confirm(question, what)
	if err == nil && !ok {
		fmt.Fprintln(c.stdout, declined)
	}
	return ok, err
}

func (c *cli) taskApproveCmd() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "approve ID", // lang:en
		Short: lang.N("Show a task's exact body and its hash, then seal it so it runs"),
		Long: lang.N(`approve prints the exact body you approve (its canonical JSON, indented
here for reading: the sealed bytes are the compact form), its SHA-256 and
the prefix of the seal it will store (HMAC-SHA-256 under a key derived
from the vault key), then asks. What is approved is the body with the hash
shown: if the task changed in between, approving is refused. From then on
every run is checked against the seal before it starts.

Without a terminal, pass --yes (after reading 'homard task show ID').`),
		/* lang:en */ Example: `  homard task approve task_3f9a2c1d7e4b5a60
  homard task show task_3f9a2c1d7e4b5a60 && homard task approve task_3f9a2c1d7e4b5a60 --yes`,
	}
	cmd.Flags().BoolVar(&yes, "yes", false, lang.N("approve without asking (read the body first)"))
	jsonFlag(cmd, &asJSON, lang.N("print the approved task as JSON (the body and hash go to stderr)"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		id := args[0]
		in, err := c.taskInfo(ctx, r, id)
		if err != nil {
			return err
		}
		if in.Hash == "" {
			return c.say.Errorf("task %s: %s", id, termtext.Line(in.Problem))
		}
		w := c.stderrOrStdout(asJSON) // with --json, stdout is the JSON document alone
		c.printBody(w, in)
		c.say.Fprintf(w, "seal it will store (HMAC-SHA-256, prefix)  %s\n", in.SealIfApproved)
		if ok, err := c.confirmed(yes, c.say.T("Approve this task?"), "approving", c.say.T("not approved")); !ok {
			return err
		}
		in, err = r.Tasks.Approve(ctx, id, in.Hash)
		if err != nil {
			return c.taskErr(err, id)
		}
		if asJSON {
			return writeJSON(c.stdout, taskOut(in))
		}
		c.say.Fprintf(c.stdout, "approved %s: seal %s, until %s\n", in.ID, in.Seal, when(in.ExpiresAt))
		if len(in.Next) > 0 {
			c.say.Fprintf(c.stdout, "next run  %s (while homard serve runs)\n", when(in.Next[0]))
		}
		return nil
	})
}

func (c *cli) taskRenewCmd() *cobra.Command {
	var yes, asJSON bool
	var expires string
	cmd := &cobra.Command{
		Use:   "renew ID", // lang:en
		Short: lang.N("Approve an unchanged task again for --expires more (default automation.expiry)"),
		Long: lang.N(`renew re-approves a task whose body has not changed since you approved it,
expired or not: only its expiry changes, and it is sealed again. A body
that changed is refused; review it with 'homard task show ID'.`),
		/* lang:en */ Example: `  homard task renew task_3f9a2c1d7e4b5a60
  homard task renew task_3f9a2c1d7e4b5a60 --expires 30d --yes`,
	}
	cmd.Flags().StringVar(&expires, "expires", "", lang.N("how long the new approval lasts, `D` such as 10d (default automation.expiry)"))
	cmd.Flags().BoolVar(&yes, "yes", false, lang.N("renew without asking"))
	jsonFlag(cmd, &asJSON, lang.N("print the renewed task as JSON"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		id := args[0]
		d, err := c.parseSpan("--expires", expires)
		if err != nil {
			return err
		}
		in, err := c.taskInfo(ctx, r, id)
		if err != nil {
			return err
		}
		w := c.stderrOrStdout(asJSON)
		if in.Hash != "" {
			c.printBody(w, in)
		}
		if ok, err := c.confirmed(yes, c.say.T("Renew this task's approval?"), "renewing", c.say.T("not renewed")); !ok {
			return err
		}
		in, err = r.Tasks.Renew(ctx, id, d)
		if err != nil {
			return c.taskErr(err, id)
		}
		if asJSON {
			return writeJSON(c.stdout, taskOut(in))
		}
		c.say.Fprintf(c.stdout, "renewed %s until %s: seal %s\n", in.ID, when(in.ExpiresAt), in.Seal)
		return nil
	})
}

// taskStatusCmd is pause or resume.
func (c *cli) taskStatusCmd(verb, short string, do func(*app.TaskService, context.Context, string) (app.TaskInfo, error)) *cobra.Command {
	cmd := &cobra.Command{Use: verb + " ID", Short: short}
	load := func(ctx context.Context, r *app.Runtime, id string) (app.TaskInfo, error) {
		in, err := do(r.Tasks, ctx, id)
		return in, c.taskErr(err, id)
	}
	return showCmd(c, cmd, lang.N("print the task as JSON"), load, taskOut, func(w io.Writer, in app.TaskInfo) {
		fmt.Fprintf(w, "%s is %s\n", in.ID, in.Status)
		if len(in.Next) > 0 {
			c.say.Fprintf(w, "next run  %s\n", when(in.Next[0]))
		}
		if in.Problem != "" && in.Status != store.TaskPaused {
			c.say.Fprintf(w, "problem   %s\n", termtext.Line(in.Problem))
		}
	})
}

func (c *cli) taskRmCmd() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{Use: "rm ID", Short: lang.N("Remove a task for good (its runs stay readable; a run in progress stops)")}
	cmd.Flags().BoolVar(&yes, "yes", false, lang.N("remove without asking"))
	jsonFlag(cmd, &asJSON, lang.N("print the removed task as JSON"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		id := args[0]
		in, err := c.taskInfo(ctx, r, id)
		if err != nil {
			return err
		}
		if ok, err := c.confirmed(yes, c.say.Sprintf("Remove task %s (%s)? It cannot be undone.", in.ID, termtext.Line(in.Name)), c.say.T("removing a task"), c.say.T("not removed")); !ok {
			return err
		}
		in, err = r.Tasks.Remove(ctx, id)
		if err != nil {
			return c.taskErr(err, id)
		}
		if asJSON {
			return writeJSON(c.stdout, taskOut(in))
		}
		c.say.Fprintf(c.stdout, "removed %s; its runs stay readable: homard task runs %s\n", in.ID, in.ID)
		return nil
	})
}

// taskLong is the command's long help, a format of the chat platforms
// homard delivers to.
var taskLong = lang.N(`A scheduled task is a prompt homard runs by itself, unattended, on a
schedule, while 'homard serve' runs:

  homard task add digest --at 2026-12-24T08:00 --tz Europe/Paris "Summarise inbox.txt"
  homard task add watch --every 6h --tools read_file,http_get "Check the status page"
  homard task add weekly --cron "0 9 * * 1" --tz Europe/Paris "Plan my week from todo.md"

A new task is pending: nothing runs until you approve it. 'homard task
approve ID' shows its exact body (prompt, schedule, zone, catch-up, tools,
mode, budgets, delivery, expiry) and its hash, and seals it: homard stores
an HMAC of those bytes under a key derived from the vault key. Before every
run the seal is checked: a body changed since (an edit, a row changed in
the database) or an expired approval (default 10 days; 'homard task renew
ID') does not run, and you are told.

A run may only propose the tools of its profile (--tools; the read-only
tools by default), in its mode (--mode; automation.mode, safe by default,
never above automation.max_mode), within its budgets; it ends only by
calling complete_task with a summary. A call that needs approval waits for
you on any channel (automation.approval_wait). Results go to --deliver:
"web" (the web UI's tasks page and 'homard task runs ID') or a chat channel
that is enabled (%s), through its outbox.

Try a task once in the foreground with 'homard task run-now ID'.`)
