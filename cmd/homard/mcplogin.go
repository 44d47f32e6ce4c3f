package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/termtext"
)

// loginWait bounds how long `homard mcp login` waits for the person to
// log in: an authorization server's code lives minutes, not hours.
const loginWait = 15 * time.Minute

func (c *cli) mcpLoginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "login NAME", // lang:en
		Short:   c.say.T("Log in to a hosted MCP server (auth = \"oauth\"); its tokens are kept in the vault"),
		Example: "  homard mcp login tracker", // lang:en
	}
	return leafCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, args []string) error {
		r, err := c.open(ctx, app.Options{SkipMCP: true})
		if err != nil {
			return err
		}
		defer r.Close()
		ctx, cancel := context.WithTimeout(ctx, loginWait)
		defer cancel()
		pasted := make(chan string, 1)
		go func() { // ends with ctx: readAnswer returns when it does
			if line, err := c.readAnswer(ctx); err == nil {
				pasted <- line
			}
		}()
		show := func(authURL string) {
			c.say.Fprintf(c.stdout, "Open this address in a browser and log in to %s:\n\n  %s\n\n", termtext.Line(args[0]), termtext.Line(authURL))
			c.say.Fprintln(c.stdout, "Waiting for the browser to come back to homard. If it cannot reach this machine (homard over SSH), paste the address it ended on here, or only its code:")
		}
		l, err := r.Extensions.LoginMCP(ctx, args[0], show, pasted)
		if err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "logged in to %s: its tokens are in the vault as %s, released only to its host\n", args[0], l.Secret)
		if !l.Expires.IsZero() {
			c.say.Fprintf(c.stdout, "the access token expires %s; homard refreshes it before\n", l.Expires.Local().Format(time.DateTime))
		}
		c.say.Fprintf(c.stdout, "homard mcp test %s lists its tools; they are offered from homard's next start once trusted\n", args[0])
		return nil
	})
}

func (c *cli) mcpLogoutCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "logout NAME", Short: c.say.T("Remove a hosted MCP server's login from the vault")} // lang:en: the usage
	return leafCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, args []string) error {
		r, err := c.open(ctx, app.Options{SkipMCP: true})
		if err != nil {
			return err
		}
		defer r.Close()
		if err := r.Extensions.LogoutMCP(args[0]); err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "logged out of %s: its tokens are removed from the vault (the authorization server may still list the grant; revoke it there)\n", args[0])
		return nil
	})
}

// mcpLoginNote is what `mcp list` adds to a server's status about its
// login; "" for a server without one.
func (c *cli) mcpLoginNote(rep app.MCPServerReport) string {
	switch l := rep.Login; {
	case l == nil:
		return ""
	case !l.LoggedIn:
		return c.say.Sprintf(" (not logged in: homard mcp login %s)", rep.Name)
	case l.Expires.IsZero():
		return c.say.T(" (logged in)")
	}
	return c.say.Sprintf(" (logged in; token expires %s)", rep.Login.Expires.Local().Format(time.DateTime))
}

// mcpLoginJSON is the login of an mcpJSON (docs/JSON.md, "mcp login").
type mcpLoginJSON struct {
	LoggedIn    bool       `json:"logged_in"`
	Expires     *time.Time `json:"expires"`
	Refreshable bool       `json:"refreshable"`
	Secret      string     `json:"secret"`
}

func mcpLoginOut(rep app.MCPServerReport) *mcpLoginJSON {
	if rep.Login == nil {
		return nil
	}
	return &mcpLoginJSON{LoggedIn: rep.Login.LoggedIn, Expires: timeOrNull(rep.Login.Expires), Refreshable: rep.Login.Refreshable, Secret: rep.Login.Secret}
}
