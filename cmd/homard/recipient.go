package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) recipientCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "recipient",
		Short: "List or forget the chats you confirmed send_message may write to",
		Long: `send_message writes to your own paired chats as your mode allows. Any
other chat asks you the first time, in every mode; approving that message
confirms the chat, and later messages to it follow your mode. These are
the chats you confirmed.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List confirmed recipients",
		Args:  cobra.NoArgs,
		RunE: c.withRuntime(func(cmd *cobra.Command, r *app.Runtime, _ []string) error {
			rs, err := r.Store.Recipients(cmd.Context(), r.Config.Owner)
			if err != nil {
				return err
			}
			if len(rs) == 0 {
				fmt.Fprintln(c.stdout, "no confirmed recipients")
				return nil
			}
			tw := c.table("PLATFORM\tCHAT\tCONFIRMED")
			for _, x := range rs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", termtext.Line(x.Platform), termtext.Line(x.Chat), x.Confirmed.Local().Format(time.DateTime))
			}
			return tw.Flush()
		}),
	}
	remove := &cobra.Command{
		Use:   "remove PLATFORM CHAT",
		Short: "Forget a confirmed recipient: the next message to it asks again",
		Args:  cobra.ExactArgs(2),
		RunE: c.withRuntime(func(cmd *cobra.Command, r *app.Runtime, args []string) error {
			err := r.Store.Write(cmd.Context(), func(tx *store.Tx) error { return tx.RemoveRecipient(r.Config.Owner, args[0], args[1]) })
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "forgot %s chat %s\n", termtext.Line(args[0]), termtext.Line(args[1]))
			return nil
		}),
	}
	cmd.AddCommand(list, remove)
	return cmd
}
