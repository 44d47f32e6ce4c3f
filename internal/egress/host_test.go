package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestParseHost(t *testing.T) {
	tests := []struct {
		host string
		want string // address, "" for a name, "error" for an error
	}{
		{"example.com", ""},
		{"Example.COM.", ""},
		{"a_b.example", ""},
		{"xn--nxasmq6b.com", ""},
		{"0x.example", ""},
		{"1e100.net", ""},
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0x7F.0X0.0.01", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"127.0.0.1.", "127.0.0.1"},
		{"4294967295", "255.255.255.255"},
		{"[::1]", "::1"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"[2606:4700::1111]", "2606:4700::1111"},
		{"", "error"},
		{".", "error"},
		{"a..b", "error"},
		{"127.0.0.1..", "error"},
		{".127.0.0.1", "error"},
		{"4294967296", "error"},
		{"256.0.0.1", "error"},
		{"1.2.3.256", "error"},
		{"1.2.65536", "error"},
		{"1.2.3.4.5", "error"},
		{"foo.123", "error"},
		{"08.0.0.1", "error"},
		{"0x7g.1", "error"}, // the last label is numeric, so all must be
		{"1.0xg", ""},       // the last label is not numeric: a name
		{"127.0.0.1 ", "error"},
		{"127.0.0.1%00", "error"},
		{"exa mple.com", "error"},
		{"ex@mple.com", "error"},
		{"ｅxample.com", "error"},
		{"１２７.０.０.１", "error"},
		{"[fe80::1%25eth0]", "error"},
		{"fe80::1%eth0", "error"},
		{"[::1", "error"},
		{"[127.0.0.1]", "error"},
		{":::", "error"},
		{strings.Repeat("a", 64) + ".com", "error"},
		{strings.Repeat("a.", 127) + "com", "error"},
	}
	for _, tt := range tests {
		ip, isIP, err := ParseHost(tt.host)
		switch tt.want {
		case "error":
			if err == nil || !errors.Is(err, ErrInvalidHost) {
				t.Errorf("ParseHost(%q) = %v, %v, %v; want ErrInvalidHost", tt.host, ip, isIP, err)
			}
		case "":
			if err != nil || isIP {
				t.Errorf("ParseHost(%q) = %v, %v, %v; want a DNS name", tt.host, ip, isIP, err)
			}
		default:
			if err != nil || !isIP || ip != netip.MustParseAddr(tt.want) {
				t.Errorf("ParseHost(%q) = %v, %v, %v; want %s", tt.host, ip, isIP, err, tt.want)
			}
		}
	}
}
