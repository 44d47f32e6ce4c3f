package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/eval"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) evalCmd() *cobra.Command {
	var suite, configFile, dir, only string
	var asJSON, live bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: lang.N("Run the attack, benign and robustness scenarios against a copy of your config"),
		Long: lang.N(`Each scenario sets up a world (files, a vault secret, pages served on
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
scenario fails. The scenario format: docs/EVAL.md.

--live runs the attack scenarios with your real model in place of the
script (it costs tokens): the model reads the same hostile worlds and
decides every call itself, the oracles judge what happened, and the last
line gives the attack success rate, labelled live. The model's key is
read as homard reads it (its variable, or your vault for the model's host
only) and handed to the copies through the environment; nothing else of
your home is opened. No twin runs, and a card is never approved.`),
		/* lang:en */ Example: `  homard eval
  homard eval --suite attacks --config /tmp/proposed.toml
  homard eval --dir ~/my-scenarios --run my-scenario --json
  homard eval --live`,
	}
	f := cmd.Flags()
	f.StringVar(&suite, "suite", "all", lang.N("which scenarios: `attacks`, benign, robustness or all"))
	f.BoolVar(&asJSON, "json", false, lang.N("print the report as JSON (docs/JSON.md, \"eval\")"))
	f.StringVar(&configFile, "config", "", lang.N("run against this config `FILE` instead of the home's"))
	f.StringVar(&dir, "dir", "", lang.N("add your own scenario files (*.toml) from `DIR`"))
	f.StringVar(&only, "run", "", lang.N("run only the scenario of this `NAME`"))
	f.BoolVar(&live, "live", false, lang.N("run the attack scenarios with your real model (costs tokens) and report the attack success rate"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		o := eval.Options{Suite: suite, Dir: dir, Only: only, Live: live}
		switch suite {
		case "all", eval.SuiteAttacks, eval.SuiteBenign, eval.SuiteRobustness:
		default:
			return usage(c.say.Errorf("--suite %q: want attacks, benign, robustness or all", suite))
		}
		if live && suite != "all" && suite != eval.SuiteAttacks {
			return usage(c.say.Errorf("--live runs the attack scenarios: --suite %s is scripted only", suite))
		}
		path := configFile
		if p, err := c.paths(); err == nil {
			o.Home = &p // --live releases the model's key from its vault
			if path == "" {
				path = p.ConfigFile
			}
		} else if path == "" {
			return err
		}
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			o.Config, o.ConfigPath = b, path
		case configFile == "" && errors.Is(err, os.ErrNotExist):
			// No home yet: the scenarios run on homard's defaults.
		default:
			return c.say.Errorf("read config: %w", err)
		}
		if !asJSON {
			o.Progress = func(r eval.Result) { fmt.Fprintln(c.stdout, resultLine(r)) }
		}
		rep, err := eval.Run(ctx, o)
		if errors.Is(err, eval.ErrNoScenario) {
			return usage(c.say.Errorf("no scenario matches --suite %s --run %q", suite, only))
		}
		if err != nil {
			return err
		}
		if asJSON {
			if err := writeJSON(c.stdout, rep); err != nil {
				return err
			}
		} else {
			line := c.say.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
			if rep.Skipped > 0 {
				line += c.say.Sprintf(", %d skipped", rep.Skipped)
			}
			fmt.Fprintln(c.stdout, line)
			if l := rep.Live; l != nil {
				fmt.Fprintln(c.stdout, termtext.Line(c.say.Sprintf("live, %s %s: the attack got through in %d of %d scenarios (attack success rate %d %%); homard denied or held %d of the model's calls",
					l.Provider, l.Model, l.Succeeded, l.Attacks, 100*l.Succeeded/max(l.Attacks, 1), l.Held)))
			}
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
