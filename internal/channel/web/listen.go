package web

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Exposure is how the owner asked to expose a non-loopback address.
type Exposure struct {
	// AllowRemote must be set to listen beyond loopback at all.
	AllowRemote bool
	// TLS: the server serves HTTPS itself.
	TLS bool
	// BehindProxy: a reverse proxy terminates TLS; PublicOrigin must then
	// be its https origin.
	BehindProxy bool
	// PublicOrigin is the https origin browsers use (the proxy's, or this
	// server's own name with TLS); its host passes the Host check.
	PublicOrigin string
}

// ErrExposed is returned by CheckAddr for an address it refuses.
var ErrExposed = errors.New("refusing to listen beyond loopback") // lang:en

// CheckAddr says whether the gateway may listen on addr: a loopback
// address always; any other only with AllowRemote and either TLS or
// BehindProxy with an https PublicOrigin. An empty host (":8787") means
// every interface and counts as remote; with TLS it then needs
// PublicOrigin, since no Host header could name "every interface".
func CheckAddr(addr string, e Exposure) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want host:port such as 127.0.0.1:8787", addr) // lang:en
	}
	if e.BehindProxy || e.PublicOrigin != "" {
		u, err := url.Parse(e.PublicOrigin)
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("%w: --public-origin must be https://HOST[:PORT], the address people open (--behind-proxy needs it)", ErrExposed) // lang:en
		}
	}
	if isLoopbackHost(host) {
		return nil
	}
	switch {
	case !e.AllowRemote:
		return fmt.Errorf("%w: %s is not a loopback address; anyone who can reach it could try to drive your agent. "+ // lang:en
			"Keep 127.0.0.1, or pass --allow-remote with --tls-cert/--tls-key, or with --behind-proxy --public-origin https://HOST", ErrExposed, addr) // lang:en
	case !e.TLS && !e.BehindProxy:
		return fmt.Errorf("%w: --allow-remote needs --tls-cert and --tls-key, or --behind-proxy --public-origin https://HOST: "+ // lang:en
			"cookies and tokens must not cross the network in clear text", ErrExposed) // lang:en
	case e.TLS && e.PublicOrigin == "" && !isSpecific(host):
		return fmt.Errorf("%w: %s listens on every interface: pass --public-origin https://NAME:PORT, the address browsers use, "+ // lang:en
			"so that the Host check can accept it", ErrExposed, addr) // lang:en
	}
	return nil
}

// isSpecific reports whether host is one address (not every interface).
func isSpecific(host string) bool {
	ip, err := netip.ParseAddr(host)
	return host != "" && (err != nil || !ip.IsUnspecified())
}

// isLoopbackHost reports whether host (no port) names only this machine.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
