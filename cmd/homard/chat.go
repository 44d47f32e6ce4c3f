package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) chatCmd() *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "chat",
		Short: lang.N("Talk with the agent in a terminal UI"),
		Long: lang.N(`chat opens a full-screen conversation with the configured model. Each
message you send is one turn, decided exactly as with 'homard run': every
tool call the model proposes goes through the arbiter, and one line per call
shows its status (⋯ proposed, ✓ ran, ⏸ waits for approval, ✗ denied,
! failed). A call that needs your approval is shown as a card in the
conversation, with the exact plan, its risk and hash prefix; answer with a
key:

  o  approve once          s  approve for this session
  a  always (a scoped rule with an expiry)
  d  deny                  Esc  leave it pending (approve it later with
                                'homard approval approve ID')

A critical plan may only be approved once or denied.

Keys: Enter sends; Alt+Enter or Ctrl+J starts a new line; PgUp/PgDn
scroll; Ctrl+C cancels the running turn, or leaves when none runs.
Commands: /help, /new (a fresh session), /cancel (stop the running turn:
the model stream and a running tool), /budget (the last turn's tool calls,
units and tokens), /exit.

The conversation is kept per session, default "chat": run 'homard chat'
again to go on where you left off, or 'homard chat --session ID' to resume
another one (/new prints the id of the session it starts, and chat prints
the session you were in when you leave). A turn that is cancelled keeps
nothing of itself in the conversation; its tool calls are in the audit log.

When 'homard serve' runs on the same home, chat talks to it: the serve
runs the turns, and a card can be answered here or in a browser tab.

chat needs a terminal (at least 80×24 is comfortable). For scripts and
pipes, use 'homard run'.`),
		/* lang:en */ Example: `  homard chat
  homard chat --session kitchen`,
	}
	cmd.Flags().StringVar(&session, "session", "chat", lang.N("conversation `ID` to resume or start"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		if !c.terminal() {
			return usage(c.say.Errorf("chat needs a terminal on stdin and stdout; use `homard run \"TASK\"` in scripts and pipes"))
		}
		return c.withRuntime(func(ctx context.Context, r *app.Runtime, _ []string) error {
			last, err := r.Chat(ctx, app.ChatOptions{Session: session, In: c.stdin, Out: c.stdout})
			if last != "" {
				c.say.Fprintf(c.stderr, "session %s — resume with: homard chat --session %s\n", termtext.Line(last), termtext.Line(last))
			}
			return err
		})(ctx, nil)
	})
}

// terminal reports whether stdin and stdout are both terminals.
func (c *cli) terminal() bool {
	for _, f := range []any{c.stdin, c.stdout} {
		file, ok := f.(*os.File)
		if !ok || !term.IsTerminal(int(file.Fd())) {
			return false
		}
	}
	return true
}
