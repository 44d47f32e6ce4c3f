package egress

import (
	"errors"
	"fmt"
	"net/netip"
)

// Sentinel errors. Every error returned by this package for a refused
// request wraps exactly one of them.
var (
	// ErrBlockedAddress: the destination IP is in a special-purpose range.
	ErrBlockedAddress = errors.New("egress: address blocked")
	// ErrScheme: the URL scheme is not https (or http with AllowHTTP).
	ErrScheme = errors.New("egress: scheme not allowed")
	// ErrPort: the port is not the default port of the scheme.
	ErrPort = errors.New("egress: port not allowed")
	// ErrTooManyRedirects: more than Options.MaxRedirects redirects.
	ErrTooManyRedirects = errors.New("egress: too many redirects")
	// ErrInvalidURL: the URL cannot be parsed or carries credentials.
	ErrInvalidURL = errors.New("egress: invalid URL")
	// ErrInvalidHost: the host is malformed, zoned, non-ASCII, or looks
	// numeric without being a valid IPv4 address.
	ErrInvalidHost = errors.New("egress: invalid host")
	// ErrNoAddress: the resolver returned no address for a name.
	ErrNoAddress = errors.New("egress: no address")
)

// allowHint tells a person how to reach a home-lab service on purpose.
const allowHint = `if this is a home-lab service you trust, add its exact "scheme://host:port" to [egress] allow in config`

// BlockedError reports a destination refused by Allowed. It wraps
// ErrBlockedAddress.
type BlockedError struct {
	Host  string // the host as written in the URL or dial address; may be empty
	Addr  netip.Addr
	Class Class
}

func (e *BlockedError) Error() string {
	what := e.Addr.String()
	if !e.Addr.IsValid() {
		what = "an invalid address"
	}
	if e.Host != "" && e.Host != what {
		what = fmt.Sprintf("%s (%s)", e.Host, what)
	}
	extra := ""
	if e.Addr.Unmap() == metadataAddr {
		extra = " (the cloud metadata service)"
	}
	return fmt.Sprintf("egress: %s is a %s address%s and may not be reached; %s",
		what, e.Class, extra, allowHint)
}

// Unwrap makes errors.Is(err, ErrBlockedAddress) true.
func (e *BlockedError) Unwrap() error { return ErrBlockedAddress }

var metadataAddr = netip.AddrFrom4([4]byte{169, 254, 169, 254})
