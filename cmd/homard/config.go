package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) configCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: lang.N("The config file itself: bring an older one to this homard's format")}
	cmd.AddCommand(c.configMigrateCmd())
	return cmd
}

// migrateJSON is `homard config migrate --json` (docs/JSON.md, "config
// migrate").
type migrateJSON struct {
	File    string   `json:"file"`
	From    int      `json:"from"`
	To      int      `json:"to"`
	Steps   []string `json:"steps"`
	Diff    string   `json:"diff"`
	Written bool     `json:"written"`
	Backup  string   `json:"backup"`
}

func (c *cli) configMigrateCmd() *cobra.Command {
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: lang.N("Bring config.toml to this homard's config_version, keeping a backup (--dry-run shows it first)"),
		Long:  c.say.Sprintf(configMigrateLong, config.CurrentVersion),
		/* lang:en */ Example: `  homard config migrate --dry-run   the steps and the diff; writes nothing
  homard config migrate             write it, after a backup`,
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, lang.N("print the steps and the diff and write nothing"))
	jsonFlag(cmd, &asJSON, lang.N("print JSON (docs/JSON.md)"))
	return leafCmd(cmd, cobra.NoArgs, func(_ context.Context, _ []string) error {
		p, err := c.paths()
		if err != nil {
			return err
		}
		m, err := config.ReadMigration(p.ConfigFile)
		if err != nil {
			return err
		}
		out := migrateJSON{File: m.Path, From: m.From, To: config.CurrentVersion, Steps: []string{}, Diff: m.Diff()}
		for _, s := range m.Steps {
			out.Steps = append(out.Steps, s.String())
		}
		if m.Needed() {
			// Both say now what writing would refuse.
			if err := m.Check(); err != nil {
				return err
			}
			if !dryRun {
				if out.Backup, err = m.Apply(); err != nil {
					return err
				}
				out.Written = true
			}
		}
		if asJSON {
			return writeJSON(c.stdout, out)
		}
		c.printMigration(m, out, dryRun)
		return nil
	})
}

// printMigration prints what migrate found and did. The file's lines and
// path go through termtext.
func (c *cli) printMigration(m *config.Migration, out migrateJSON, dryRun bool) {
	if !m.Needed() {
		c.say.Fprintf(c.stdout, "%s is config_version %d, this homard's: nothing to migrate\n", termtext.Line(m.Path), m.From)
		return
	}
	c.say.Fprintf(c.stdout, "%s: config_version %d → %d\n", termtext.Line(m.Path), m.From, config.CurrentVersion)
	for _, s := range out.Steps {
		fmt.Fprintf(c.stdout, "  %s\n", s)
	}
	fmt.Fprintln(c.stdout)
	for _, l := range strings.SplitAfter(out.Diff, "\n") {
		if l != "" {
			fmt.Fprintln(c.stdout, termtext.Line(strings.TrimSuffix(l, "\n")))
		}
	}
	fmt.Fprintln(c.stdout)
	if dryRun {
		c.say.Fprintf(c.stdout, "dry run: nothing was written; `homard config migrate` writes this, keeping the file as it is in %s\n", termtext.Line(m.BackupPath()))
		return
	}
	c.say.Fprintf(c.stdout, "migrated; the file as it was is in %s\n", termtext.Line(out.Backup))
}

// migrateConfig writes the migration of the home's config file, if it is
// older than this homard, once the home has opened: a command that opens
// the home writes it anyway (the database, crash recovery), and Load has
// already read the file as migrated. The note goes to stderr once — after
// it the file is current. A failure is a warning: homard works on with
// the file read as migrated, and `homard config migrate` says why.
func (c *cli) migrateConfig(path string) {
	m, err := config.ReadMigration(path)
	if err != nil || !m.Needed() {
		return // it opened, so this is a race with an edit: the next start sees it
	}
	backup, err := m.Apply()
	if err != nil {
		c.say.Fprintf(c.stderr, "homard: %s is config_version %d and was not migrated (%s); it is read as migrated all the same: see `homard config migrate --dry-run`\n",
			termtext.Line(path), m.From, termtext.Line(err.Error()))
		return
	}
	c.say.Fprintf(c.stderr, "homard: migrated %s; the file as it was is in %s\n", termtext.Line(m.Summary()), termtext.Line(backup))
}

// configMigrateLong is the command's long help, a format of this homard's
// config_version.
var configMigrateLong = lang.N(`config.toml carries config_version, the format it is written in; this
homard writes %d. A file without it is version 0: every config written
before the key existed. homard reads an older file as migrated, so no
setting changes meaning, and the commands that open the home (run, chat,
serve, tool, approval and the others that use the database) write the
migration once, keeping the file as it was and saying so on stderr.
doctor and --dry-run only report it.

migrate does it now: it prints each step and the diff, keeps the file as it
is in config.toml.bak-vN (N its version; mode 0600), then writes the new
file atomically, and only if it loads. It never replaces a different backup
and never writes a file changed since it was read. A config_version newer
than this homard is refused: upgrade homard (a file is never downgraded).

Exit status: 0 migrated, nothing to migrate, or --dry-run shown; 1 the file
is missing, does not load, is newer than this homard, or a different backup
is in the way (nothing is written then); 2 bad flags.`)
