package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
)

// deniedV4 is the test's own list of denied IPv4 ranges (an oracle written
// independently of v4Ranges).
var deniedV4 = []string{
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
	"192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	"224.0.0.0/4", "240.0.0.0/4",
}

func v4u(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func u4(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// samples returns the first, a middle and the last address of p.
func samples(p netip.Prefix) []netip.Addr {
	first := v4u(p.Addr())
	last := first | (1<<(32-p.Bits()) - 1)
	return []netip.Addr{u4(first), u4(first + (last-first)/2 + 1), u4(last)}
}

// embeddings returns v4 written in every IPv6 form Classify must see through.
func embeddings(v4 netip.Addr) map[string]netip.Addr {
	a := v4.As4()
	mk := func(prefix []byte, at int, v [4]byte) netip.Addr {
		var b [16]byte
		copy(b[:], prefix)
		copy(b[at:], v[:])
		return netip.AddrFrom16(b)
	}
	xor := [4]byte{^a[0], ^a[1], ^a[2], ^a[3]}
	return map[string]netip.Addr{
		"mapped":     mk([]byte{10: 0xff, 11: 0xff}, 12, a),
		"compatible": mk(nil, 12, a),
		"siit":       mk([]byte{8: 0xff, 9: 0xff}, 12, a),
		"nat64":      mk([]byte{0, 0x64, 0xff, 0x9b}, 12, a),
		"nat64local": mk([]byte{0, 0x64, 0xff, 0x9b, 0, 1}, 12, a),
		"6to4":       mk([]byte{0x20, 0x02}, 2, a),
		"teredo":     mk([]byte{0x20, 0x01, 0, 0, 8, 8, 8, 8}, 12, xor),
		// A public server with the client hidden in the server field is
		// still Teredo and still denied.
		"teredoserv": mk([]byte{0x20, 0x01, 0, 0, a[0], a[1], a[2], a[3]}, 12, [4]byte{0xf7, 0xf7, 0xf7, 0xf7}),
		"isatap":     mk([]byte{0x26, 0x06, 0x47, 0, 0, 0, 0, 0, 0, 0, 0x5e, 0xfe}, 12, a),
		"isatap-u":   mk([]byte{0x26, 0x06, 0x47, 0, 0, 0, 0, 0, 2, 0, 0x5e, 0xfe}, 12, a),
	}
}

// spellings returns numeric host spellings of v4 that ParseHost must read.
func spellings(v4 netip.Addr) []string {
	a := v4.As4()
	v := v4u(v4)
	return []string{
		v4.String(),
		v4.String() + ".",
		fmt.Sprint(v),
		fmt.Sprintf("0%o.0%o.0%o.0%o", a[0], a[1], a[2], a[3]),
		fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", a[0], a[1], a[2], a[3]),
		fmt.Sprintf("0X%X", v),
		fmt.Sprintf("0%o", v),
		fmt.Sprintf("%d.%d", a[0], v&0xffffff),
		fmt.Sprintf("%d.%d.%d", a[0], a[1], v&0xffff),
		fmt.Sprintf("0x%x.%d.0%o", a[0], a[1], v&0xffff),
		"[::ffff:" + v4.String() + "]",
	}
}

func TestDeniedV4InEveryForm(t *testing.T) {
	for _, s := range deniedV4 {
		p := netip.MustParsePrefix(s)
		for _, ip := range samples(p) {
			if c, ok := Classify(ip); ok || c == ClassPublic {
				t.Errorf("Classify(%v) = %v, %v; want denied (%s)", ip, c, ok, s)
			}
			if err := Allowed(ip); !errors.Is(err, ErrBlockedAddress) {
				t.Errorf("Allowed(%v) = %v; want ErrBlockedAddress", ip, err)
			}
			for form, e := range embeddings(ip) {
				if c, ok := Classify(e); ok || c == ClassPublic {
					t.Errorf("Classify(%v) [%s of %v] = %v, %v; want denied", e, form, ip, c, ok)
				}
			}
			for _, h := range spellings(ip) {
				got, isIP, err := ParseHost(h)
				if err != nil || !isIP || got.Unmap() != ip {
					t.Errorf("ParseHost(%q) = %v, %v, %v; want %v", h, got, isIP, err, ip)
					continue
				}
				if Allowed(got) == nil {
					t.Errorf("Allowed(ParseHost(%q)) = nil; want denied", h)
				}
			}
		}
	}
}

func TestEmbeddedClassNamesInner(t *testing.T) {
	for form, e := range embeddings(netip.MustParseAddr("127.0.0.1")) {
		if c, _ := Classify(e); c != ClassLoopback {
			t.Errorf("Classify(%v) [%s] = %v; want loopback", e, form, c)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		ip   string
		want Class
	}{
		// allowed
		{"8.8.8.8", ClassPublic},
		{"1.1.1.1", ClassPublic},
		{"2606:4700::1111", ClassPublic},
		{"2001:4860:4860::8888", ClassPublic},
		{"::ffff:8.8.8.8", ClassPublic},
		{"64:ff9b::8.8.8.8", ClassPublic},
		{"2606:4700::5efe:8.8.8.8", ClassPublic},
		{"192.31.196.1", ClassPublic}, // AS112, globally reachable
		// just outside denied ranges
		{"9.255.255.255", ClassPublic}, {"11.0.0.0", ClassPublic},
		{"100.63.255.255", ClassPublic}, {"100.128.0.0", ClassPublic},
		{"126.255.255.255", ClassPublic}, {"128.0.0.0", ClassPublic},
		{"169.253.255.255", ClassPublic}, {"169.255.0.0", ClassPublic},
		{"172.15.255.255", ClassPublic}, {"172.32.0.0", ClassPublic},
		{"192.167.255.255", ClassPublic}, {"192.169.0.0", ClassPublic},
		{"198.17.255.255", ClassPublic}, {"198.20.0.0", ClassPublic},
		{"223.255.255.255", ClassPublic}, {"2000::", ClassPublic},
		{"3fff:ffff::", ClassPublic}, {"2001:200::1", ClassPublic},
		// denied v4
		{"0.0.0.0", ClassUnspecified}, {"0.1.2.3", ClassThisNetwork},
		{"127.0.0.1", ClassLoopback}, {"10.1.2.3", ClassPrivate},
		{"169.254.169.254", ClassLinkLocal}, {"100.100.100.200", ClassShared},
		{"192.0.0.192", ClassIETFProtocol}, {"255.255.255.255", ClassBroadcast},
		{"239.255.255.250", ClassMulticast}, {"240.0.0.1", ClassReserved},
		{"198.19.0.1", ClassBenchmarking}, {"203.0.113.9", ClassDocumentation},
		// denied v6
		{"::", ClassUnspecified}, {"::1", ClassLoopback},
		{"::2", ClassThisNetwork}, {"::8.8.8.8", ClassReserved},
		{"::ffff:0:8.8.8.8", ClassReserved}, {"1::", ClassReserved},
		{"64:ff9b:1::8.8.8.8", ClassNAT64},
		{"2002:808:808::1", Class6to4}, {"2001:0:808:808::f7f7:f7f7", ClassTeredo},
		{"fe80::1", ClassLinkLocal}, {"fec0::1", ClassSiteLocal},
		{"fc00::1", ClassPrivate}, {"fd00:ec2::254", ClassPrivate},
		{"ff02::1", ClassMulticast}, {"100::1", ClassDiscard},
		{"2001:db8::1", ClassDocumentation}, {"3fff::1", ClassDocumentation},
		{"2001:2::1", ClassBenchmarking}, {"2001:10::1", ClassORCHID},
		{"2001:20::1", ClassORCHID}, {"2001:1::1", ClassIETFProtocol},
		{"5f00::1", ClassReserved}, {"4000::1", ClassReserved},
		{"e000::1", ClassReserved},
		{"fe80::5efe:7f00:1", ClassLinkLocal},
		{"2606:4700::200:5efe:a00:1", ClassPrivate},
		// zones fail closed even on public addresses
		{"2606:4700::1111%eth0", ClassInvalid}, {"fe80::1%eth0", ClassInvalid},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.ip)
		c, ok := Classify(ip)
		if c != tt.want || ok != (tt.want == ClassPublic) {
			t.Errorf("Classify(%s) = %v, %v; want %v, %v", tt.ip, c, ok, tt.want, tt.want == ClassPublic)
		}
		if err := Allowed(ip); (err == nil) != (tt.want == ClassPublic) {
			t.Errorf("Allowed(%s) = %v; want denied=%v", tt.ip, err, tt.want != ClassPublic)
		}
	}
	if c, ok := Classify(netip.Addr{}); ok || c != ClassInvalid {
		t.Errorf("Classify(Addr{}) = %v, %v; want invalid, false", c, ok)
	}
}

func TestBlockedErrorMessage(t *testing.T) {
	err := Allowed(netip.MustParseAddr("169.254.169.254"))
	var be *BlockedError
	if !errors.As(err, &be) || be.Class != ClassLinkLocal {
		t.Fatalf("Allowed(metadata) = %v; want *BlockedError link-local", err)
	}
	for _, want := range []string{"169.254.169.254", "link-local", "metadata", "[egress] allow"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func BenchmarkAllowed(b *testing.B) {
	ips := []netip.Addr{
		netip.MustParseAddr("8.8.8.8"),
		netip.MustParseAddr("2606:4700::1111"),
		netip.MustParseAddr("::ffff:1.1.1.1"),
		netip.MustParseAddr("64:ff9b::8.8.4.4"),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := Allowed(ips[i%len(ips)]); err != nil {
			b.Fatal(err)
		}
	}
}
