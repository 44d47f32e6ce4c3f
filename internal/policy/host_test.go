package policy

import (
	"regexp"
	"testing"
)

// oldRuleHostRE is the regexp HostPattern (then config's ruleHost) replaced; the fuzz test holds the
// hand-written check to it.
var oldRuleHostRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|\*(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?){2,})$`)

func FuzzRuleHostMatchesRegexp(f *testing.F) {
	for _, s := range []string{"nas", "api.example.com", "192.168.1.20", "*.example.com", "*.com", "*", "",
		"a-.b", "-a.b", "a..b", "A.b", "a_b", "*.a.b.c", "x." + string(make([]byte, 64)), "ab-cd.e1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := HostPattern(h), oldRuleHostRE.MatchString(h); got != want {
			t.Fatalf("HostPattern(%q) = %v; the regexp says %v", h, got, want)
		}
	})
}
