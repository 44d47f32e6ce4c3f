package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/service"
	"github.com/spf13/cobra"
)

// serviceCmd manages the systemd unit that runs `homard serve`.
func (c *cli) serviceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: lang.N("Run homard serve as a systemd service (install, uninstall, status)"),
		Long: lang.N(`service writes a systemd unit that runs 'homard serve' for this home and
starts it at boot (a system unit) or at login (a user unit).

  homard service install            ~/.config/systemd/user/homard.service,
                                    then systemctl --user enable --now
  homard service install --print    show the unit; change nothing
  homard service install --system --run-as alice --home /srv/homard
                                    /etc/systemd/system/homard.service (root)
  homard service status             systemctl --user status homard
  homard service uninstall          stop, disable and remove the unit

A user unit stops when you log out unless lingering is on:
  loginctl enable-linger $USER
serve prints its one-time login URL into the journal when it starts
(journalctl --user -u homard); see docs/INSTALL.md.`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usage(c.say.Errorf("service needs a subcommand: install, uninstall or status"))
		},
	}
	cmd.AddCommand(c.serviceInstallCmd(), c.serviceUninstallCmd(), c.serviceStatusCmd())
	return cmd
}

func (c *cli) serviceInstallCmd() *cobra.Command {
	var o service.Options
	var print bool
	cmd := &cobra.Command{Use: "install", Short: lang.N("Write the unit and start it (--print shows it and changes nothing)")}
	f := cmd.Flags()
	f.BoolVar(&o.System, "system", false, lang.N("write a system unit (/etc/systemd/system, needs root and --home)"))
	f.StringVar(&o.RunAs, "run-as", "", lang.N("the `USER` a system unit runs as (default $SUDO_USER)"))
	f.BoolVar(&print, "print", false, lang.N("print the unit and change nothing"))
	f.BoolVar(&o.Force, "force", false, lang.N("replace an installed unit that differs"))
	f.BoolVar(&o.NoStart, "no-start", false, lang.N("write the unit only; do not run systemctl"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		p, err := c.paths()
		if err != nil {
			return err
		}
		if o.Binary, err = c.selfPath(); err != nil {
			return err
		}
		if o.System && o.RunAs == "" {
			o.RunAs = os.Getenv("SUDO_USER")
		}
		o.SetuidBwrap = service.BwrapSetuid()
		if print {
			unit, err := service.Unit(p, o)
			if err != nil {
				return err
			}
			if path, err := service.UnitPath(o); err == nil {
				c.say.Fprintf(c.stderr, "homard: would write %s:\n", path)
			}
			fmt.Fprint(c.stdout, unit)
			return nil
		}
		// The unit's serve does not inherit this shell's environment: a
		// store named only by HOMARD_STORE_URL would be left behind, and
		// serve would start on data/homard.db. (The URL is not copied
		// into the unit: it may hold a password.)
		if env := os.Getenv(config.StoreEnv); env != "" {
			if cfg, err := config.Load(p.ConfigFile); err == nil && cfg.Store.URL != env { // no config: Install says what to do
				return c.say.Errorf("HOMARD_STORE_URL is set, but the service will not see it: put that URL in the config's [store] url (a password in ~/.pgpass of the user the service runs as, never in the URL), or unset HOMARD_STORE_URL")
			}
		}
		if o.System && os.Geteuid() != 0 {
			return c.say.Errorf("a system service is written to /etc/systemd/system: run it as root (sudo %s service install --system ...), or use --print", o.Binary)
		}
		res, err := service.Install(ctx, p, o)
		if err != nil {
			return err
		}
		if res.Changed {
			c.say.Fprintf(c.stdout, "wrote %s\n", res.Path)
		} else {
			c.say.Fprintf(c.stdout, "%s is already this unit\n", res.Path)
		}
		sc, status := "systemctl --user", "homard service status" // lang:en: commands
		if o.System {
			sc, status = "systemctl", "homard service status --system" // lang:en: commands
		}
		if !res.Started {
			c.say.Fprintf(c.stdout, "start it with: %s daemon-reload && %s enable --now homard\n", sc, sc)
			return nil
		}
		c.say.Fprintf(c.stdout, "started; see it with: %s\n", status)
		if !o.System {
			c.say.Fprintln(c.stdout, "to keep it running after you log out: loginctl enable-linger $USER")
		}
		return nil
	})
}

func (c *cli) serviceUninstallCmd() *cobra.Command {
	var o service.Options
	cmd := &cobra.Command{Use: "uninstall", Short: lang.N("Stop and disable the unit, and remove its file")}
	f := cmd.Flags()
	f.BoolVar(&o.System, "system", false, lang.N("the system unit (/etc/systemd/system)"))
	f.BoolVar(&o.Force, "force", false, lang.N("remove a homard.service that homard did not write"))
	f.BoolVar(&o.NoStart, "no-stop", false, lang.N("remove the file only; do not run systemctl"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		res, err := service.Uninstall(ctx, o)
		if err != nil {
			return err
		}
		if !res.Changed {
			c.say.Fprintf(c.stdout, "no unit at %s; nothing to remove\n", res.Path)
			return nil
		}
		c.say.Fprintf(c.stdout, "removed %s\n", res.Path)
		return nil
	})
}

func (c *cli) serviceStatusCmd() *cobra.Command {
	var o service.Options
	cmd := &cobra.Command{Use: "status", Short: lang.N("Show systemctl status homard")}
	cmd.Flags().BoolVar(&o.System, "system", false, lang.N("the system unit"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		if path, err := service.UnitPath(o); err == nil {
			if _, err := os.Stat(path); err != nil {
				c.say.Fprintf(c.stdout, "no unit at %s: install one with homard service install\n", path)
				return &exitError{code: exitFailure}
			}
		}
		out, err := service.Status(ctx, o)
		fmt.Fprint(c.stdout, out)
		if err != nil {
			return c.say.Errorf("homard.service is not running, or systemctl failed (%w)", err)
		}
		return nil
	})
}

// selfPath is the absolute path of the running homard, symlinks resolved,
// for ExecStart.
func (c *cli) selfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", c.say.Errorf("find the homard binary: %w", err)
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		return "", c.say.Errorf("find the homard binary: %w", err)
	}
	return p, nil
}
