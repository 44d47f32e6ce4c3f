package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
)

// sayFor is the printer of the language the command speaks, found before
// the flags are parsed (--help's text is built from it): the home's
// config `lang` when the config loads ("en", "zh"; "auto" reads the
// environment), else the environment. A config that does not load never
// breaks a command here: its error comes when the command opens it.
func sayFor(args []string, getenv func(string) string) lang.Printer {
	setting := ""
	if p, err := config.ResolvePaths(homeArg(args), getenv); err == nil {
		if _, err := os.Stat(p.ConfigFile); err == nil {
			if cfg, err := config.Load(p.ConfigFile); err == nil {
				setting = cfg.Lang
			}
		}
	}
	tag, err := lang.Resolve(setting, getenv)
	if err != nil {
		tag = lang.FromEnv(getenv)
	}
	return lang.For(tag)
}

// homeArg is the value of a --home flag among args ("" without one).
func homeArg(args []string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return ""
		case a == "--home" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--home="):
			return strings.TrimPrefix(a, "--home=")
		}
	}
	return ""
}

// usageFunc is cobra's usage text (its defaultUsageFunc) with the
// headings in the printer's language. A usage template would do it in
// one line but links text/template, whose reflection keeps every
// exported method in the binary (+2.5 MB).
func (c *cli) usageFunc(cmd *cobra.Command) error {
	w, say := cmd.OutOrStderr(), c.say
	say.Fprintf(w, "Usage:")
	if cmd.Runnable() {
		fmt.Fprintf(w, "\n  %s", cmd.UseLine())
	}
	if cmd.HasAvailableSubCommands() {
		say.Fprintf(w, "\n  %s [command]", cmd.CommandPath())
	}
	if len(cmd.Aliases) > 0 {
		say.Fprintf(w, "\n\nAliases:\n  %s", cmd.NameAndAliases())
	}
	if cmd.HasExample() {
		say.Fprintf(w, "\n\nExamples:\n%s", cmd.Example)
	}
	if cmd.HasAvailableSubCommands() {
		say.Fprintf(w, "\n\nAvailable Commands:")
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(w, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if cmd.HasAvailableLocalFlags() {
		say.Fprintf(w, "\n\nFlags:\n%s", strings.TrimRight(cmd.LocalFlags().FlagUsages(), " \t\n"))
	}
	if cmd.HasAvailableInheritedFlags() {
		say.Fprintf(w, "\n\nGlobal Flags:\n%s", strings.TrimRight(cmd.InheritedFlags().FlagUsages(), " \t\n"))
	}
	if cmd.HasAvailableSubCommands() {
		say.Fprintf(w, "\n\nUse \"%s [command] --help\" for more information about a command.", cmd.CommandPath())
	}
	fmt.Fprintln(w)
	return nil
}

// translateCobra puts the command tree's help — every command's Short
// and Long, every flag's usage, and cobra's own words: the help flag, the
// help and completion commands — in the printer's language, once the
// tree is built.
func (c *cli) translateCobra(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "help":
			cmd.Short = c.say.T("Help about any command")
		case "completion":
			cmd.Short = c.say.T("Generate the autocompletion script for the specified shell")
		}
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		// Short, Long and the flags' usage are catalog keys marked with
		// lang.N where the commands are built: translated here in one
		// place rather than at each of their hundreds of call sites,
		// which the binary's size ceiling would feel. A Long that is a
		// format (task's, config migrate's) is translated and formatted
		// where its command is built, and this lookup leaves it as it is.
		cmd.Short, cmd.Long = c.say.T(cmd.Short), c.say.T(cmd.Long)
		cmd.InitDefaultHelpFlag()
		translate := func(f *pflag.Flag) { f.Usage = c.say.T(f.Usage) }
		cmd.Flags().VisitAll(translate)
		cmd.PersistentFlags().VisitAll(translate)
		if f := cmd.Flags().Lookup("help"); f != nil {
			f.Usage = c.say.Sprintf("help for %s", cmd.Name())
		}
		if f := cmd.Flags().Lookup("version"); f != nil {
			f.Usage = c.say.Sprintf("version for %s", cmd.Name())
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// stamp is t for a person: RFC 3339 in English (as --json has it), the
// date and minute in Chinese ("2026年12月6日 18:00"), local time.
func (c *cli) stamp(t time.Time) string {
	if c.say.Tag() == lang.EN {
		return t.Local().Format(time.RFC3339)
	}
	return c.say.DateTime(t.Local())
}
