package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseHost reads a URL host the way browsers (the WHATWG URL standard) and
// libc's inet_aton do, so that what is checked is what would be dialed.
//
// It returns ok=true and the address for an IP literal, including every
// numeric IPv4 spelling: decimal "2130706433", octal "0177.0.0.1", hex
// "0x7f.0.0.1", short forms "127.1" and "127.0.1", and mixtures of them.
// It returns ok=false and no error for a DNS name.
//
// Brackets around IPv6 literals are accepted. It fails closed with an
// error wrapping ErrInvalidHost for: an empty host, an IPv6 zone
// ("fe80::1%eth0"), non-ASCII (pass the punycode "xn--" form), characters
// other than letters, digits, '-', '_' and '.', empty labels, a host longer
// than 253 bytes, and a host whose last label is numeric but which is not a
// valid IPv4 address ("1.2.3.256", "foo.123", "1.2.3.4.5"): browsers refuse
// those too, while resolvers disagree about them.
//
// One trailing dot (the DNS root) is allowed. For a numeric host it is
// ignored, as browsers do, so "127.0.0.1." is 127.0.0.1; two or more are an
// error.
func ParseHost(host string) (netip.Addr, bool, error) {
	if host == "" {
		return netip.Addr{}, false, fmt.Errorf("%w: empty host", ErrInvalidHost)
	}
	if len(host) > 255 {
		return netip.Addr{}, false, fmt.Errorf("%w: host longer than 253 bytes", ErrInvalidHost)
	}
	if host[0] == '[' || strings.Contains(host, ":") {
		return parse6(host)
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c >= 0x80:
			return netip.Addr{}, false, fmt.Errorf("%w: %q is not ASCII; use its punycode (xn--) form", ErrInvalidHost, host)
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return netip.Addr{}, false, fmt.Errorf("%w: %q contains %q", ErrInvalidHost, host, c)
		}
	}
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > 253 {
		return netip.Addr{}, false, fmt.Errorf("%w: %q", ErrInvalidHost, host)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return netip.Addr{}, false, fmt.Errorf("%w: %q has an empty or over-long label", ErrInvalidHost, host)
		}
	}
	if !endsInNumber(labels[len(labels)-1]) {
		return netip.Addr{}, false, nil
	}
	ip, ok := parseIPv4(labels)
	if !ok {
		return netip.Addr{}, false, fmt.Errorf("%w: %q looks like a numeric IPv4 address but is not a valid one", ErrInvalidHost, host)
	}
	return ip, true, nil
}

func parse6(host string) (netip.Addr, bool, error) {
	s := host
	if s[0] == '[' {
		if len(s) < 2 || s[len(s)-1] != ']' {
			return netip.Addr{}, false, fmt.Errorf("%w: %q has unbalanced brackets", ErrInvalidHost, host)
		}
		s = s[1 : len(s)-1]
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || !ip.Is6() {
		return netip.Addr{}, false, fmt.Errorf("%w: %q is not an IPv6 address", ErrInvalidHost, host)
	}
	if ip.Zone() != "" {
		return netip.Addr{}, false, fmt.Errorf("%w: %q has a zone", ErrInvalidHost, host)
	}
	return ip, true, nil
}

// endsInNumber is the WHATWG "ends in a number" test on the last label.
// "0x" alone counts: it is the number 0.
func endsInNumber(last string) bool {
	if last != "" && allIn(last, "0123456789") {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return allIn(last[2:], "0123456789abcdefABCDEF")
	}
	return false
}

// allIn reports whether every byte of s is in set (true for "").
func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// parseIPv4 is the WHATWG IPv4 parser (inet_aton without its trailing
// garbage): 1-4 parts, each decimal, octal (leading 0) or hex (0x); every
// part but the last is one byte, the last fills the remaining bytes.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(5-len(parts)) * 8 // bits the last part may fill
		if n >= 1<<rest {
			return netip.Addr{}, false
		}
		v = v<<rest | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	case s == "":
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			return 0, false // stop before overflow; too big for any part
		}
	}
	return n, true
}
