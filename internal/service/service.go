// Package service writes, removes and reads the systemd unit that runs
// `homard serve` for the owner (`homard service install|uninstall|status`):
// a user unit by default, a system unit for another user on request; the
// unit's words are quoted for systemd, never interpolated, and a unit the
// owner wrote by hand is never replaced or removed unless forced. It needs
// no opened home: only the paths and the binary.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/homard/homard/internal/atomicfile"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/sandbox"
)

// ErrBadOption wraps an option the owner gave wrong (the CLI exits 2).
var ErrBadOption = errors.New("bad request")

// Name is the systemd unit `homard service` manages.
const Name = "homard.service"

// serviceMarker is in every unit homard writes; uninstall refuses a unit
// without it (one the owner wrote by hand) unless forced.
const serviceMarker = "# Written by `homard service install`."

// Options says which systemd unit `homard service` writes or reads.
type Options struct {
	// System writes a system unit (SystemDir, run as RunAs) instead of the
	// owner's user unit ($XDG_CONFIG_HOME/systemd/user).
	System bool
	// RunAs is the User= of a system unit. Required with System.
	RunAs string
	// Binary is the absolute path of the homard binary ExecStart runs.
	Binary string
	// Force replaces an existing unit that differs (install), or removes
	// one homard did not write (uninstall).
	Force bool
	// NoStart writes the unit without daemon-reload and enable --now.
	NoStart bool
	// SetuidBwrap leaves NoNewPrivileges out of the unit: a setuid
	// bubblewrap cannot gain its privileges under it.
	SetuidBwrap bool
	// Getenv reads XDG_CONFIG_HOME and HOME for the user unit's place, and
	// XDG_DATA_HOME for the service's environment. Nil means os.Getenv.
	Getenv func(string) string
	// SystemDir is where system units go. Empty means /etc/systemd/system.
	SystemDir string
	// Systemctl runs systemctl with args and returns its combined output.
	// Nil runs the systemctl on PATH.
	Systemctl func(ctx context.Context, args ...string) (string, error)
}

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.SystemDir == "" {
		o.SystemDir = "/etc/systemd/system"
	}
	if o.Systemctl == nil {
		o.Systemctl = func(ctx context.Context, args ...string) (string, error) {
			out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
			return string(out), err
		}
	}
}

// systemctl runs systemctl for the user or the system manager.
func (o *Options) systemctl(ctx context.Context, args ...string) (string, error) {
	if !o.System {
		args = append([]string{"--user"}, args...)
	}
	out, err := o.Systemctl(ctx, args...)
	if err != nil {
		return out, fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out))
	}
	return out, nil
}

// UnitPath is where the unit goes.
func UnitPath(o Options) (string, error) {
	o.defaults()
	if o.System {
		return filepath.Join(o.SystemDir, Name), nil
	}
	dir := o.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := o.Getenv("HOME")
		if home == "" {
			return "", errors.New("service: neither XDG_CONFIG_HOME nor HOME is set: set HOME to your home folder")
		}
		dir = filepath.Join(home, ".config")
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("service: XDG_CONFIG_HOME %q is not an absolute path", dir)
	}
	return filepath.Join(dir, "systemd", "user", Name), nil
}

// Unit is the unit text for home p.
func Unit(p config.Paths, o Options) (string, error) {
	o.defaults()
	if !filepath.IsAbs(o.Binary) {
		return "", fmt.Errorf("service: the homard binary path %q is not absolute", o.Binary)
	}
	if o.System && o.RunAs == "" {
		return "", fmt.Errorf("%w: a system service needs the account it runs as: --run-as USER", ErrBadOption)
	}
	if o.System && p.Home == "" {
		return "", fmt.Errorf("%w: a system service needs an explicit home: --home DIR (or HOMARD_HOME), the folder `homard setup` made", ErrBadOption)
	}
	argv := []string{o.Binary, "serve"}
	if p.Home != "" {
		argv = append(argv, "--home", p.Home)
	}
	execStart, err := systemdArgv(argv)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("%s Re-run it to change this unit;", serviceMarker)
	w("# `homard service uninstall` removes it. See docs/INSTALL.md.")
	w("[Unit]")
	w("Description=homard, a personal AI agent runtime (homard serve)")
	w("Documentation=https://github.com/homard/homard/blob/main/docs/INSTALL.md")
	w("After=network-online.target")
	w("Wants=network-online.target")
	w("")
	w("[Service]")
	w("Type=simple")
	if o.System {
		w("User=%s", o.RunAs)
	}
	if p.Home == "" {
		// The XDG layout: the service must see the folders this shell saw.
		for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
			if v := o.Getenv(k); v != "" {
				env, err := systemdWord(k+"="+v, false) // Environment= expands no variables
				if err != nil {
					return "", err
				}
				w("Environment=%s", env)
			}
		}
	}
	w("ExecStart=%s", execStart)
	w("Restart=on-failure")
	w("RestartSec=5s")
	w("# serve logs one JSON object a line when stderr is not a terminal;")
	journal, target := "journalctl --user", "default.target"
	if o.System {
		journal, target = "journalctl", "multi-user.target"
	}
	w("# read them with %s -u homard.", journal)
	w("UMask=0077")
	if o.SetuidBwrap {
		w("# NoNewPrivileges is left out: this machine's bubblewrap is setuid.")
	} else {
		w("# The command sandbox (bubblewrap or Landlock) makes user namespaces,")
		w("# which no_new_privs allows; it sets no_new_privs for commands itself.")
		w("NoNewPrivileges=yes")
	}
	w("")
	w("[Install]")
	w("WantedBy=%s", target)
	return b.String(), nil
}

// systemdArgv quotes argv for ExecStart=: each word in double quotes when
// it needs them, with systemd's specifier character (%) doubled
// everywhere and its variable character ($) doubled in the arguments
// (systemd expands variables there, not in the program path).
func systemdArgv(argv []string) (string, error) {
	var out []string
	for i, a := range argv {
		q, err := systemdWord(a, i > 0)
		if err != nil {
			return "", err
		}
		out = append(out, q)
	}
	return strings.Join(out, " "), nil
}

// systemdWord quotes one word of a unit file setting; dollar doubles "$".
func systemdWord(a string, dollar bool) (string, error) {
	if strings.ContainsAny(a, "\n\r\x00") {
		return "", fmt.Errorf("service: %q cannot be written in a unit file (a newline or NUL)", a)
	}
	a = strings.ReplaceAll(a, "%", "%%")
	if dollar {
		a = strings.ReplaceAll(a, "$", "$$")
	}
	if a == "" || strings.ContainsAny(a, " \t\"'\\;") {
		a = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
	}
	return a, nil
}

// Result says what install or uninstall did, for the CLI to print.
type Result struct {
	// Path is the unit file.
	Path string
	// Changed reports that the file was written or removed.
	Changed bool
	// Started reports that systemctl enabled and started (install) or
	// stopped and disabled (uninstall) the unit.
	Started bool
}

// ErrExists is returned by Install when a different unit is
// already installed and Force is not set.
var ErrExists = errors.New("a different homard.service is already installed")

// Install writes the unit for home p and, unless NoStart, runs
// systemctl daemon-reload and enable --now. An existing identical unit is
// left as it is; a different one is replaced only with Force.
func Install(ctx context.Context, p config.Paths, o Options) (Result, error) {
	o.defaults()
	unit, err := Unit(p, o)
	if err != nil {
		return Result{}, err
	}
	path, err := UnitPath(o)
	if err != nil {
		return Result{}, err
	}
	if _, err := os.Stat(p.ConfigFile); err != nil {
		return Result{}, fmt.Errorf("service: no config at %s: run `homard setup` first (with the same --home)", p.ConfigFile)
	}
	res := Result{Path: path}
	old, err := os.ReadFile(path)
	replaced := err == nil && !bytes.Equal(old, []byte(unit))
	switch {
	case err == nil && !replaced:
	case replaced && !o.Force:
		return res, fmt.Errorf("%w at %s: see the new one with --print, then replace it with --force", ErrExists, path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return res, fmt.Errorf("service: read %s: %w", path, err)
	default:
		if err := writeFileAtomic(path, []byte(unit)); err != nil {
			return res, fmt.Errorf("service: write %s: %w", path, err)
		}
		res.Changed = true
	}
	if o.NoStart {
		return res, nil
	}
	if _, err := o.systemctl(ctx, "daemon-reload"); err != nil {
		return res, fmt.Errorf("the unit is written at %s, but %w", path, err)
	}
	if _, err := o.systemctl(ctx, "enable", "--now", Name); err != nil {
		return res, fmt.Errorf("the unit is written at %s, but %w", path, err)
	}
	if replaced {
		// A running service runs the old unit until it restarts.
		if _, err := o.systemctl(ctx, "try-restart", Name); err != nil {
			return res, err
		}
	}
	res.Started = true
	return res, nil
}

// Uninstall stops and disables the unit (unless NoStart), removes
// its file and reloads systemd. A unit homard did not write is removed
// only with Force; a missing unit is not an error.
func Uninstall(ctx context.Context, o Options) (Result, error) {
	o.defaults()
	path, err := UnitPath(o)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: path}
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("service: read %s: %w", path, err)
	}
	if !bytes.Contains(old, []byte(serviceMarker)) && !o.Force {
		return res, fmt.Errorf("service: %s was not written by homard; remove it yourself, or pass --force", path)
	}
	if !o.NoStart {
		if _, err := o.systemctl(ctx, "disable", "--now", Name); err != nil {
			return res, err
		}
		res.Started = true
	}
	if err := os.Remove(path); err != nil {
		return res, fmt.Errorf("service: remove %s: %w", path, err)
	}
	res.Changed = true
	if !o.NoStart {
		if _, err := o.systemctl(ctx, "daemon-reload"); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Status returns `systemctl status homard.service`'s output; the
// error is systemctl's (it exits non-zero for a stopped unit).
func Status(ctx context.Context, o Options) (string, error) {
	o.defaults()
	args := []string{"status", "--no-pager", Name}
	if !o.System {
		args = append([]string{"--user"}, args...)
	}
	return o.Systemctl(ctx, args...)
}

// writeFileAtomic writes data to path (mode 0644, parents 0755) through a
// temporary file renamed over it (atomicfile.Write).
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

// BwrapSetuid reports whether this machine's bubblewrap is setuid (see
// Options.SetuidBwrap).
func BwrapSetuid() bool { return sandbox.BwrapSetuid() }
