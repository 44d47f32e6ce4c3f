package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) recipientCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "recipient",
		Short: lang.N("List or forget the chats you confirmed send_message may write to"),
		Long: lang.N(`send_message writes to your own paired chats as your mode allows. Any
other chat asks you the first time, in every mode; approving that message
confirms the chat, and later messages to it follow your mode. These are
the chats you confirmed.`),
	}
	cmd.AddCommand(c.recipientListCmd(), c.recipientRemoveCmd())
	return cmd
}

func (c *cli) recipientListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List confirmed recipients")}
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		rs, err := r.Store.Recipients(ctx, r.Config.Owner)
		if err != nil {
			return err
		}
		return listing[store.Recipient]{
			empty:  c.say.T("no confirmed recipients"),
			header: "PLATFORM\tCHAT\tCONFIRMED",
			row: func(w io.Writer, x store.Recipient) {
				fmt.Fprintf(w, "%s\t%s\t%s\n", termtext.Line(x.Platform), termtext.Line(x.Chat), x.Confirmed.Local().Format(time.DateTime))
			},
		}.print(c, rs, false)
	})
}

func (c *cli) recipientRemoveCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "remove PLATFORM CHAT", Short: lang.N("Forget a confirmed recipient: the next message to it asks again")} // lang:en
	return c.runtimeCmd(cmd, cobra.ExactArgs(2), func(ctx context.Context, r *app.Runtime, args []string) error {
		err := r.Store.Write(ctx, func(tx *store.Tx) error { return tx.RemoveRecipient(r.Config.Owner, args[0], args[1]) })
		if err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "forgot %s chat %s\n", termtext.Line(args[0]), termtext.Line(args[1]))
		return nil
	})
}
