package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

// The audit trail as a file: export it, verify an export anywhere (without
// a home), and take the anchor that shows an export or the log cut short.

func (c *cli) auditExportCmd() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "export",
		Short: lang.N("Write the audit records as JSON Lines that verify on their own"),
		Long:  auditExportLong,
		/* lang:en */ Example: `  homard audit export > audit.jsonl
  homard audit export --since 7d > week.jsonl
  homard audit export --since 2026-03-01 > march.jsonl
  homard audit export | ssh backup 'cat > homard-audit.jsonl'`,
	}
	cmd.Flags().StringVar(&since, "since", "", lang.N("start at the first record at or after `WHEN`: a duration back from now (36h, 7d) or a date (2026-03-01, local midnight, or RFC 3339)"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		from, err := c.parseSince(since, time.Now())
		if err != nil {
			return err
		}
		r, err := c.open(ctx, app.Options{})
		if err != nil {
			return err
		}
		defer r.Close()
		rep, err := r.Owner.AuditExport(ctx, c.stdout, from)
		if err != nil {
			return err
		}
		if rep.Records == 0 {
			c.say.Fprintf(c.stderr, "no audit records%s: nothing exported\n", sinceText(since))
			return nil
		}
		c.say.Fprintf(c.stderr, "exported %d records (seq %d–%d), head %s\n", rep.Records, rep.First.Seq, rep.Head.Seq, rep.Head.Hash)
		return nil
	})
}

// parseSince reads --since: "" is the beginning; a duration (parseSpan's:
// 7d, 36h) is that long before now; otherwise a date, at local midnight,
// or an RFC 3339 time.
func (c *cli) parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := c.parseSpan("--since", s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, usage(c.say.Errorf("--since %q: want a duration such as 36h or 7d, a date such as 2026-03-01, or an RFC 3339 time", s))
}

func sinceText(since string) string {
	if since == "" {
		return ""
	}
	return " since " + termtext.Line(since)
}

func (c *cli) auditVerifyCmd() *cobra.Command {
	var path, anchor string
	cmd := &cobra.Command{
		Use:   "verify --file FILE [--anchor SEQ:HASH]", // lang:en
		Short: lang.N("Check an export file's hash chain on its own, without a home"),
		Long:  auditVerifyFileLong,
		/* lang:en */ Example: `  homard audit verify --file audit.jsonl
  homard audit anchor > anchor.txt          # keep it somewhere else
  homard audit verify --file audit.jsonl --anchor "$(cat anchor.txt)"
  ssh backup cat homard-audit.jsonl | homard audit verify --file -`,
	}
	f := cmd.Flags()
	f.StringVar(&path, "file", "", lang.N("the export to check, `FILE` (- reads stdin)"))
	f.StringVar(&anchor, "anchor", "", lang.N("the chain must reach this record, `SEQ:HASH` as homard audit anchor prints it (or a bare HASH)"))
	return leafCmd(cmd, cobra.NoArgs, func(_ context.Context, _ []string) error {
		if path == "" {
			return usage(c.say.Errorf("--file is required: the export to check (- for stdin); the database's own chain: homard audit --verify"))
		}
		var a audit.Anchor
		if anchor != "" {
			var err error
			if a, err = audit.ParseAnchor(anchor); err != nil {
				return usage(c.say.Errorf("--anchor: %v", err))
			}
		}
		in := c.stdin
		if path != "-" {
			f, err := os.Open(path)
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			defer f.Close()
			in = f
		}
		rep, err := audit.VerifyFile(in, a)
		if err != nil {
			return &exitError{code: exitFailure, err: c.say.Errorf("%s does not verify: %w", path, err)}
		}
		c.printVerified(c.stdout, rep, a)
		return nil
	})
}

// printVerified says what an intact export holds and what it proves.
func (c *cli) printVerified(w io.Writer, rep audit.FileReport, a audit.Anchor) {
	c.say.Fprintf(w, "intact: %d records (seq %d–%d), head %s\n", rep.Records, rep.First.Seq, rep.Head.Seq, rep.Head.Hash)
	if !rep.FromGenesis() {
		c.say.Fprintf(w, "starts at seq %d, not at the beginning: its first record links to record %d's hash %s, taken as given\n",
			rep.First.Seq, rep.First.Seq-1, rep.Start)
	}
	switch {
	case rep.Anchored:
		c.say.Fprintf(w, "anchor %s reached: nothing up to it was changed or cut since it was taken\n", anchorText(a))
	default:
		c.say.Fprintln(w, "no anchor given: the file is one consistent chain; a cut end, or an edit with every later hash recomputed, would not show (see homard audit anchor)")
	}
}

func anchorText(a audit.Anchor) string {
	if a.Seq == 0 {
		return a.Hash
	}
	return a.String()
}

func (c *cli) auditAnchorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "anchor",
		Short: lang.N("Print the audit chain's head as SEQ:HASH, to keep somewhere else"),
		Long:  auditAnchorLong,
		/* lang:en */ Example: `  homard audit anchor
  homard audit anchor --json`,
	}
	jsonFlag(cmd, &asJSON, lang.N("print {\"seq\":…,\"hash\":…} (schema: docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		head, err := r.Owner.AuditAnchor(ctx)
		if errors.Is(err, audit.ErrBroken) {
			return &exitError{code: exitFailure, err: err}
		}
		if err != nil {
			return err
		}
		if head.Seq == 0 {
			return &exitError{code: exitFailure, err: c.say.Errorf("no audit records yet: nothing to anchor")}
		}
		if asJSON {
			return writeJSONLine(c.stdout, anchorJSON{Seq: head.Seq, Hash: head.Hash})
		}
		fmt.Fprintln(c.stdout, head)
		c.say.Fprintf(c.stderr, "keep this somewhere else; later `homard audit verify --file export.jsonl --anchor %s` proves nothing before it was changed or cut\n", head)
		return nil
	})
}

// auditExportLong is the command's long help (translated in translateCobra).
var auditExportLong = lang.N(`Write the audit records to stdout, oldest first, one JSON object per line:
the object 'homard audit --json' prints, with every field the hash covers
(time exactly as hashed, prev_hash and hash). The file alone can be checked
on any machine with 'homard audit verify --file', no homard database needed.

With --since the export starts at the first record at or after that time
and runs to the last; its first record links to one the file does not hold,
and verify says where it starts. A summary goes to stderr.`)

// auditVerifyFileLong is the command's long help (translated in translateCobra).
var auditVerifyFileLong = lang.N(`Recompute every record's hash in an export ('homard audit export') from its
fields, and check that seqs follow each other and each record links to the
one before it. It reads only the file: it needs no homard home and opens
none, so it works on another machine. Exit 0 when the chain is intact, 1 at
the first bad line, naming it, its record and why.

Alone, this shows the file is one consistent chain: a changed byte, a
removed or moved line shows. It cannot show a file cut short, one missing
its first records (it then says where it starts), or an edit whose author
recomputed every hash after it (the hash has no key). For that, pass the
anchor 'homard audit anchor' printed earlier and kept where homard's files
cannot be edited with it: the file must reach that record with the same
hash, which proves nothing up to it was changed or cut since.`)

// auditAnchorLong is the command's long help (translated in translateCobra).
var auditAnchorLong = lang.N(`Verify the whole chain and print its newest record as SEQ:HASH on one line.
Keep it somewhere else (a password manager, a note on another machine):
later, 'homard audit verify --file export.jsonl --anchor SEQ:HASH' proves that
nothing up to that record was changed or cut. A broken chain has no anchor
worth keeping: exit 1, naming the first broken record.`)
