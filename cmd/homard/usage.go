package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Usage errors say what was wrong and what to type instead, and exit 2
// (exitUsage), for every command, including those added later: strictArgs
// walks the tree once, after it is built, so no command can forget it.
//
//	homard aproval            unknown command "aproval" for "homard"; did you mean "approval"?
//	homard approval show      approval show: missing ID
//	homard approval show a b  approval show: too many arguments: want ID, got 2 ("a" "b")

// strictArgs makes every command of the tree under root check its
// positional arguments with our messages:
//   - a command with subcommands refuses an unknown one, suggesting the
//     nearest names (cobra does this for the root only, and a group
//     without Run printed its help and exited 0);
//   - a command's own validator still decides, but its error is replaced
//     by one naming the missing or extra argument from the command's Use
//     line ("show ID", "search QUERY").
func (cl *cli) strictArgs(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() {
			if c.Run == nil && c.RunE == nil {
				// A group alone shows its help; anything after it must be
				// one of its subcommands.
				c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
				c.Args = cl.unknownSubcommand
			} else if c.Args == nil {
				c.Args = cl.unknownSubcommand
			} else {
				orig := c.Args
				c.Args = func(cmd *cobra.Command, args []string) error {
					if orig(cmd, args) != nil && len(args) > 0 {
						return cl.unknownSubcommand(cmd, args)
					}
					return nil
				}
			}
		} else if orig := c.Args; orig != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := orig(cmd, args); err != nil {
					return cl.argsError(cmd, args, err)
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownSubcommand refuses any argument to a command that only takes
// subcommands, suggesting the nearest.
func (cl *cli) unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := cl.say.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, set only on its own path
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += cl.say.Sprintf("; did you mean %s?", quoteJoin(s))
	}
	return usage(cl.say.Errorf("%s\nsee `%s --help` for its commands", msg, cmd.CommandPath()))
}

// argsError rewrites a validator's error with the names from the
// command's Use line: the first missing one, or how many are too many.
func (cl *cli) argsError(cmd *cobra.Command, args []string, err error) error {
	required, optional, variadic := positionals(cmd.Use)
	name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	see := cl.say.Sprintf("\nusage: %s\nsee `%s --help`", cmd.UseLine(), cmd.CommandPath())
	switch {
	case len(args) < len(required):
		return usage(cl.say.Errorf("%s: missing %s%s", name, required[len(args)], see))
	case len(required) == 0 && len(optional) == 0 && len(args) > 0:
		return usage(cl.say.Errorf("%s: takes no arguments; got %d (%s)%s", name, len(args), quoteArgs(args), see))
	case !variadic && len(args) > len(required)+len(optional):
		want := strings.Join(append(append([]string{}, required...), optional...), " ")
		return usage(cl.say.Errorf("%s: too many arguments: want %s, got %d (%s)%s", name, want, len(args), quoteArgs(args), see))
	}
	// The validator checks something the Use line does not say.
	return usageErr("%s: %v%s", name, err, see)
}

// positionals reads the argument names of a Use line such as
// "set NAME --host HOST", "rollback ID [--hash HASH]", "search QUERY..."
// or "call TOOL [ARGS_JSON]": names in brackets are optional, flags and
// their values are skipped, and "..." makes the last name repeatable.
func positionals(use string) (required, optional []string, variadic bool) {
	fields := strings.Fields(use)
	if len(fields) < 2 {
		return nil, nil, false
	}
	skipValue := false
	for _, f := range fields[1:] {
		opt := strings.HasPrefix(f, "[")
		f = strings.Trim(f, "[]'\"")
		switch {
		case skipValue:
			skipValue = false
			continue
		case strings.HasPrefix(f, "-"):
			skipValue = !strings.Contains(f, "=")
			continue
		case f == "" || f == "..." || strings.ToUpper(f) != f:
			continue
		}
		if strings.HasSuffix(f, "...") {
			variadic = true
			f = strings.TrimSuffix(f, "...")
		}
		if opt {
			optional = append(optional, f)
		} else {
			required = append(required, f)
		}
	}
	return required, optional, variadic
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " or ")
}

// quoteArgs shows the arguments as typed, quoted, at most three.
func quoteArgs(args []string) string {
	q := []string{}
	for i, a := range args {
		if i == 3 {
			q = append(q, "…")
			break
		}
		q = append(q, fmt.Sprintf("%q", a))
	}
	return strings.Join(q, " ")
}
