package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) tokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: lang.N("Create, list or revoke bearer tokens for the HTTP API"),
		Long: lang.N(`A token lets a program use 'homard serve''s API with
"Authorization: Bearer TOKEN" instead of a browser's login cookie. It acts
as you, the owner: treat it like a password.

homard keeps only the SHA-256 of a token's secret part, so a token is shown
once, when it is created, and never again. Revoking takes effect on the
next request, even on a running serve.`),
	}
	cmd.AddCommand(c.tokenCreateCmd(), c.tokenListCmd(), c.tokenRevokeCmd())
	return cmd
}

func (c *cli) tokenCreateCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "create",
		Short: lang.N("Create a token and print it once"),
		/* lang:en */ Example: `  TOKEN=$(homard token create --name laptop)
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8787/api/info`,
	}
	cmd.Flags().StringVar(&name, "name", "", lang.N("a `NAME` to recognise the token by in 'homard token list'"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		tok, t, err := r.Owner.TokenCreate(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, tok)
		c.say.Fprintf(c.stderr, "token %s created; it is shown only now. Revoke it with: homard token revoke %s\n", t.ID, t.ID)
		return nil
	})
}

func (c *cli) tokenListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List tokens (never their secrets)")}
	load := func(ctx context.Context, r *app.Runtime) ([]app.APIToken, error) { return r.Owner.TokenList(ctx) }
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format(time.DateTime)
	}
	return listCmd(c, cmd, lang.N("print a JSON array (schema: docs/JSON.md)"), load, listing[app.APIToken]{
		json:   jsonEach(tokenOut),
		empty:  c.say.T("no tokens; create one with: homard token create --name NAME"),
		header: "ID\tNAME\tCREATED\tLAST USED\tSTATUS", // lang:en: column names (tabwriter aligns bytes, not wide characters)
		row: func(w io.Writer, t app.APIToken) {
			status := "valid"
			if !t.RevokedAt.IsZero() {
				status = "revoked " + when(t.RevokedAt)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, termtext.Line(t.Name), when(t.CreatedAt), when(t.LastUsedAt), status)
		},
	})
}

func (c *cli) tokenRevokeCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "revoke ID", Short: lang.N("Revoke a token at once")} // lang:en
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, id string) (string, error) {
		return "token " + id + " revoked", r.Owner.TokenRevoke(ctx, id)
	})
}
