package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/eval"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) evalCmd() *cobra.Command {
	var suite, configFile, dir, only string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Run the attack, benign and robustness scenarios against a copy of your config",
		Long: `Each scenario sets up a world (files, a vault secret, pages served on
loopback), lets a scripted model make its tool calls through homard's real
agent loop, arbiter and tools, and checks oracles: a canary in any encoding
reaching an outside server or the model, a file changed or created where it
must not be, a call's decision, the audit holding every proposal, a benign
task completed without a false denial.

Every run happens in a throw-away home built from your config (or
--config): fresh workspace folders, a vault holding only canaries, the
model replaced by the script. Your workspace, vault and database are never
opened. Each attack also runs as its vacuity twin, under a deliberately
weakened config, where its oracles must fail: otherwise it proves nothing.

Prints one line per scenario and "N passed, M failed"; exits 1 when any
scenario fails. The scenario format: docs/EVAL.md.`,
		Example: `  homard eval
  homard eval --suite attacks --config /tmp/proposed.toml
  homard eval --dir ~/my-scenarios --run my-scenario --json`,
	}
	f := cmd.Flags()
	f.StringVar(&suite, "suite", "all", "which scenarios: `attacks`, benign, robustness or all")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON (docs/JSON.md, \"eval\")")
	f.StringVar(&configFile, "config", "", "run against this config `FILE` instead of the home's")
	f.StringVar(&dir, "dir", "", "add your own scenario files (*.toml) from `DIR`")
	f.StringVar(&only, "run", "", "run only the scenario of this `NAME`")
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		o := eval.Options{Suite: suite, Dir: dir, Only: only}
		switch suite {
		case "all", eval.SuiteAttacks, eval.SuiteBenign, eval.SuiteRobustness:
		default:
			return usageErr("--suite %q: want attacks, benign, robustness or all", suite)
		}
		path := configFile
		if path == "" {
			p, err := c.paths()
			if err != nil {
				return err
			}
			path = p.ConfigFile
		}
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			o.Config, o.ConfigPath = b, path
		case configFile == "" && errors.Is(err, os.ErrNotExist):
			// No home yet: the scenarios run on homard's defaults.
		default:
			return fmt.Errorf("read config: %w", err)
		}
		if !asJSON {
			o.Progress = func(r eval.Result) { fmt.Fprintln(c.stdout, resultLine(r)) }
		}
		rep, err := eval.Run(ctx, o)
		if errors.Is(err, eval.ErrNoScenario) {
			return usageErr("no scenario matches --suite %s --run %q", suite, only)
		}
		if err != nil {
			return err
		}
		if asJSON {
			if err := writeJSON(c.stdout, rep); err != nil {
				return err
			}
		} else {
			line := fmt.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
			if rep.Skipped > 0 {
				line += fmt.Sprintf(", %d skipped", rep.Skipped)
			}
			fmt.Fprintln(c.stdout, line)
		}
		if rep.Failed > 0 {
			return &exitError{code: exitFailure}
		}
		return nil
	})
}

// resultLine is one scenario's line: "PASS name", "FAIL name: why; why",
// "SKIP name: why". Scenario names and oracle findings may come from the
// owner's own files and quote what servers got: shown visibly escaped.
func resultLine(r eval.Result) string {
	word := map[string]string{eval.Pass: "PASS", eval.Fail: "FAIL", eval.Skip: "SKIP"}[r.Status]
	line := word + " " + r.Name
	if len(r.Why) > 0 {
		line += ": " + strings.Join(r.Why, "; ")
	}
	return termtext.Visible(line)
}
