package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/automation"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
)

// storeCmd is `homard store`: where the state lives, and moving it
// between SQLite and PostgreSQL (issue 27).
func (c *cli) storeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: lang.N("Where homard keeps its state, and moving it between SQLite and PostgreSQL"),
	}
	var to string
	migrate := &cobra.Command{
		Use:   "migrate --to URL|FILE", // lang:en
		Short: lang.N("Copy this home's state into a new PostgreSQL database or SQLite file"),
		Long: lang.N(`Copies every row of the store this home uses (store.url, or
data/homard.db) into a new one: a PostgreSQL database (postgres://…, a
homard built with -tags postgres) or a SQLite file, all of it or nothing.
The target must be empty; homard serve must not be running on this home.
Then it counts each table's rows and verifies the audit hash chain on both
sides. The memory index is rebuilt from memory.md at the next start.
Nothing switches by itself: set store.url (or HOMARD_STORE_URL) to the
target afterwards, and keep the old store until you have checked.`),
		/* lang:en */ Example: `  PGPASSWORD=… homard store migrate --to postgres://homard@db.example/homard
  homard store migrate --to ~/homard-back/homard.db`,
	}
	migrate.Flags().StringVar(&to, "to", "", lang.N("the new store: a postgres:// URL or a SQLite file path"))
	cmd.AddCommand(c.runtimeCmd(migrate, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if to == "" {
			return c.say.Errorf("--to is required: a postgres:// URL or a SQLite file path")
		}
		if si, ok := r.RunningServe(); ok {
			return c.say.Errorf("homard serve (pid %d) is running on this home; stop it first, so that nothing changes during the copy", si.PID)
		}
		dst, err := store.OpenURL(ctx, to)
		if err != nil {
			return err
		}
		defer dst.Close()
		rep, err := store.Copy(ctx, dst, r.Store)
		if errors.Is(err, store.ErrTargetNotEmpty) {
			return c.say.Errorf("the target already holds data; homard store migrate fills a new, empty store")
		}
		if err != nil {
			return err
		}
		for _, t := range rep.Tables {
			if t.To > 0 {
				c.say.Fprintf(c.stdout, "%-22s %d rows\n", t.Name, t.To)
			}
		}
		from, err := audit.Verify(ctx, r.Store)
		if err != nil {
			return c.say.Errorf("the source's audit chain does not verify: %v", err)
		}
		got, err := audit.Verify(ctx, dst)
		if err != nil || got != from {
			return c.say.Errorf("the target's audit chain does not verify (%d of %d records): %v", got, from, err)
		}
		c.say.Fprintf(c.stdout, "copied into %s; audit chain verified on both sides (%d records)\n", dst.Engine(), got)
		// river's jobs are not copied: a slot queued and not yet run is
		// carried by setting its task's next run back to it.
		carried, err := automation.CarryQueuedSlots(ctx, r.Store, dst)
		if err != nil {
			return err
		}
		if carried > 0 {
			c.say.Fprintf(c.stdout, "tasks with a slot queued and not yet run: %d; in the new store each runs it next, by its catch-up policy\n", carried)
		}
		c.say.Fprintln(c.stdout, "to use it, set store.url in the config (or HOMARD_STORE_URL) and restart homard")
		return nil
	}))
	return cmd
}
