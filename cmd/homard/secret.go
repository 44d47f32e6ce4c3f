package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) secretCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: lang.N("Keep credentials in the encrypted vault, bound to the hosts they are for"),
		Long: lang.N(`Secrets are encrypted at rest (AES-256-GCM; the key is data/vault.key, mode
0600) and bound to host names. A tool refers to a secret by name only; homard
puts the value into a request at the network boundary, and only for a bound
host. The value never appears in a plan, a prompt, a tool result, the audit
trail or a log: known values are redacted in raw, base64, hex and URL-encoded
form, and a proposal whose arguments contain one is denied.`),
	}
	cmd.AddCommand(c.secretSetCmd(), c.secretListCmd(), c.secretRmCmd())
	return cmd
}

func (c *cli) secretSetCmd() *cobra.Command {
	var s app.Secret
	cmd := &cobra.Command{
		Use:   "set NAME --host HOST", // lang:en
		Short: lang.N("Store a secret read from stdin (never from the command line)"),
		/* lang:en */ Example: `  homard secret set github --host api.github.com        # type the token, then Enter
  printf %s "$TOKEN" | homard secret set github --host api.github.com
  homard secret set weather --host api.weather.example --header X-Api-Key --format '{}'
  homard secret set nas --host nas.lan:8080 --allow-http     # a home-lab service without TLS
  homard secret set telegram --channel telegram              # a bot token: only that channel gets it`,
	}
	f := cmd.Flags()
	f.StringSliceVar(&s.Hosts, "host", nil, lang.N("host `NAME` the secret may be sent to (repeat for more; exact, no wildcards)"))
	f.StringVar(&s.Header, "header", "Authorization", lang.N("HTTP header the value goes into"))
	f.StringVar(&s.Format, "format", "Bearer {}", lang.N( // lang:en: the default value
		"header value; {} is replaced by the secret"))
	f.StringVar(&s.Channel, "channel", "", c.say.Sprintf("a chat channel's bot token (`platform`: %s): no host; never released to a tool", config.PlatformList("or")))
	f.BoolVar(&s.AllowHTTP, "allow-http", false, lang.N("also send it over plain http:// (in clear text: only for a service on your own network without TLS)"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(_ context.Context, r *app.Runtime, args []string) error {
		s.Name = args[0]
		value, err := c.readSecret(s.Name)
		if err != nil {
			return err
		}
		if err := r.Owner.SecretSet(s, value); err != nil {
			return err
		}
		over := ""
		if s.AllowHTTP {
			over = c.say.T(" (plain http allowed)")
		}
		to := strings.Join(s.Hosts, ", ")
		if s.Channel != "" {
			to = c.say.Sprintf("the %s channel only", s.Channel)
		}
		c.say.Fprintf(c.stdout, "stored %s for %s%s\n", termtext.Line(s.Name), termtext.Line(to), over)
		return nil
	})
}

// readSecret reads one value from stdin: without echo on a terminal,
// otherwise everything piped in (up to 64 KiB).
func (c *cli) readSecret(name string) ([]byte, error) {
	if f, ok := c.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		c.say.Fprintf(c.stderr, "value for %s (not shown): ", name)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(c.stderr)
		if err != nil {
			return nil, c.say.Errorf("read secret: %w", err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(c.stdin, 64<<10+1))
	if err != nil {
		return nil, c.say.Errorf("read secret from stdin: %w", err)
	}
	if len(b) > 64<<10 {
		return nil, usage(c.say.Errorf("the secret on stdin is over 64 KiB"))
	}
	return b, nil
}

func (c *cli) secretListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List secret names and the hosts they are bound to (never values)")}
	load := func(_ context.Context, r *app.Runtime) ([]app.Secret, error) { return r.Owner.SecretList(), nil }
	return listCmd(c, cmd, lang.N("print a JSON array (schema: docs/JSON.md)"), load, listing[app.Secret]{
		json:   jsonEach(secretOut),
		empty:  c.say.T("no secrets"),
		header: "NAME\tHOSTS\tSCHEMES\tHEADER\tFORMAT\tCREATED",
		row: func(w io.Writer, s app.Secret) {
			schemes := "https"
			if s.AllowHTTP {
				schemes = "https,http"
			}
			hosts := strings.Join(s.Hosts, ",")
			if s.Channel != "" {
				hosts, schemes = "channel:"+s.Channel, "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(s.Name), termtext.Line(hosts), schemes,
				termtext.Line(s.Header), termtext.Line(s.Format), s.Created.Local().Format(time.DateTime))
		},
	})
}

func (c *cli) secretRmCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rm NAME", Short: lang.N("Delete a secret")} // lang:en
	return c.argCmd(cmd, func(_ context.Context, r *app.Runtime, name string) (string, error) {
		return "removed " + termtext.Line(name), r.Owner.SecretRemove(name)
	})
}
