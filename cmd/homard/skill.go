package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) skillCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: lang.N("Install, review and trust skills: small programs the model may run, asking you first"),
		Long: lang.N(`A skill is a folder with SKILL.md (front matter "name" and a one-line
"description", then instructions) and skill.json (the program to run, a JSON
schema of its parameters, and the roots, hosts and secrets it needs).

  homard skill add ./weather     review a folder, then copy it into homard's home
  homard skill list              every installed skill and whether it is trusted
  homard skill show weather      its SKILL.md, permissions and red flags
  homard skill trust weather     accept it again after its files changed
  homard skill rm weather        delete it

The model sees each trusted skill's description, reads SKILL.md with
read_skill and runs it with run_skill: you are asked first (in smart mode),
its arguments are checked against the schema and passed as --name=value, and
it runs in a sandbox with only the permissions it declared; a secret is added
by homard's egress proxy and never given to the skill. What it writes to its
one "rw" root comes back as a change set, as for a command: ordinary files
are applied as a checkpoint (homard checkpoint rollback undoes them), a git
hook, a CI workflow or a sensitive file waits for your approval. Skills live in
homard's data folder, never in the current directory or a workspace. Each
installed tree is pinned by its hash: when a file changes, the skill is
withdrawn ("changed: needs trust") until you trust it again.`),
	}
	cmd.AddCommand(c.skillAddCmd(), c.skillListCmd(), c.skillShowCmd(), c.skillTrustCmd(), c.skillRmCmd())
	return cmd
}

func (c *cli) skillAddCmd() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "add PATH", // lang:en
		Short: lang.N("Review a skill folder (SKILL.md, permissions, red flags), then install and trust it"),
		Long: lang.N(`add reads the folder PATH and refuses symlinks, devices, sockets, FIFOs,
names with control or invisible characters, files over 1 MiB and more than 200
files. It prints SKILL.md (escaped: nothing in it can move your cursor or
hide text), the program, the permissions, the tree's hash and red flags:
downloads piped into a shell, long base64 blobs, and scripts that reach the
network themselves. Read them, then answer y. The files are copied into
homard's home exactly as shown (never linked to PATH).`),
		/* lang:en */ Example: `  homard skill add ./weather
  homard skill add ./weather --yes --json    # in a script, after reviewing it`,
	}
	cmd.Flags().BoolVar(&yes, "yes", false, lang.N("install without asking (review it first: this trusts the skill)"))
	jsonFlag(cmd, &asJSON, lang.N("print the installed skill as JSON (docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		rv, err := r.Extensions.SkillInspect(ctx, args[0])
		if err != nil {
			return err
		}
		question := c.say.Sprintf("install skill %s?", termtext.Line(rv.Name))
		if err := c.reviewSkill(rv, asJSON, yes, question, "skill add", c.say.T("not installed")); err != nil { // lang:en: a command
			return err
		}
		s, err := r.Extensions.SkillInstall(ctx, rv)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.stdout, s)
		}
		c.say.Fprintf(c.stdout, "installed and trusted %s (hash %s)\n", termtext.Line(s.Name), shortHash(s.Hash))
		return nil
	})
}

func (c *cli) skillListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List installed skills and their trust (trusted, changed: needs trust, …)")}
	load := func(ctx context.Context, r *app.Runtime) ([]app.SkillJSON, error) { return r.Extensions.SkillList(ctx) }
	return listCmd(c, cmd, lang.N("print a JSON array of skills (docs/JSON.md)"), load, listing[app.SkillJSON]{
		empty:  c.say.T("no skills; add one with `homard skill add PATH`"),
		header: "NAME\tSTATE\tHASH\tFLAGS\tDESCRIPTION",
		row: func(w io.Writer, s app.SkillJSON) {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", termtext.Line(s.Name), s.State, shortHash(s.Hash), len(s.Flags), termtext.Line(s.Description))
		},
	})
}

func (c *cli) skillShowCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "show NAME", Short: lang.N("Show an installed skill: SKILL.md, program, permissions, hash and red flags")} // lang:en
	load := func(ctx context.Context, r *app.Runtime, name string) (app.SkillReview, error) {
		return r.Extensions.SkillShow(ctx, name)
	}
	toJSON := func(rv app.SkillReview) app.SkillJSON { return rv.SkillJSON }
	return showCmd(c, cmd, lang.N("print the skill as JSON (docs/JSON.md)"), load, toJSON, c.printSkillReview)
}

func (c *cli) skillTrustCmd() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "trust NAME", // lang:en
		Short: lang.N("Review a skill whose files changed (or were copied in by hand) and trust it again"),
		Long: lang.N(`trust shows the skill as it is now, with the hash you trusted before and
the hash of its files today, and asks. Only the files shown are trusted: if
they change while you read, trust refuses and you run it again.`),
		/* lang:en */ Example: `  homard skill trust weather
  homard skill trust weather --yes    # in a script, after reviewing it`,
	}
	cmd.Flags().BoolVar(&yes, "yes", false, lang.N("trust without asking (review it first)"))
	jsonFlag(cmd, &asJSON, lang.N("print the trusted skill as JSON (docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		rv, err := r.Extensions.SkillShow(ctx, args[0])
		if err != nil {
			return err
		}
		if rv.Problem != "" {
			return c.say.Errorf("skill %s cannot be trusted: %s", termtext.Line(rv.Name), termtext.Line(rv.Problem))
		}
		question := c.say.Sprintf("trust skill %s with hash %s?", termtext.Line(rv.Name), shortHash(rv.Hash))
		if err := c.reviewSkill(rv, asJSON, yes, question, "skill trust", c.say.T("not trusted")); err != nil { // lang:en: a command
			return err
		}
		if err := r.Extensions.SkillTrust(ctx, rv.Name, rv.Hash); err != nil {
			return err
		}
		if asJSON {
			s, err := r.Extensions.SkillShowJSON(ctx, rv.Name)
			if err != nil {
				return err
			}
			return writeJSON(c.stdout, s)
		}
		c.say.Fprintf(c.stdout, "trusted %s (hash %s)\n", termtext.Line(rv.Name), shortHash(rv.Hash))
		return nil
	})
}

func (c *cli) skillRmCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rm NAME", Short: lang.N("Delete an installed skill and its trust")} // lang:en
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, name string) (string, error) {
		return "removed " + termtext.Line(name), r.Extensions.SkillRemove(ctx, name)
	})
}

// reviewSkill shows rv for review (on stderr when stdout carries JSON; not
// at all with both --json and --yes) and, without --yes, asks question
// (see confirm). A no is a usage error saying declined.
func (c *cli) reviewSkill(rv app.SkillReview, asJSON, yes bool, question, what, declined string) error {
	if !asJSON || !yes {
		c.printSkillReview(c.stderrOrStdout(asJSON), rv)
	}
	if yes {
		return nil
	}
	ok, err := c.confirm(question, what)
	if err != nil {
		return err
	}
	if !ok {
		return usageErr("%s", declined)
	}
	return nil
}

// stderrOrStdout is where a review goes: stderr when stdout carries JSON.
func (c *cli) stderrOrStdout(asJSON bool) io.Writer {
	if asJSON {
		return c.stderr
	}
	return c.stdout
}

// printSkillReview shows a skill for review. Everything from the skill's
// files goes through termtext.
func (c *cli) printSkillReview(w io.Writer, rv app.SkillReview) {
	c.say.Fprintf(w, "skill %s  (%s)\n", termtext.Line(rv.Name), rv.State)
	if rv.Problem != "" {
		c.say.Fprintf(w, "problem:     %s\n", termtext.Line(rv.Problem))
	}
	c.say.Fprintf(w, "hash:        %s  (%d files and folders)\n", rv.Hash, rv.Files)
	if rv.TrustedHash != "" && rv.TrustedHash != rv.Hash {
		c.say.Fprintf(w, "trusted:     %s  (the files changed since)\n", rv.TrustedHash)
	}
	c.say.Fprintf(w, "runs:        %s\n", termtext.Line(fmt.Sprintf("%q", rv.Entrypoint)))
	c.say.Fprintf(w, "parameters:  %s\n", orNone(rv.Parameters))
	roots := make([]string, 0, len(rv.Roots))
	for _, r := range rv.Roots {
		roots = append(roots, r.Name+" ("+r.Access+")")
	}
	c.say.Fprintf(w, "roots:       %s\n", orNone(roots))
	c.say.Fprintf(w, "hosts:       %s\n", orNone(rv.Hosts))
	c.say.Fprintf(w, "secrets:     %s\n", orNone(rv.Secrets))
	if len(rv.Flags) == 0 {
		c.say.Fprintln(w, "red flags:   none found (a scan is no proof: read the scripts)")
	} else {
		c.say.Fprintf(w, "red flags:   %d — read these lines before you accept\n", len(rv.Flags))
		for _, f := range rv.Flags {
			fmt.Fprintf(w, "  %s  %s:%d  %s\n", f.Kind, termtext.Line(f.File), f.Line, termtext.Line(f.Excerpt))
		}
	}
	if rv.Doc != "" {
		c.say.Fprintln(w, "----- SKILL.md -----")
		doc := termtext.Visible(rv.Doc)
		fmt.Fprint(w, doc)
		if !strings.HasSuffix(doc, "\n") {
			fmt.Fprintln(w)
		}
		c.say.Fprintln(w, "----- end of SKILL.md -----")
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return termtext.Line(strings.Join(s, ", "))
}
