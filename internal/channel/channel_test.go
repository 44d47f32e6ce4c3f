package channel

import "testing"

// TestParseChoice: what the owner types at a prompt, read as an answer.
func TestParseChoice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Choice
		ok   bool
	}{
		{"", Leave, true},
		{"  \n", Leave, true},
		{"o", Once, true},
		{"Once\n", Once, true},
		{"s", Session, true},
		{"session", Session, true},
		{"A", Always, true},
		{"always", Always, true},
		{"d", Deny, true},
		{"deny", Deny, true},
		{"n", Deny, true},
		{"No", Deny, true},
		{"yes", Leave, false},
		{"recorded", Leave, false}, // not the owner's to type
		{"lapsed", Leave, false},
		{"forever", Leave, false},
	} {
		if got, ok := ParseChoice(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("ParseChoice(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCardAllows: a critical card takes only once, deny or leave; any
// other card takes every answer.
func TestCardAllows(t *testing.T) {
	critical, medium := Card{Risk: "critical"}, Card{Risk: "medium"}
	for _, tc := range []struct {
		ch                Choice
		critical, regular bool
	}{
		{Once, true, true},
		{Deny, true, true},
		{Leave, true, true},
		{Session, false, true},
		{Always, false, true},
	} {
		if got := critical.Allows(tc.ch); got != tc.critical {
			t.Errorf("critical card Allows(%q) = %v; want %v", tc.ch, got, tc.critical)
		}
		if got := medium.Allows(tc.ch); got != tc.regular {
			t.Errorf("medium card Allows(%q) = %v; want %v", tc.ch, got, tc.regular)
		}
	}
}

// TestChoiceApproves: only once, session and always approve; the wire
// strings stay what the web API and the TUI send.
func TestChoiceApproves(t *testing.T) {
	wire := map[Choice]string{Once: "once", Session: "session", Always: "always", Deny: "deny", Leave: "", Recorded: "recorded", Lapsed: "lapsed"}
	for c, s := range wire {
		if string(c) != s {
			t.Errorf("Choice %q has wire string %q; want %q (the web API and clients send it)", c, string(c), s)
		}
		if want := c == Once || c == Session || c == Always; c.Approves() != want {
			t.Errorf("%q.Approves() = %v; want %v", c, c.Approves(), want)
		}
	}
}
