package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
)

// listing is how a command prints a list of T: a table, or with --json one
// JSON array. The row function is where text from a model, a tool, a file
// name or memory goes through termtext; listing prints the empty line and
// the header as given, so whoever builds them does the same for theirs.
type listing[T any] struct {
	// json is the --json document for the items. Nil prints the items
	// as they are (a nil slice as null).
	json func(items []T) any
	// empty is printed instead of the table when there are no items.
	// "" prints the header alone.
	empty string
	// header is the table's first line, columns separated by tabs.
	header string
	// row prints one item's line of the table, columns separated by tabs.
	row func(w io.Writer, item T)
}

// print writes items to c.stdout as l says: JSON with asJSON, else the
// empty line or the table.
func (l listing[T]) print(c *cli, items []T, asJSON bool) error {
	if asJSON {
		if l.json == nil {
			return writeJSON(c.stdout, items)
		}
		return writeJSON(c.stdout, l.json(items))
	}
	if len(items) == 0 && l.empty != "" {
		fmt.Fprintln(c.stdout, l.empty)
		return nil
	}
	tw := c.table(l.header)
	for _, it := range items {
		l.row(tw, it)
	}
	return tw.Flush()
}

// jsonEach is a list's --json document made by converting each item with
// out: an array, [] (never null) when there are none.
func jsonEach[T, J any](out func(T) J) func([]T) any {
	return func(items []T) any {
		js := make([]J, 0, len(items))
		for _, it := range items {
			js = append(js, out(it))
		}
		return js
	}
}

// table starts a table on c.stdout with its header line; the caller
// writes the rows and flushes it.
func (c *cli) table(header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

// jsonFlag declares the --json flag on cmd; usage says what it prints.
func jsonFlag(cmd *cobra.Command, asJSON *bool, usage string) {
	cmd.Flags().BoolVar(asJSON, "json", false, usage)
}

// leafCmd completes cmd (its Use, Short and the like already set, its
// flags declared) as a command whose arguments args checks and whose body
// is run, given the command's context (Ctrl+C cancels it).
func leafCmd(cmd *cobra.Command, args cobra.PositionalArgs, run func(ctx context.Context, args []string) error) *cobra.Command {
	cmd.Args = args
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), args) }
	return cmd
}

// runtimeFunc is the body of a command that needs the opened runtime; ctx
// and args are as leafCmd gives them.
type runtimeFunc func(ctx context.Context, r *app.Runtime, args []string) error

// withRuntime is run with the home opened before and closed after.
func (c *cli) withRuntime(run runtimeFunc) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		r, err := c.open(ctx, app.Options{})
		if err != nil {
			return err
		}
		defer r.Close()
		return run(ctx, r, args)
	}
}

// runtimeCmd is leafCmd for a body that needs the opened runtime.
func (c *cli) runtimeCmd(cmd *cobra.Command, args cobra.PositionalArgs, run runtimeFunc) *cobra.Command {
	return leafCmd(cmd, args, c.withRuntime(run))
}

// listCmd completes cmd (its Use, Short and the like already set) as a
// command without arguments that loads items from the runtime and prints
// them as l says, with a --json flag described by jsonUsage.
func listCmd[T any](c *cli, cmd *cobra.Command, jsonUsage string, load func(ctx context.Context, r *app.Runtime) ([]T, error), l listing[T]) *cobra.Command {
	var asJSON bool
	jsonFlag(cmd, &asJSON, jsonUsage)
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		items, err := load(ctx, r)
		if err != nil {
			return err
		}
		return l.print(c, items, asJSON)
	})
}

// argCmd completes cmd (its Use, Short and the like already set) as a
// command on one argument, a NAME or an ID: do acts on it through the
// runtime and says what it did, a line printed on stdout only when err is
// nil. Whatever in done is not homard's own, do puts through termtext.
func (c *cli) argCmd(cmd *cobra.Command, do func(ctx context.Context, r *app.Runtime, arg string) (done string, err error)) *cobra.Command {
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		done, err := do(ctx, r, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, done)
		return nil
	})
}

// showCmd completes cmd (its Use, Short and the like already set) as a
// command on one argument: load finds the one T it names, which is printed
// by print, or with --json (described by jsonUsage) as toJSON makes it.
// print puts whatever in T is not homard's own through termtext.
func showCmd[T, J any](c *cli, cmd *cobra.Command, jsonUsage string, load func(ctx context.Context, r *app.Runtime, arg string) (T, error), toJSON func(T) J, print func(w io.Writer, it T)) *cobra.Command {
	var asJSON bool
	jsonFlag(cmd, &asJSON, jsonUsage)
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		it, err := load(ctx, r, args[0])
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.stdout, toJSON(it))
		}
		print(c.stdout, it)
		return nil
	})
}
