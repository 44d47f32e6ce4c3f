package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) auditCmd() *cobra.Command {
	var asJSON, follow, verify bool
	var limit int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: lang.N("Show the audit trail, follow it, or verify its hash chain"),
		Long:  auditLong,
		/* lang:en */ Example: `  homard audit --limit 20
  homard audit --verify
  homard audit export > audit.jsonl
  homard audit anchor > anchor.txt
  homard audit verify --file audit.jsonl --anchor "$(cat anchor.txt)"`,
	}
	f := cmd.Flags()
	jsonFlag(cmd, &asJSON, lang.N("print one JSON object per line, oldest first (schema: docs/JSON.md)"))
	f.BoolVar(&follow, "follow", false, lang.N("keep printing new records until interrupted"))
	f.BoolVar(&verify, "verify", false, lang.N("recompute the hash chain and name the first broken record"))
	f.IntVar(&limit, "limit", 50, lang.N("show the last `N` records"))
	cmd.AddCommand(c.auditExportCmd(), c.auditVerifyCmd(), c.auditAnchorCmd())
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if verify {
			n, err := r.Owner.AuditVerify(ctx)
			if err != nil {
				return &exitError{code: exitFailure, err: c.say.Errorf("audit chain broken: %w", err)}
			}
			c.say.Fprintf(c.stdout, "audit chain intact: %d records\n", n)
			return nil
		}
		recs, err := r.Owner.AuditTail(ctx, limit)
		if err != nil {
			return err
		}
		var last int64
		print := func(rs []app.AuditRecord) error {
			for _, rec := range rs {
				last = rec.Seq
				if asJSON {
					if err := writeJSONLine(c.stdout, app.NewAuditJSON(rec)); err != nil {
						return err
					}
					continue
				}
				// The tool name is the model's choice (an unknown tool
				// is audited too) and the reason may quote it: one line
				// each, so no record can hide or forge another.
				fmt.Fprintf(c.stdout, "%6d  %s  %-8s %-14s %-22s %s\n", rec.Seq, rec.Time.Local().Format(time.DateTime),
					rec.Decision, termtext.Line(rec.Tool), termtext.Line(rec.Rule), termtext.Line(rec.Reason))
				// What a command changed (paths the model chose), one
				// indented line per path.
				if rec.Effects != "" {
					for _, line := range strings.Split(rec.Effects, "\n") {
						fmt.Fprintf(c.stdout, "        %s\n", termtext.Line(line))
					}
				}
			}
			return nil
		}
		if err := print(recs); err != nil {
			return err
		}
		for follow {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			recs, err := r.Owner.AuditAfter(ctx, last, 1000)
			if err != nil {
				return err
			}
			if err := print(recs); err != nil {
				return err
			}
		}
		return nil
	})
}

// auditLong is the command's long help (translated in translateCobra).
var auditLong = lang.N(`Every proposal — run, pending, denied or malformed — leaves one audit record
with its arguments redacted. Each record carries the hash of the previous one,
so editing or deleting a record breaks the chain: --verify names the first
broken record.

To keep the trail elsewhere and check it there: 'homard audit export' writes it
as JSON Lines, 'homard audit verify --file' checks such a file on any machine
(no home needed), and 'homard audit anchor' prints the head to keep apart,
which shows a file or log cut short.`)
