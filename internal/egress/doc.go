// Package egress is homard's SSRF-safe HTTP client: the only way a tool
// reaches the network. It is the enforcement half of the "egress rules"
// hard limit (DESIGN.md §2 step 4 and step 9).
//
// Contract:
//
//   - Only https on port 443 is allowed (plus http on port 80 when
//     Options.AllowHTTP is set). Any other scheme or port is refused unless
//     the exact "scheme://host:port" is listed in Options.Allow.
//   - Every IP address a connection is about to use is checked with
//     Allowed at dial time, after DNS resolution, on every connection and
//     after every redirect: loopback, private, link-local (including the
//     cloud metadata address 169.254.169.254), CGNAT, multicast,
//     documentation, reserved and every other special-purpose range is
//     refused, in plain form and in every IPv6 embedding of an IPv4
//     address. The address that was checked is the address that is
//     dialed, so DNS rebinding cannot swap it afterwards; a second check in
//     net.Dialer.Control sees the socket address itself.
//   - Host names are read the way browsers and libc read them before
//     anything else (ParseHost): "2130706433", "0177.0.0.1", "0x7f.1" and
//     "127.1" are all 127.0.0.1 and are refused as such.
//   - Proxy environment variables are ignored, cookies are never stored,
//     redirects are limited and re-checked, caller headers are dropped when
//     a redirect leaves the origin of the first request, a redirect to
//     another host is not followed unless Options.CrossHostRedirects says
//     so (Get returns it with Response.Location), bodies are capped
//     (truncation is reported) and every request has an overall timeout.
//   - Client.NewProxy serves an extension in the service sandbox (see
//     sandbox.ServiceSpec.Proxy): CONNECT and absolute http:// requests to
//     the hosts listed for it only, each dialled by the same checked
//     dialer, one request per plain-HTTP connection. For a host with a
//     credential (NewProxyWith, ProxyOptions.Credential) a plain http://
//     request is sent on over https with the credential's header set,
//     and a CONNECT to it is refused; the response never carries the
//     value.
//   - Client.NewOpenProxy serves homard's browser (internal/browser): the
//     same proxy, admitting any host:port the Client's own rules admit
//     (scheme, port, Allow entries, literal addresses) rather than a
//     list, with the address check at dial time as always; ProxyRecord
//     carries the reason of each refusal for the browser's audit.
//
// Errors wrap the sentinels in errors.go (check them with errors.Is) and
// say what to do next. The package imports no other homard package.
package egress
