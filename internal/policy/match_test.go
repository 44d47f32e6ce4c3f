package policy

import (
	"path"
	"strings"
	"testing"
)

func TestMatchPath(t *testing.T) {
	deep := strings.Repeat("a/", 2000) + "c"
	tests := []struct {
		pattern, name string
		want          bool
	}{
		// "dir/**": everything under dir, and (zero elements) dir itself.
		{"notes/**", "notes/a/b.md", true},
		{"notes/**", "notes/a.md", true},
		{"notes/**", "notes", true},
		{"notes/**", "notes2/a", false},
		{"notes/**", "notesx", false},
		{"notes/**", "other/notes/a", false},
		// "*" stays within one element.
		{"*.md", "a.md", true},
		{"*.md", "dir/a.md", false},
		{"notes/*", "notes/a", true},
		{"notes/*", "notes/a/b", false},
		{"notes/*", "notes", false},
		{"**/*.md", "a.md", true},
		{"**/*.md", "x/y/a.md", true},
		{"**/*.md", "x/y/a.txt", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"**/**", "a", true},
		{"**", "a/b/c", true},
		{"?.md", "a.md", true},
		{"?.md", "ab.md", false},
		{"[ab].md", "b.md", true},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		// The root itself is matched only by ".".
		{".", ".", true},
		{"**", ".", false},
		{"*", ".", false},
		// ".." is never matched, not by "**", "*" or itself.
		{"**", "../etc/passwd", false},
		{"notes/**", "notes/../secret", false},
		{"**/passwd", "a/../passwd", false},
		{"..", "..", false},
		{"*", "..", false},
		{"**", "..", false},
		// Other unclean names never match.
		{"**", "", false},
		{"", "", false},
		{"**", "/etc/passwd", false},
		{"a/**", "a//b", false},
		{"**", "./a", false},
		{"**", "a/", false},
		// A malformed pattern matches nothing.
		{"[", "[", false},
		{"notes/[a", "notes/a", false},
		// Many "**" and a deep name: linear work, not exponential.
		{"**/a/**/a/**/a/**/b", deep, false},
		{"**/a/**/a/**/a/**/c", deep, true},
	}
	for _, tt := range tests {
		if got := MatchPath(tt.pattern, tt.name); got != tt.want {
			name := tt.name
			if len(name) > 40 {
				name = name[:40] + "…"
			}
			t.Errorf("MatchPath(%q, %q) = %v; want %v", tt.pattern, name, got, tt.want)
		}
	}
}

func TestRuleMatches(t *testing.T) {
	tests := []struct {
		name    string
		rule    Rule
		tool    string
		targets []string
		want    bool
	}{
		{"no path, tool matches", Rule{Tool: "t", Effect: Allow}, "t", nil, true},
		{"no path, other tool", Rule{Tool: "t", Effect: Deny}, "u", []string{"a"}, false},
		{"tool is exact", Rule{Tool: "t", Effect: Deny}, "T", nil, false},
		{"path, no targets, allow", Rule{Tool: "t", Path: "**", Effect: Allow}, "t", nil, false},
		{"path, no targets, deny", Rule{Tool: "t", Path: "**", Effect: Deny}, "t", []string{}, false},
		{"allow needs every target", Rule{Tool: "t", Path: "notes/**", Effect: Allow}, "t", []string{"notes/a", "b"}, false},
		{"allow, every target", Rule{Tool: "t", Path: "notes/**", Effect: Allow}, "t", []string{"notes/a", "notes/b/c"}, true},
		{"deny needs one target", Rule{Tool: "t", Path: "secret/**", Effect: Deny}, "t", []string{"notes/a", "secret/b"}, true},
		{"deny, no target inside", Rule{Tool: "t", Path: "secret/**", Effect: Deny}, "t", []string{"notes/a", "b"}, false},
		{"ask needs one target", Rule{Tool: "t", Path: "secret/**", Effect: Ask}, "t", []string{"secret/b", "notes/a"}, true},
		{"unknown effect needs one target", Rule{Tool: "t", Path: "secret/**", Effect: "alow"}, "t", []string{"x", "secret/b"}, true},
		{"deny, unclean target", Rule{Tool: "t", Path: "secret/**", Effect: Deny}, "t", []string{"notes/../secret/b"}, true},
		{"deny, the root is clean", Rule{Tool: "t", Path: "secret/**", Effect: Deny}, "t", []string{"."}, false},
		{"allow, the root", Rule{Tool: "t", Path: ".", Effect: Allow}, "t", []string{"."}, true},
		{"allow, unclean target", Rule{Tool: "t", Path: "**", Effect: Allow}, "t", []string{"../x"}, false},
	}
	for _, tt := range tests {
		if got := tt.rule.Matches(tt.tool, tt.targets); got != tt.want {
			t.Errorf("%s: %+v.Matches(%q, %q) = %v; want %v", tt.name, tt.rule, tt.tool, tt.targets, got, tt.want)
		}
	}
}

// referenceMatch is the plain backtracking matcher, for comparison on
// small inputs: "**" takes any number of whole elements.
func referenceMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if referenceMatch(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], name[0])
	return err == nil && ok && referenceMatch(pat[1:], name[1:])
}

// isClean is the test's own reading of a clean target: "." or no empty,
// "." or ".." element.
func isClean(name string) bool {
	if name == "." {
		return true
	}
	for _, e := range strings.Split(name, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

func FuzzMatchPath(f *testing.F) {
	for _, s := range [][2]string{
		{"notes/**", "notes/a/b.md"}, {"notes/**", "notes"}, {"*.md", "dir/a.md"}, {"**", "../x"},
		{"notes/**", "notes/../secret"}, {"a/**/b/**/c", "a/x/b/y/c"}, {`a\*b`, "a*b"}, {"[", "["},
		{"notes/a.md", "notes/a.md"}, {"**", "."}, {"a", "a/"}, {"**/**/**", "a/b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := MatchPath(pattern, name)
		if got && !isClean(name) {
			t.Fatalf("MatchPath(%q, %q) = true for an unclean name", pattern, name)
		}
		// A pattern without wildcards matches only itself.
		if got && !strings.ContainsAny(pattern, `*?[\`) && name != pattern {
			t.Fatalf("MatchPath(%q, %q) = true; a pattern without wildcards matches only itself", pattern, name)
		}
		if !strings.ContainsAny(pattern, `*?[\`) && pattern != "." && isClean(pattern) && !MatchPath(pattern, pattern) {
			t.Fatalf("MatchPath(%q, itself) = false", pattern)
		}
		// "**/" in front only widens (the root "." aside).
		if got && name != "." && !MatchPath("**/"+pattern, name) {
			t.Fatalf("MatchPath(%q, %q) = true but MatchPath(%q, …) = false", pattern, name, "**/"+pattern)
		}
		// Agree with the plain backtracking matcher where it is cheap.
		pat, parts := strings.Split(pattern, "/"), strings.Split(name, "/")
		if strings.Count(pattern, "**") <= 3 && len(parts) <= 32 && isClean(name) && name != "." {
			if want := referenceMatch(pat, parts); got != want {
				t.Fatalf("MatchPath(%q, %q) = %v; the reference matcher says %v", pattern, name, got, want)
			}
		}
	})
}

// TestRuleHost: a rule with a Host matches web Plans by the host of their
// "scheme://host[:port]" targets, erring on each effect's safe side.
func TestRuleHost(t *testing.T) {
	allowAPI := Rule{ID: "api", Tool: "http_get", Host: "api.weather.example", Effect: Allow}
	allowAny := Rule{ID: "sub", Tool: "http_get", Host: "*.weather.example", Effect: Allow}
	denyAny := Rule{ID: "no", Tool: "http_get", Host: "*.evil.example", Effect: Deny}
	askAPI := Rule{ID: "ask", Tool: "http_get", Host: "api.weather.example", Effect: Ask}
	tests := []struct {
		rule    Rule
		tool    string
		targets []string
		want    bool
	}{
		{allowAPI, "http_get", []string{"https://api.weather.example"}, true},
		{allowAPI, "http_get", []string{"https://API.Weather.Example:8443"}, true}, // case and port ignored
		{allowAPI, "http_get", []string{"http://api.weather.example"}, true},
		{allowAPI, "http_get", []string{"https://weather.example"}, false},
		{allowAPI, "http_get", []string{"https://api.weather.example.evil.example"}, false},
		{allowAPI, "http_get", []string{"https://evilapi.weather.example"}, false},
		{allowAPI, "http_get", []string{"https://api.weather.example", "https://other.example"}, false}, // every target must match
		{allowAPI, "http_get", nil, false},
		{allowAPI, "web_search", []string{"https://api.weather.example"}, false}, // another tool
		{allowAPI, "http_get", []string{"notes/a.md"}, false},                    // not a URL
		{allowAPI, "http_get", []string{"https://user@api.weather.example"}, false},
		{allowAny, "http_get", []string{"https://a.weather.example"}, true},
		{allowAny, "http_get", []string{"https://a.b.weather.example"}, true},
		{allowAny, "http_get", []string{"https://weather.example"}, false}, // not the apex
		{allowAny, "http_get", []string{"https://aweather.example"}, false},
		{allowAny, "http_get", []string{"https://[::1]:8080"}, false},
		{denyAny, "http_get", []string{"https://x.evil.example"}, true},
		{denyAny, "http_get", []string{"https://ok.example", "https://x.evil.example"}, true}, // any target
		{denyAny, "http_get", []string{"https://ok.example"}, false},
		{denyAny, "http_get", []string{"not a url"}, true}, // unreadable: the safe side
		{askAPI, "http_get", []string{"https://api.weather.example:443"}, true},
		{askAPI, "http_get", []string{"https://other.example"}, false},
	}
	for _, tt := range tests {
		if got := tt.rule.Matches(tt.tool, tt.targets); got != tt.want {
			t.Errorf("rule %s (%s %s) on %s %q = %v; want %v", tt.rule.ID, tt.rule.Effect, tt.rule.Host, tt.tool, tt.targets, got, tt.want)
		}
	}
}

// TestHostRuleLiftsPrivateEgressOnlyForItsHost: in autopilot a session
// holding private data may fetch from a host an operator rule allows, and
// nowhere else without asking.
func TestHostRuleLiftsPrivateEgressOnlyForItsHost(t *testing.T) {
	rules := []Rule{{ID: "weather", Tool: "http_get", Host: "api.weather.example", Effect: Allow}}
	in := Input{Tool: "http_get", Action: ActionFetch, Risk: RiskMedium, Trust: TrustOwner, Mode: ModeAutopilot, Rules: rules, Private: true}
	in.Targets = []string{"https://api.weather.example"}
	if d := Decide(in); d.Verdict != Allow || d.Rule != "rule.weather" {
		t.Errorf("allowed host: %+v; want allow by rule.weather", d)
	}
	in.Targets = []string{"https://attacker.example"}
	if d := Decide(in); d.Verdict != Ask || d.Rule != "taint.private-egress" {
		t.Errorf("other host: %+v; want ask by taint.private-egress", d)
	}
}
