package egress

import (
	"net/netip"
)

// Class names the kind of address Classify found. The zero value,
// ClassInvalid, is denied: anything not positively recognised as public
// fails closed.
type Class uint8

const (
	ClassInvalid       Class = iota // invalid or zoned address
	ClassPublic                     // globally reachable unicast: allowed
	ClassUnspecified                // 0.0.0.0, ::
	ClassThisNetwork                // 0.0.0.0/8
	ClassLoopback                   // 127.0.0.0/8, ::1
	ClassPrivate                    // RFC 1918, fc00::/7 (unique local)
	ClassShared                     // 100.64.0.0/10 carrier-grade NAT
	ClassLinkLocal                  // 169.254.0.0/16 (cloud metadata), fe80::/10
	ClassIETFProtocol               // 192.0.0.0/24, 2001::/23 assignments
	ClassDocumentation              // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
	ClassBenchmarking               // 198.18.0.0/15, 2001:2::/48
	ClassMulticast                  // 224.0.0.0/4, ff00::/8
	ClassBroadcast                  // 255.255.255.255
	ClassReserved                   // 240.0.0.0/4, ::/8, unallocated IPv6, SRv6, IPv4-compatible, ...
	ClassSiteLocal                  // fec0::/10 (deprecated)
	ClassDiscard                    // 100::/64
	ClassORCHID                     // 2001:10::/28, 2001:20::/28
	ClassNAT64                      // 64:ff9b:1::/48 local-use translation
	Class6to4                       // 2002::/16, 192.88.99.0/24 relays
	ClassTeredo                     // 2001::/32
)

var classNames = [...]string{
	ClassInvalid:       "invalid",
	ClassPublic:        "public",
	ClassUnspecified:   "unspecified",
	ClassThisNetwork:   "this-network",
	ClassLoopback:      "loopback",
	ClassPrivate:       "private",
	ClassShared:        "shared (carrier-grade NAT)",
	ClassLinkLocal:     "link-local",
	ClassIETFProtocol:  "IETF protocol assignment",
	ClassDocumentation: "documentation",
	ClassBenchmarking:  "benchmarking",
	ClassMulticast:     "multicast",
	ClassBroadcast:     "broadcast",
	ClassReserved:      "reserved",
	ClassSiteLocal:     "site-local",
	ClassDiscard:       "discard-only",
	ClassORCHID:        "ORCHID",
	ClassNAT64:         "local-use NAT64",
	Class6to4:          "6to4",
	ClassTeredo:        "Teredo",
}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

type rangeClass struct {
	p netip.Prefix
	c Class
}

// v4Ranges are the denied IPv4 ranges, most specific first (IANA IPv4
// Special-Purpose Address Registry plus multicast and class E). AS112 and
// AMT ranges are globally reachable and so are not listed.
var v4Ranges = []rangeClass{
	{netip.MustParsePrefix("0.0.0.0/32"), ClassUnspecified},
	{netip.MustParsePrefix("0.0.0.0/8"), ClassThisNetwork},
	{netip.MustParsePrefix("10.0.0.0/8"), ClassPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), ClassShared},
	{netip.MustParsePrefix("127.0.0.0/8"), ClassLoopback},
	{netip.MustParsePrefix("169.254.0.0/16"), ClassLinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), ClassPrivate},
	{netip.MustParsePrefix("192.0.0.0/24"), ClassIETFProtocol}, // incl. Oracle metadata 192.0.0.192
	{netip.MustParsePrefix("192.0.2.0/24"), ClassDocumentation},
	{netip.MustParsePrefix("192.88.99.0/24"), Class6to4}, // deprecated relay anycast
	{netip.MustParsePrefix("192.168.0.0/16"), ClassPrivate},
	{netip.MustParsePrefix("198.18.0.0/15"), ClassBenchmarking},
	{netip.MustParsePrefix("198.51.100.0/24"), ClassDocumentation},
	{netip.MustParsePrefix("203.0.113.0/24"), ClassDocumentation},
	{netip.MustParsePrefix("224.0.0.0/4"), ClassMulticast},
	{netip.MustParsePrefix("255.255.255.255/32"), ClassBroadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), ClassReserved},
}

// v6 prefixes with special handling.
var (
	v6Compat   = netip.MustParsePrefix("::/96")           // IPv4-compatible (deprecated)
	v6SIIT     = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765)
	v6NAT64    = netip.MustParsePrefix("64:ff9b::/96")    // well-known NAT64 prefix (RFC 6052)
	v6NAT64Loc = netip.MustParsePrefix("64:ff9b:1::/48")  // local-use NAT64 (RFC 8215)
	v6Teredo   = netip.MustParsePrefix("2001::/32")
	v66to4     = netip.MustParsePrefix("2002::/16")
	v6Global   = netip.MustParsePrefix("2000::/3")
)

// v6Ranges are denied IPv6 ranges without embedded IPv4, most specific
// first. Anything outside 2000::/3 not handled earlier is reserved.
var v6Ranges = []rangeClass{
	{netip.MustParsePrefix("::/128"), ClassUnspecified},
	{netip.MustParsePrefix("::1/128"), ClassLoopback},
	{netip.MustParsePrefix("100::/64"), ClassDiscard},
	{netip.MustParsePrefix("2001:db8::/32"), ClassDocumentation},
	{netip.MustParsePrefix("2001:2::/48"), ClassBenchmarking},
	{netip.MustParsePrefix("2001:10::/28"), ClassORCHID},
	{netip.MustParsePrefix("2001:20::/28"), ClassORCHID},
	{netip.MustParsePrefix("2001::/23"), ClassIETFProtocol},
	{netip.MustParsePrefix("3fff::/20"), ClassDocumentation},
	{netip.MustParsePrefix("5f00::/16"), ClassReserved}, // SRv6 SIDs (RFC 9602)
	{netip.MustParsePrefix("fc00::/7"), ClassPrivate},
	{netip.MustParsePrefix("fe80::/10"), ClassLinkLocal},
	{netip.MustParsePrefix("fec0::/10"), ClassSiteLocal},
	{netip.MustParsePrefix("ff00::/8"), ClassMulticast},
}

// Classify reports what kind of address ip is and whether egress may
// connect to it (ok). Only ClassPublic is ever ok.
//
// IPv6 addresses that embed an IPv4 address are judged by it:
//   - IPv4-mapped ::ffff:a.b.c.d is exactly the IPv4 address (the kernel
//     dials it as such), so it is allowed when a.b.c.d is public.
//   - The well-known NAT64 prefix 64:ff9b::/96 is allowed when the
//     embedded address is public (IPv6-only networks rely on it; RFC 6052
//     forbids it for non-global IPv4, so those are denied).
//   - IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, local-use
//     NAT64 64:ff9b:1::/48, 6to4 2002::/16 and Teredo 2001::/32 are always
//     denied: they are deprecated or operator-local, and no web service
//     needs them. The class names the embedded address when it is itself
//     denied (2002:7f00:1:: is "loopback"), so errors say what was meant.
//   - ISATAP interface identifiers (…:0:5efe:a.b.c.d, …:200:5efe:…) under
//     an otherwise public prefix are denied when the embedded IPv4 is.
//
// Addresses with a zone, and the invalid zero Addr, are ClassInvalid.
// Network-specific NAT64 prefixes chosen by an operator cannot be
// recognised from the address alone.
func Classify(ip netip.Addr) (Class, bool) {
	if !ip.IsValid() || ip.Zone() != "" {
		return ClassInvalid, false
	}
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if ip.Is4() {
		c := classify4(ip)
		return c, c == ClassPublic
	}
	b := ip.As16()
	switch {
	case v6Compat.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
		return embedded(b[12:16], ClassReserved), false
	case v6SIIT.Contains(ip):
		return embedded(b[12:16], ClassReserved), false
	case v6NAT64.Contains(ip):
		c := embedded(b[12:16], ClassPublic)
		return c, c == ClassPublic
	case v6NAT64Loc.Contains(ip):
		return embedded(b[12:16], ClassNAT64), false
	case v6Teredo.Contains(ip):
		// Client address is bits 96-127, bit-inverted; server is 32-63.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		c := embedded(client[:], ClassTeredo)
		if c == ClassTeredo {
			c = embedded(b[4:8], ClassTeredo)
		}
		return c, false
	case v66to4.Contains(ip):
		return embedded(b[2:6], Class6to4), false
	}
	for _, r := range v6Ranges {
		if r.p.Contains(ip) {
			return r.c, false
		}
	}
	if !v6Global.Contains(ip) {
		return ClassReserved, false
	}
	// ISATAP interface identifier: 00-00-5E-FE with the u/g bits free.
	if b[8]&^0x03 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		c := embedded(b[12:16], ClassPublic)
		return c, c == ClassPublic
	}
	return ClassPublic, true
}

// embedded returns the class of the IPv4 address in v4 if it is denied,
// and otherwise the class the surrounding IPv6 address has.
func embedded(v4 []byte, outer Class) Class {
	c := classify4(netip.AddrFrom4([4]byte(v4)))
	if c != ClassPublic {
		return c
	}
	return outer
}

func classify4(ip netip.Addr) Class {
	for _, r := range v4Ranges {
		if r.p.Contains(ip) {
			return r.c
		}
	}
	return ClassPublic
}

// Allowed returns nil if egress may connect to ip, and otherwise a
// *BlockedError wrapping ErrBlockedAddress.
func Allowed(ip netip.Addr) error {
	c, ok := Classify(ip)
	if ok {
		return nil
	}
	return &BlockedError{Addr: ip, Class: c}
}
