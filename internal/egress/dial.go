package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// dialContext resolves the host itself, refuses the whole name if any of
// its addresses is denied (a name that mixes public and private records is
// an attack, not a fallback), and then dials only the addresses it
// checked. A net.Dialer.Control check on the socket address backs it up.
// Allow-listed "host:port" endpoints skip the address checks.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %q: %v", ErrInvalidHost, addr, err)
	}
	canon, port, err := canonHostPort(host, portStr)
	if err != nil {
		return nil, err
	}
	bypass := c.allowDial[net.JoinHostPort(canon, strconv.Itoa(int(port)))]
	var ips []netip.Addr
	if ip, isIP, _ := ParseHost(host); isIP {
		ips = []netip.Addr{ip}
	} else {
		ips, err = c.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("egress: resolve %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("%w: %s resolved to nothing", ErrNoAddress, host)
		}
	}
	if !bypass {
		for _, ip := range ips {
			if err := Allowed(ip); err != nil {
				err.(*BlockedError).Host = host
				return nil, err
			}
		}
	}
	d := dialer(bypass)
	var errs []error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// dialer returns the dialer for checked addresses (with the Control
// check) or for an allow-listed endpoint (without it).
func dialer(bypass bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !bypass {
		d.Control = controlAllowed
	}
	return d
}

// controlAllowed runs just before connect(2) with the exact socket
// address; it fails closed on anything it cannot parse.
func controlAllowed(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check dial address %q", ErrBlockedAddress, address)
	}
	return Allowed(ap.Addr())
}
