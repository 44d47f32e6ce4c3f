package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

// runOutput is what `homard run --json` prints.
type runOutput struct {
	Text    string   `json:"text"`
	Pending []string `json:"pending"`
	Usage   struct {
		Input  int `json:"input"`
		Output int `json:"output"`
		Cached int `json:"cached"`
	} `json:"usage"`
	Stopped string `json:"stopped"`
	// Tools are the tool calls of the turn, in order.
	Tools []runTool `json:"tools"`
}

func (c *cli) runCmd() *cobra.Command {
	var req channel.TurnRequest
	var asJSON bool
	var askMode string
	var sf splitFlags
	cmd := &cobra.Command{
		Use:   `run "TASK" | -`, // lang:en
		Short: lang.N("Run one turn of the agent on a task and print the answer"),
		Long: lang.N(`run sends TASK to the configured model as one turn of a conversation
(TASK "-" reads it from stdin, up to 8 MiB). A task longer than the model's
request budget (model.context_tokens, with the system prompt and tools) is
cut in its middle before the model sees it: a warning on stderr says by
how much. The model may propose tool calls; each one goes through the
arbiter exactly as with 'homard tool call' (strict decoding, hard limits,
policy, your permission mode, approval, a confined run, redaction, audit).
The answer is streamed to stdout as it arrives, with every control
character, escape sequence, bidi or invisible character shown as an escape
(\x1b, \u202e; a backslash before x, u, U or another escape is doubled),
so the model cannot drive your terminal. On a terminal, a card's header and prompt are drawn in
reverse video, which the model's text never is.

A call that needs your approval is asked about on the spot when homard runs
on a terminal: the exact plan, its hash prefix and risk are printed to
stderr and you answer once, session, always (a scoped rule with an expiry)
or deny; the turn then goes on with the result. Press Enter to leave the
call pending instead. With no terminal (or --ask never), the call is not
run: the model is told it waits, and after the answer homard lists the
approval ids. Approve one with 'homard approval approve ID', then run again
in the same session. --ask always reads the answers from stdin even when it
is not a terminal (one line per card: o, s, a, d or empty).

When 'homard serve' runs on the same home, the turn is handed to it and
followed from here (its cards can be answered here or in a browser tab);
otherwise a session in which another process runs a turn is refused.

The conversation is kept per session (--session, default cli): the next run
in the same session sees the earlier turns. What a session's turns teach
about you is captured for memory in one model call per memory.capture_every
turns (4 by default), made by the run that fills the batch. A run that fails or is
interrupted (Ctrl+C) stores nothing of its turn; tool calls it made are in
the audit log.

Each tool call is shown on stderr when the model proposes it ("tool NAME
starts:" and its arguments) and again once it is settled: the tool, the
first line of its plan, how homard decided (allowed by RULE, asked →
approved/denied, refused by RULE, waiting for approval ID), how it ended
(ran, error) and how long it took; a line "— step N —" marks each new
model step.

With --json, nothing is streamed; one JSON object is printed at the end
(docs/JSON.md, "run"):

  text      the answer
  pending   approval ids the turn waits for
  usage     tokens: input (cached included), output, cached
  stopped   why the loop stopped early (a budget); empty otherwise
  tools     the tool calls: name, plan, decision, rule, status, reason,
            approval_id (when pending), step

A model endpoint that does not answer, stalls or answers too slowly ends
the run with a message naming the setting that bounds it
(model.connect_timeout, first_event_timeout, idle_timeout,
request_timeout). Ctrl+C ends the run with "cancelled" (exit 130); a second
Ctrl+C kills it at once.

With --split, the task runs as a planner and workers that never share a
context: the planner (the [models.roles] planner model) sees the task once
and writes a plan of items — public workers read the web and nothing of
yours, sensitive workers read your files and reach only the hosts their
item names — and each item declares what it hands back (a number, a date,
a URL on an allowlist, yes/no, one short line, or an artifact shown to you
only). The plan is printed; you approve exactly it (at a terminal, or with
--plan-hash from a previous run's output); a plan that lets your data reach
a host is high risk and, with permissions.totp, needs --code. The planner
then writes the answer from the sanitised values only, so a web page cannot
talk to it.

Exit status: 0 answered, 3 some calls wait for approval, 2 usage error,
1 homard or the model endpoint failed, 130 interrupted.`),
		/* lang:en */ Example: `  homard run "summarise notes.txt"
  git diff | homard run -
  homard run "add tea to todo.md" --session kitchen
  homard run "list my files" --json`,
	}
	f := cmd.Flags()
	f.StringVar(&req.Session, "session", "", lang.N("conversation `ID` to continue (default cli)"))
	jsonFlag(cmd, &asJSON, lang.N("print one JSON object at the end instead of streaming"))
	f.BoolVar(&sf.on, "split", false, lang.N("run the task as a planner and workers that never share a context (see above)"))
	f.StringVar(&sf.planHash, "plan-hash", "", lang.N("with --split: approve the plan whose hash starts with this (12+ characters), as a previous run printed it"))
	f.StringVar(&sf.code, "code", "", lang.N("with --split: a code from your authenticator app, for a plan that needs one (permissions.totp)"))
	f.StringVar(&askMode, "ask", "auto", lang.N("ask about approvals inline: `auto` (on a terminal), always (read answers from stdin), never"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		req.Text = args[0]
		fromStdin := req.Text == "-"
		if fromStdin {
			if askMode == "always" {
				return usage(c.say.Errorf("run -: the task is read from stdin, so --ask always cannot read answers there; use --ask never, or pass the task as an argument"))
			}
			text, err := c.readTask(c.stdin)
			if err != nil {
				return err
			}
			req.Text = text
		}
		if sf.on {
			var ask func(context.Context, channel.Card) (channel.Choice, error)
			if askMode == "always" || (askMode == "auto" && c.interactive() && !fromStdin) {
				ask = c.askInline
			}
			return c.runSplit(ctx, r, req.Text, sf, ask)
		}
		if cut := r.MessageCut(req.Text); cut > 0 {
			c.say.Fprintf(c.stderr, "homard: warning: the task is %d characters; %d in its middle are cut before the model sees it, to fit model.context_tokens = %d (raise it if the model's window allows, or send less)\n",
				utf8.RuneCountInString(req.Text), cut, r.Config.Model.ContextTokens)
		}
		switch askMode {
		case "auto":
			// stdin held the task: there is no one left to ask there.
			if c.interactive() && !fromStdin {
				req.Ask = c.askInline
			}
		case "always":
			req.Ask = c.askInline
		case "never":
		default:
			return usage(c.say.Errorf("--ask %q: want auto, always or never", askMode))
		}
		var last string // the last streamed fragment, to end the line
		// The answer is the model's text: it streams through the one
		// printer, so it cannot drive the terminal or hide a card.
		text := termtext.NewWriter(c.stdout)
		endText := func() {
			text.Flush()
			if last != "" && !strings.HasSuffix(last, "\n") {
				fmt.Fprintln(c.stdout)
				last = "\n"
			}
		}
		tools := &toolLog{say: c.say}
		req.OnTool = tools.event
		if !asJSON {
			tools.w, tools.before = c.stderr, endText
			req.OnText = func(s string) {
				text.WriteString(s)
				if s != "" {
					last = s
				}
			}
			c.beforeAsk = endText
		}
		// One process runs every turn of this home: when serve runs,
		// the turn is handed to it and followed from here; otherwise it
		// runs here under the session's lock.
		rt, si, attached := r.TurnRuntime()
		if attached {
			c.say.Fprintf(c.stderr, "homard: homard serve (pid %d, %s) runs this turn\n", si.PID, si.URL)
		}
		res, err := rt.Turn(ctx, req)
		endText()
		tools.flush()
		if !attached {
			// This process ran the turn. Its session's turns are
			// captured for memory in batches of memory.capture_every
			// (the turn started that capture if this one filled a
			// batch); here, only sessions quiet for memory.capture_idle
			// are captured, so a run is one model call a step, not
			// one more for capture (Close waits for what started).
			_ = r.CaptureIdle(context.WithoutCancel(ctx))
		}
		if err != nil {
			return err
		}
		if asJSON {
			out := runOutput{Text: res.Text, Pending: res.Pending, Stopped: res.Stopped, Tools: tools.calls}
			if out.Tools == nil {
				out.Tools = []runTool{}
			}
			if out.Pending == nil {
				out.Pending = []string{}
			}
			out.Usage.Input, out.Usage.Output, out.Usage.Cached = res.Usage.Input, res.Usage.Output, res.Usage.Cached
			if err := writeJSON(c.stdout, out); err != nil {
				return err
			}
		} else {
			if res.Stopped != "" {
				c.say.Fprintf(c.stderr, "homard: stopped early: %s\n", res.Stopped)
			}
			for _, id := range res.Pending {
				id = termtext.Line(id)
				c.say.Fprintf(c.stdout, "waiting for approval: %s — homard approval approve %s, then run again\n", id, id)
			}
		}
		if len(res.Pending) > 0 {
			return &exitError{code: exitPending}
		}
		return nil
	})
}

// maxStdinTask caps a task read from stdin (`homard run -`).
const maxStdinTask = 8 << 20

// readTask reads a task from stdin, at most maxStdinTask bytes.
func (c *cli) readTask(stdin io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(stdin, maxStdinTask+1))
	if err != nil {
		return "", c.say.Errorf("run -: read the task from stdin: %w", err)
	}
	if len(b) > maxStdinTask {
		return "", usage(c.say.Errorf("run -: the task on stdin is longer than %d MiB", maxStdinTask>>20))
	}
	if !utf8.Valid(b) {
		return "", usage(c.say.Errorf("run -: the task on stdin is not UTF-8 text"))
	}
	return string(b), nil
}
