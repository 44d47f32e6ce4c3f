package egress

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// refDenied4 is the oracle for IPv4: the test's own range list.
func refDenied4(a netip.Addr) bool {
	if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return true
	}
	for _, s := range deniedV4 {
		if netip.MustParsePrefix(s).Contains(a) {
			return true
		}
	}
	return false
}

// mustDeny reports why the reference model says ip must be denied, or "".
func mustDeny(ip netip.Addr) string {
	if !ip.IsValid() || ip.Zone() != "" {
		return "invalid"
	}
	ip = ip.Unmap()
	if ip.Is4() {
		if refDenied4(ip) {
			return "denied IPv4"
		}
		return ""
	}
	b := ip.As16()
	low := netip.AddrFrom4([4]byte(b[12:16]))
	in := func(p string) bool { return netip.MustParsePrefix(p).Contains(ip) }
	switch {
	case !in("2000::/3") && !in("64:ff9b::/96"):
		return "outside global unicast"
	case in("2001::/23"), in("2001:db8::/32"), in("2002::/16"), in("3fff::/20"), in("5f00::/16"):
		return "special IPv6 range"
	case in("64:ff9b::/96") && refDenied4(low):
		return "NAT64 of a denied IPv4"
	case b[8]&^3 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe && refDenied4(low):
		return "ISATAP of a denied IPv4"
	}
	return ""
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"8.8.8.8", "127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1",
		"2002:7f00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe", "fe80::1",
		"2606:4700::5efe:c0a8:1", "2606:4700::1111", "::", "ff02::1",
	} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var ip netip.Addr
		switch len(b) {
		case 4:
			ip = netip.AddrFrom4([4]byte(b))
		case 16:
			ip = netip.AddrFrom16([16]byte(b))
		default:
			var a [16]byte
			copy(a[:], b)
			ip = netip.AddrFrom16(a)
		}
		c, ok := Classify(ip)
		if ok != (c == ClassPublic) {
			t.Fatalf("Classify(%v) = %v, %v: ok must mean public", ip, c, ok)
		}
		if (Allowed(ip) == nil) != ok {
			t.Fatalf("Allowed(%v) disagrees with Classify", ip)
		}
		if why := mustDeny(ip); why != "" && ok {
			t.Fatalf("Classify(%v) = public; want denied (%s)", ip, why)
		}
		if c.String() == "unknown" {
			t.Fatalf("Classify(%v) = unnamed class %d", ip, c)
		}
	})
}

// refAton is an independent reading of numeric IPv4 hosts (inet_aton /
// WHATWG) built on strconv; ok=false means "not a numeric IPv4 host".
func refAton(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		n, err := strconv.ParseUint(digits, base, 64)
		if err != nil || strings.ContainsAny(digits, "+-_") {
			return netip.Addr{}, false
		}
		room := uint64(8)
		if i == len(parts)-1 {
			room = uint64(8 * (5 - len(parts)))
		}
		if n >= 1<<room {
			return netip.Addr{}, false
		}
		v = v<<room | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "127.1",
		"0x7f.0x0.0.1.", "[::ffff:127.0.0.1]", "fe80::1%eth0", "1.2.3.4.5", "foo.0x",
		"169.254.43518", "0xa9fea9fe", "4294967296", "0x", "0.", "xn--bcher-kva.example",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		ip, isIP, err := ParseHost(host)
		if err != nil {
			if isIP || ip.IsValid() {
				t.Fatalf("ParseHost(%q) returned an address with an error", host)
			}
			return
		}
		if isIP != ip.IsValid() || ip.Zone() != "" {
			t.Fatalf("ParseHost(%q) = %v, %v", host, ip, isIP)
		}
		if ref, ok := refAton(host); ok {
			if !isIP || ip != ref {
				t.Fatalf("ParseHost(%q) = %v, %v; the host means %v", host, ip, isIP, ref)
			}
		}
		if ref, perr := netip.ParseAddr(strings.Trim(host, "[]")); perr == nil {
			if !isIP || ip != ref {
				t.Fatalf("ParseHost(%q) = %v, %v; netip reads %v", host, ip, isIP, ref)
			}
		}
		if isIP && mustDeny(ip) != "" && Allowed(ip) == nil {
			t.Fatalf("ParseHost(%q) = %v, which Allowed lets through", host, ip)
		}
		if isIP {
			if again, ok, err := ParseHost(ip.String()); err != nil || !ok || again != ip {
				t.Fatalf("ParseHost(%q) = %v, but ParseHost(%q) = %v, %v, %v", host, ip, ip.String(), again, ok, err)
			}
		}
	})
}

func FuzzHTMLToText(f *testing.F) {
	for _, s := range []string{
		"<p>a</p>", "<script>x", "<svg><svg></svg>t</svg>u", "a&amp;b<br>c",
		"<style>p{}</style><a href=x>link</a>", "<!-- c --><noscript>n</noscript>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := HTMLToText(b)
		if strings.Contains(out, "\n\n\n") || strings.TrimSpace(out) != out || strings.Contains(out, "  ") {
			t.Fatalf("HTMLToText(%q) = %q: whitespace not collapsed", b, out)
		}
	})
}
