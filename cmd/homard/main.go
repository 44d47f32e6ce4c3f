// Command homard is a self-hosted personal AI agent runtime in which the
// model only ever proposes and homard decides. This command is its CLI: it
// parses flags and calls internal/app; all decisions live below it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/service"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/termtext"
)

// Exit codes, documented in `homard tool call --help` and docs/GUIDE.md.
const (
	exitOK      = 0
	exitFailure = 1 // homard itself failed (database, config)
	exitUsage   = 2 // bad flags or arguments
	exitPending = 3 // the call waits for the owner's approval
	exitDenied  = 4 // refused by a hard limit or policy
	exitToolErr = 5 // the tool ran and failed, or rejected its arguments
	// exitInterrupted is the shell's 128+SIGINT: Ctrl+C ended the command.
	exitInterrupted = 130
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	app.MaybeRunSandboxHelper() // first: a re-exec of homard may be the landlock sandbox helper
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// cli holds what every command shares.
type cli struct {
	home   string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	answers chan stdinLine // approval answers read from stdin, started on first use
	// say prints what a person reads in their language (internal/lang):
	// c.say.T("…"), c.say.Fprintf(w, "…", …). --json output never
	// goes through it.
	say       lang.Printer
	beforeAsk func() // ends a streamed line before a card is shown
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// The first Ctrl+C cancels the command's context: a turn stops, stores
	// nothing and the command ends with "cancelled" and exit 130. Once it
	// has, the signal's default is restored, so a second Ctrl+C kills the
	// process at once should anything still hold it up.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	context.AfterFunc(ctx, stop)
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, say: sayFor(args, os.Getenv)}
	root := c.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil {
		// Interrupted: whatever error the interruption caused is its echo.
		c.say.Fprintln(stderr, "homard: cancelled")
		return exitInterrupted
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "homard:", termtext.Visible(ee.err.Error()))
		}
		return ee.code
	}
	// An error may quote a path, a tool name or a provider's reply.
	fmt.Fprintln(stderr, "homard:", termtext.Visible(err.Error()))
	if isUsage(err) || errors.Is(err, app.ErrBadRequest) || errors.Is(err, app.ErrTaskInvalid) || errors.Is(err, service.ErrBadOption) || errors.Is(err, setup.ErrBadOption) {
		return exitUsage
	}
	return exitFailure
}

func (c *cli) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "homard",
		Short: lang.N("A personal AI agent runtime where the model proposes and homard decides"),
		Long: lang.N(`homard runs a language model's tool calls through a deterministic arbiter:
every call is validated strictly, checked against hard limits no mode can
lift, decided by policy and your permission mode, approved by you when
needed (bound to the exact plan's hash), run confined to your workspace,
redacted and written to a tamper-evident audit log.

Start with:
  homard setup                         connect a model: provider, key (tested,
                                       kept in the encrypted vault), mode, workspace
  homard tool list                     see the tools and their risk
  homard tool call read_file '{"path":"notes.txt"}'
  homard approval list                 calls waiting for you
  homard audit --verify                check the audit chain

Every command reads --home DIR (or $HOMARD_HOME); without it homard uses
the XDG directories (~/.config/homard, ~/.local/share/homard).

Tab completion: homard completion bash|zsh|fish prints the script for your
shell; homard completion SHELL --help says where to put it.`),
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints "homard version <build>" through cobra's own
		// printer. No SetVersionTemplate: a text/template anywhere makes
		// the linker keep every exported method (+2.5 MB, measured).
		Version: app.Build().String(),
	}
	root.PersistentFlags().StringVar(&c.home, "home", "", lang.N("put config, data and workspace under `DIR` (default $HOMARD_HOME, else XDG)"))
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usage(c.say.Errorf("%v\nsee `%s --help`", err, cmd.CommandPath()))
	})
	root.AddCommand(c.initCmd(), c.setupCmd(), c.toolCmd(), c.approvalCmd(), c.auditCmd(), c.checkpointCmd(), c.secretCmd(), c.memoryCmd(), c.providerCmd(), c.doctorCmd(), c.runCmd(), c.chatCmd(), c.serveCmd(), c.tokenCmd(), c.sessionCmd(), c.versionCmd(), c.loginCmd(), c.serviceCmd(), c.channelCmd(), c.pairCmd(), c.taskCmd(), c.mcpCmd(), c.skillCmd(), c.totpCmd(), c.recipientCmd(), c.policyCmd(), c.logsCmd(), c.evalCmd(), c.configCmd(), c.storeCmd())
	// cobra adds `completion` (bash, zsh, fish, powershell) when it runs;
	// added here, strictArgs covers it and the man pages list it. Its
	// scripts go where root's output goes at this point.
	root.SetOut(c.stdout)
	root.InitDefaultCompletionCmd()
	if c.say.Tag() == lang.ZH {
		root.SetUsageFunc(c.usageFunc)
		c.translateCobra(root)
	}
	c.strictArgs(root) // last: it covers every command added above
	return root
}

func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires exactly", "invalid argument"} { // lang:en: cobra's own errors
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func (c *cli) paths() (config.Paths, error) {
	return config.ResolvePaths(c.home, os.Getenv)
}

// open loads the runtime for commands that need it; o says what to leave
// out (app.Options). Once it has opened, an older config file is migrated
// (migrateConfig).
func (c *cli) open(ctx context.Context, o app.Options) (*app.Runtime, error) {
	p, err := c.paths()
	if err != nil {
		return nil, err
	}
	if o.StoreURL == "" {
		o.StoreURL = os.Getenv(config.StoreEnv)
	}
	r, err := app.Open(ctx, p, o)
	if err != nil {
		return nil, err
	}
	c.migrateConfig(p.ConfigFile)
	return r, nil
}

func (c *cli) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{Use: "version", Short: lang.N("Print the version, the commit it was built from and the platform")}
	jsonFlag(cmd, &asJSON, lang.N("print the build as JSON (version, revision, time, modified, go_version, platform)"))
	return leafCmd(cmd, cobra.NoArgs, func(_ context.Context, _ []string) error {
		b := app.Build()
		if asJSON {
			return writeJSON(c.stdout, b)
		}
		fmt.Fprintln(c.stdout, "homard", b)
		return nil
	})
}

// usage marks err, a message in the person's language, as a usage error
// (exit 2): usage(c.say.Errorf("…", …)).
func usage(err error) error { return &exitError{code: exitUsage, err: err} }
