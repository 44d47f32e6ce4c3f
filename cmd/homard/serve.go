package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
)

func (c *cli) serveCmd() *cobra.Command {
	var o app.ServeOptions
	var logFormat string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: lang.N("Run homard as a local HTTP service: the streaming API (and web UI)"),
		Long: lang.N(`serve runs the agent behind an HTTP API (JSON and Server-Sent Events,
described in docs/API.md) until you stop it with Ctrl+C or SIGTERM.

It listens on gateway.addr from the config (default 127.0.0.1:8787), or
--addr. Only loopback addresses are accepted unless you say otherwise:

  --allow-remote --tls-cert cert.pem --tls-key key.pem [--public-origin https://NAME:PORT]
        serve HTTPS yourself on a non-loopback address; on every interface
        (0.0.0.0) --public-origin names the address browsers use
  --allow-remote --behind-proxy --public-origin https://homard.example.com
        a reverse proxy terminates TLS and forwards to this address (see the
        docs/GUIDE.md); requests must carry the public origin's Host

Logging in: on start serve prints a one-time login URL. Open it once in
your browser (within 10 minutes): it sets an HttpOnly, SameSite=Strict
session cookie and sends you to /, so the token leaves the address bar.
For another browser, or when the link lapsed, 'homard login' prints a fresh
one without a restart. Restarting serve logs every browser out.

Scripts and other programs use a bearer token instead:
  homard token create --name laptop
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8787/api/info

Requests whose Host header is not this server's address (DNS rebinding)
or whose Origin is another site are refused, event streams included.

A turn keeps running when its browser tab closes; it is stored when it
ends. A turn waiting for your approval waits gateway.approval_wait
(default 30m) for an answer from any tab or from
'homard approval approve ID'; then the model is told it was not approved.
While serve runs, 'homard run' and 'homard chat' on the same home refuse a
session in which serve is running a turn.

Log lines go to stderr: slog key=value text on a terminal, one JSON object
a line otherwise (a service, a container); --log-format text|json|auto
chooses.

On Ctrl+C or SIGTERM running turns get --grace to finish; then they are
cancelled and nothing of them is stored.`),
		/* lang:en */ Example: `  homard serve
  homard serve --addr 127.0.0.1:9000
  homard serve --allow-remote --addr 0.0.0.0:8787 --tls-cert cert.pem --tls-key key.pem`,
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "", lang.N("listen on `HOST:PORT` (default gateway.addr, 127.0.0.1:8787)"))
	f.BoolVar(&o.AllowRemote, "allow-remote", false, lang.N("permit a non-loopback address (needs --tls-cert/--tls-key or --behind-proxy)"))
	f.StringVar(&o.TLSCert, "tls-cert", "", lang.N("serve HTTPS with this PEM certificate `FILE`"))
	f.StringVar(&o.TLSKey, "tls-key", "", lang.N("the PEM private key `FILE` of --tls-cert"))
	f.BoolVar(&o.BehindProxy, "behind-proxy", false, lang.N("a reverse proxy terminates TLS in front of this server"))
	f.StringVar(&o.PublicOrigin, "public-origin", "", lang.N("the `https://HOST[:PORT]` people open (with --behind-proxy, or --tls-cert on every interface)"))
	f.StringVar(&logFormat, "log-format", "auto", lang.N("log lines on stderr as `text`, json, or auto (json when stderr is not a terminal)"))
	f.DurationVar(&o.Grace, "grace", 10*time.Second, lang.N("how long running turns may finish on shutdown before they are cancelled"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
		defer stop()
		o.Out, o.Log = c.stdout, c.stderr
		format, err := c.resolveLogFormat(logFormat, c.stderr)
		if err != nil {
			return err
		}
		o.LogFormat = format
		return r.Serve(ctx, o)
	})
}

// resolveLogFormat turns --log-format into serve's "text" or "json":
// auto is json unless stderr is a terminal.
func (c *cli) resolveLogFormat(flag string, stderr io.Writer) (string, error) {
	switch flag {
	case "text", "json":
		return flag, nil
	case "auto", "":
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return "text", nil
		}
		return "json", nil
	}
	return "", usage(c.say.Errorf("--log-format %q: use text, json or auto", flag))
}
