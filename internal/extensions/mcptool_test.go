package extensions

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/tool"
)

// TestMCPDisplay: the card names the tool and server and shows each
// argument on its own line in canonical JSON, sorted, redacted before it
// is cut (at a rune boundary), at most maxDisplayArgs of them, hidden
// characters escaped.
func TestMCPDisplay(t *testing.T) {
	tl := mcp.Tool{Name: "send", Server: "mail"}
	const secret = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	red := secrets.NewRedactor(secret)
	many := map[string]int{}
	for i := range maxDisplayArgs + 3 {
		many[fmt.Sprintf("a%02d", i)] = i
	}
	manyJSON, _ := json.Marshal(many)
	for _, tt := range []struct {
		name string
		args string
		want []string
		not  []string
	}{
		{"no arguments", `{}`, []string{"call send on MCP server mail with no arguments"}, nil},
		{"one", `{"to":"ada"}`, []string{"call send on MCP server mail with 1 argument:\n  \"to\": \"ada\""}, nil},
		{"sorted", `{"z":1,"a":2}`, []string{"with 2 arguments:\n  \"a\": 2\n  \"z\": 1"}, nil},
		{"redacted", `{"key":"` + secret + `"}`, []string{`"key": "`}, []string{secret}},
		{"cut", `{"body":"` + strings.Repeat("é", 200) + `"}`, []string{"… [", "more bytes]"}, nil},
		// Canonical JSON writes a bidi override as it is: the card escapes it.
		{"escaped", `{"to":"ada\u202egpj.exe"}`, []string{`ada\u202e`}, []string{"\u202e"}},
		{"many", string(manyJSON), []string{fmt.Sprintf("with %d arguments:", maxDisplayArgs+3), "… and 3 more arguments: the preview shows them all"}, []string{`"a16"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Prepare shows the canonical arguments Decode returned.
			canon, err := tool.Canonical(json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			got := mcpDisplay(tl, canon, red)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("mcpDisplay(%s) =\n%s\nwant %q", tt.args, got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("mcpDisplay(%s) =\n%s\nwant no %q", tt.args, got, n)
				}
			}
			if !utf8.ValidString(got) {
				t.Errorf("mcpDisplay(%s) is not valid UTF-8: %q", tt.args, got)
			}
			for _, line := range strings.Split(got, "\n")[1:] {
				if len(line) > maxDisplayLine+40 {
					t.Errorf("mcpDisplay(%s) has a line of %d bytes; want it cut near %d", tt.args, len(line), maxDisplayLine)
				}
			}
		})
	}
}

// TestCappedKeepsTheStart: a skill's output keeps its first
// skillOutputCap bytes and says it was cut; under the cap it is as written.
func TestCappedKeepsTheStart(t *testing.T) {
	var c capped
	if n, err := c.Write([]byte("hello\n")); n != 6 || err != nil || c.String() != "hello\n" {
		t.Fatalf("capped after a short write = %q (%d, %v); want it whole", c.String(), n, err)
	}
	big := strings.Repeat("x", skillOutputCap)
	if n, err := c.Write([]byte(big)); n != len(big) || err != nil {
		t.Fatalf("capped.Write over the cap = %d, %v; want all of it taken (the writer never blocks)", n, err)
	}
	_, _ = c.Write([]byte("more"))
	got := c.String()
	if !strings.HasPrefix(got, "hello\nxxx") || !strings.HasSuffix(got, "\n(cut: output over 64 KiB)") || len(got) != skillOutputCap+len("\n(cut: output over 64 KiB)") {
		t.Errorf("capped over the cap: %d bytes, ends %q; want the first %d bytes and the cut note", len(got), got[max(len(got)-40, 0):], skillOutputCap)
	}
}
