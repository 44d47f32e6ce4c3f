package secrets

import (
	"regexp"
	"testing"
)

// oldHostRE is the regexp validHost replaced; the fuzz test holds the
// hand-written check to it.
var oldHostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$`)

func FuzzValidHostMatchesRegexp(f *testing.F) {
	for _, s := range []string{"api.github.com", "nas.lan:8080", "nas:", "nas:123456", ":80", "", "a-.b", "-a", "a..b",
		"A.b", "x:1", "1.2.3.4:65535", "a.b:c", "a:1:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := validHost(h), oldHostRE.MatchString(h); got != want {
			t.Fatalf("validHost(%q) = %v; the regexp says %v", h, got, want)
		}
	})
}
