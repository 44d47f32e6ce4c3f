package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) memoryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: lang.N("Read, search and edit what homard remembers about you"),
		Long: lang.N(`homard's memory is a Markdown file you own: DATA/memory/OWNER/memory.md
(with --home DIR: DIR/data/memory/owner/memory.md; mode 0600). Open it in
any editor. Each unit is a section:

  ## m_3f9a2c1d7e4b
  - kind: preference
  - created: 2026-11-30T16:15:14Z
  - updated: 2026-11-30T16:15:14Z
  - source: owner
  - expires: 2027-01-31T00:00:00Z

  Prefers oolong tea without sugar.

kind is fact, preference or task; dates are RFC 3339 or 2026-11-30;
source is "owner" or the session that remembered it; expires is optional.
To add a unit by hand write "## new" and the text under it; homard gives
it an id on its next write. Delete a section to forget it.

The search index (SQLite FTS5; Chinese, Japanese and Korean as two-character
terms) is a projection of the file: it is reconciled when the file changed,
and "homard memory rebuild" recreates it. Text holding a secret (a key, a
token, a password, a one-time code) is never remembered. Only the owner's
own sessions can use memory; guests and group chats never read it.

Before each of your turns the few units most relevant to your message are
shown to the model as notes (data, not instructions; they cannot change
permissions). After every few turns, notes the model proposes wait in
"homard memory review" until a later capture proposes them again or you
accept them (memory.capture = "off" in config.toml turns this off).`),
	}
	cmd.AddCommand(c.memoryListCmd(), c.memorySearchCmd(), c.memoryAddCmd(), c.memoryForgetCmd(),
		c.memoryRebuildCmd(), c.memoryReviewCmd())
	return cmd
}

func (c *cli) memoryListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: lang.N("List every remembered unit, and sections of memory.md that cannot be read"),
		/* lang:en */ Example: `  homard memory list
  homard memory list --json | jq -r '.[] | select(.kind == "task") | .text'`,
	}
	jsonFlag(cmd, &asJSON, lang.N("print a JSON array (schema: docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		units, problems, err := r.Owner.MemoryList(ctx)
		if err != nil {
			return err
		}
		if asJSON {
			// Unreadable sections are not units: they are reported on
			// stderr, so stdout stays one document.
			for _, p := range problems {
				c.say.Fprintf(c.stderr, "homard: memory.md: unreadable (kept, not searchable): %s\n", termtext.Line(p.String()))
			}
			return unitListing(r.Owner.Now(), "").print(c, units, asJSON)
		}
		empty := c.say.T("no memory yet")
		if len(problems) > 0 {
			empty = "" // a table, even of no units, above what cannot be read
		}
		if err := unitListing(r.Owner.Now(), empty).print(c, units, asJSON); err != nil {
			return err
		}
		for _, p := range problems {
			c.say.Fprintf(c.stdout, "unreadable: %s\n", termtext.Line(p.String()))
		}
		if len(problems) > 0 {
			path, _ := r.Owner.MemoryPath()
			c.say.Fprintf(c.stdout, "fix the sections above in %s; they are kept but not searchable\n", termtext.Line(path))
		}
		return nil
	})
}

// unitListing prints memory units, judging their expiry at now; empty is
// the line printed when there are none ("" prints the header alone).
func unitListing(now time.Time, empty string) listing[app.MemoryUnit] {
	return listing[app.MemoryUnit]{
		json:   jsonEach(func(u app.MemoryUnit) memoryJSON { return memoryOut(u, now) }),
		empty:  empty,
		header: "ID\tKIND\tUPDATED\tEXPIRES\tSOURCE\tTEXT",
		row: func(w io.Writer, u app.MemoryUnit) {
			exp := "-"
			if !u.Expires.IsZero() {
				exp = u.Expires.Format(time.DateOnly)
				if u.Expired(now) {
					exp += " (expired)"
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(u.ID), u.Kind, u.Updated.Format(time.DateOnly), exp,
				termtext.Line(u.Source), shorten(u.Text, 80))
		},
	}
}

// shorten puts text on one line of at most n characters, as printed
// (hidden characters escaped, see termtext.Line).
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return termtext.Line(s)
}

func (c *cli) memorySearchCmd() *cobra.Command {
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search QUERY", // lang:en
		Short: lang.N("Search memory as the recall tool does (best match first, expired units left out)"),
		/* lang:en */ Example: "  homard memory search oolong\n  homard memory search 乌龙",
	}
	cmd.Flags().IntVar(&limit, "limit", 10, lang.N("most units to show (1 to 20)"))
	jsonFlag(cmd, &asJSON, lang.N("print a JSON array (schema: docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.MinimumNArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		units, err := r.Owner.MemorySearch(ctx, strings.Join(args, " "), limit)
		if err != nil {
			return err
		}
		return unitListing(r.Owner.Now(), c.say.T("no match")).print(c, units, asJSON)
	})
}

func (c *cli) memoryAddCmd() *cobra.Command {
	var kind string
	var ttlDays int
	cmd := &cobra.Command{
		Use:   "add TEXT", // lang:en
		Short: lang.N("Remember something (written to memory.md before it is reported)"),
		/* lang:en */ Example: "  homard memory add 'Prefers oolong tea without sugar' --kind preference\n  homard memory add 'Parking spot 42 this week' --kind task --ttl-days 7",
	}
	cmd.Flags().StringVar(&kind, "kind", "fact", lang.N("fact, preference or task"))
	cmd.Flags().IntVar(&ttlDays, "ttl-days", 0, lang.N("forget it after this many `DAYS` (0: never)"))
	return c.runtimeCmd(cmd, cobra.MinimumNArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		if ttlDays < 0 {
			return usage(c.say.Errorf("--ttl-days must not be negative"))
		}
		u, err := r.Owner.MemoryAdd(ctx, strings.Join(args, " "), kind, time.Duration(ttlDays)*24*time.Hour)
		switch {
		case errors.Is(err, app.ErrBadRequest) || errors.Is(err, app.ErrMemoryText):
			return usageErr("%v", err)
		case errors.Is(err, app.ErrMemorySecret):
			return &exitError{code: exitDenied, err: err}
		case err != nil:
			return err
		}
		c.say.Fprintf(c.stdout, "remembered %s (%s)\n", termtext.Line(u.ID), u.Kind)
		return nil
	})
}

func (c *cli) memoryForgetCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "forget ID", Short: lang.N("Remove one unit from memory.md and from the index")} // lang:en
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, id string) (string, error) {
		u, err := r.Owner.MemoryForget(ctx, id)
		return "forgot " + termtext.Line(u.ID), err
	})
}

func (c *cli) memoryRebuildCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rebuild", Short: lang.N("Recreate the search index from memory.md (safe to repeat)")}
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		st, err := r.Owner.MemoryRebuild(ctx)
		if err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "indexed %d units from %s\n", st.Indexed, termtext.Line(st.Path))
		for _, p := range st.Problems {
			c.say.Fprintf(c.stdout, "unreadable (kept, not indexed): %s\n", termtext.Line(p.String()))
		}
		return nil
	})
}

func (c *cli) memoryReviewCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: lang.N("Review notes homard proposes to remember from your conversations"),
		Long: lang.N(`After every few of your turns (with memory.capture = "on", the default;
memory.capture_every, 4) a model call without tools proposes short notes
about you: facts, preferences, tasks. A proposed note waits here
("buffered") and is remembered on its own when a later capture proposes it
again; buffered notes are dropped after
14 days. A preference that contradicts one already remembered (they share
a subject, as "prefers oolong tea" and "now prefers coffee, not tea") is
never written over it: it waits here ("review") for you to decide. Text
holding a secret is never proposed, stored or shown.

  homard memory review                      list what waits, with ids
  homard memory review accept ID            remember it now
  homard memory review accept ID --replace UNIT_ID
                                            remember it and forget UNIT_ID
                                            (the old preference) in one write
  homard memory review dismiss ID           drop it; it is not proposed again

Once a week (memory.review = "on", the default; memory.review_day, sunday,
at 09:00) homard serve asks the model, without tools, for duplicate,
contradicting and stale notes in memory.md, and looks for exact duplicates
itself (it still finds those when the model is down). What it proposes
waits here as one review, and in your direct chats as one card; nothing
changes until you approve. Approving edits only the notes a proposal
names; a note edited by hand since the review is left alone (run a new
review).

  homard memory review --now                review memory now
  homard memory review approve N|all        apply proposal N, or all of them
  homard memory review dismiss              drop the review's proposals
  homard memory review dismiss N            drop proposal N`),
	}
	var now bool
	cmd.Flags().BoolVar(&now, "now", false, lang.N("review memory now for duplicates, contradictions and stale notes"))
	cmd.AddCommand(c.memoryAcceptCmd(), c.memoryDismissCmd(), c.memoryApproveCmd())
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if now {
			return c.memoryReviewNow(ctx, r)
		}
		list, err := r.Owner.MemoryReview(ctx)
		if err != nil {
			return err
		}
		err = listing[app.MemoryCandidate]{
			empty:  c.say.T("no candidates"),
			header: "ID\tSTATUS\tKIND\tSEEN\tLAST SEEN\tSOURCE\tTEXT", // lang:en: column names (tabwriter aligns bytes, not wide characters)
			row: func(w io.Writer, k app.MemoryCandidate) {
				status := k.Status
				if k.ConflictsWith != "" {
					status += c.say.Sprintf(" (conflicts with %s)", k.ConflictsWith)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", termtext.Line(k.ID), termtext.Line(status), k.Kind, k.Seen,
					k.LastSeen.Format(time.DateOnly), termtext.Line(k.Source), shorten(k.Text, 80))
			},
		}.print(c, list, false)
		if err != nil {
			return err
		}
		return c.showMemoryReview(ctx, r)
	})
}

func (c *cli) memoryAcceptCmd() *cobra.Command {
	var replace string
	cmd := &cobra.Command{
		Use:   "accept ID", // lang:en
		Short: lang.N("Remember a proposed note now (optionally replacing a unit it contradicts)"),
		/* lang:en */ Example: "  homard memory review accept c_3f9a2c1d7e4b\n  homard memory review accept c_3f9a2c1d7e4b --replace m_0a1b2c3d4e5f",
	}
	cmd.Flags().StringVar(&replace, "replace", "", lang.N("forget this memory `UNIT_ID` in the same write"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		k, err := r.Owner.MemoryAccept(ctx, args[0], replace)
		if err != nil {
			return c.reviewErr(err)
		}
		if replace != "" {
			c.say.Fprintf(c.stdout, "remembered %s as %s; forgot %s\n", termtext.Line(k.ID), termtext.Line(k.UnitID), termtext.Line(replace))
			return nil
		}
		c.say.Fprintf(c.stdout, "remembered %s as %s\n", termtext.Line(k.ID), termtext.Line(k.UnitID))
		return nil
	})
}

func (c *cli) memoryDismissCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dismiss [ID|N]" /* lang:en */, Short: lang.N("Drop a proposed note (it is not proposed again), or the memory review's proposals")}
	return c.runtimeCmd(cmd, cobra.MaximumNArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		if len(args) == 0 || !strings.HasPrefix(args[0], "c_") {
			n := 0
			if len(args) == 1 {
				var err error
				if n, err = proposalArg(c.say, args[0]); err != nil {
					return err
				}
			}
			return c.answerMemoryReview(ctx, r, n, true)
		}
		k, err := r.Owner.MemoryDismiss(ctx, args[0])
		if err != nil {
			return c.reviewErr(err)
		}
		c.say.Fprintf(c.stdout, "dismissed %s\n", termtext.Line(k.ID))
		return nil
	})
}

// reviewErr turns an unknown id into a usage error that says what to do.
func (c *cli) reviewErr(err error) error {
	if errors.Is(err, app.ErrMemoryCandidate) {
		return usage(c.say.Errorf("%v (homard memory review lists them)", err))
	}
	return err
}
