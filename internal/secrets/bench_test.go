package secrets

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// cleanText is about 4 KiB of ordinary tool output: prose, code and JSON
// with words that share prefixes with secret patterns (skeleton, tokens,
// password prose, private) but no secret.
var cleanText = func() string {
	const chunk = `The quick brown fox reads notes/todo.md and lists 42 files in the workspace.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) { tokens := s.count(r); _ = tokens }
{"id": 17, "name": "skeleton", "max_tokens": 1024, "private": false, "task": "task-1234"}
Remember to rotate your password every quarter; the bearer of this note is Alice.
`
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString(chunk)
	}
	return b.String()[:4096]
}()

var benchKnown = []string{
	"correct-horse-battery-staple", "8f2a9c1e5b7d4f60", "tg-bot-token-0000", "smtp-pass-12345",
	"vault-value-abcdef", "another/secret+value=", "imap:pw:9999", "db-password-xyz",
}

func secretText() string {
	return cleanText[:2048] + "\nOPENAI_API_KEY=" + openAIKey + "\npassword: hunter2\n" +
		base64.StdEncoding.EncodeToString([]byte(benchKnown[0])) + "\nAuthorization: Bearer abc123def456ghi789\n" +
		pem("RSA PRIVATE KEY") + "\n" + cleanText[:1024]
}

func BenchmarkRedact(b *testing.B) {
	r := NewRedactor(benchKnown...)
	for _, bc := range []struct{ name, text string }{
		{"clean-4KiB", cleanText},
		{"secrets-4KiB", secretText()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				r.Redact(bc.text)
			}
		})
	}
}

func BenchmarkContains(b *testing.B) {
	r := NewRedactor(benchKnown...)
	b.ReportAllocs()
	b.SetBytes(int64(len(cleanText)))
	for b.Loop() {
		r.Contains(cleanText)
	}
}

// TestCleanTextIsClean keeps the benchmark honest: the clean text must go
// through untouched and without allocating.
func TestCleanTextIsClean(t *testing.T) {
	r := NewRedactor(benchKnown...)
	if got := r.Redact(cleanText); got != cleanText {
		t.Fatalf("clean text changed")
	}
	if allocs := testing.AllocsPerRun(10, func() { r.Redact(cleanText) }); allocs != 0 && !raceEnabled {
		t.Errorf("Redact on clean text allocates %v times; want 0", allocs)
	}
	if got := r.Redact(secretText()); strings.Contains(got, "hunter2") || strings.Contains(got, openAIKey) {
		t.Errorf("secret text not redacted: %q", got)
	}
}

// benchArgs are tool arguments as the arbiter checks them on every call:
// a small command and a 4 KiB write.
var benchArgs = []struct{ name, args string }{
	{"command-100B", `{"command":"grep -rn \"TODO\" internal/ docs/ | head -n 50","timeout_seconds":60,"view":"ro"}`},
	{"write-4KiB", func() string {
		b, _ := json.Marshal(map[string]string{"path": "notes/today.md", "content": cleanText})
		return string(b)
	}()},
}

// BenchmarkContainsArgs is the cost of the secret-in-arguments check (4b)
// on one proposal, with the eight values of benchKnown in the vault.
func BenchmarkContainsArgs(b *testing.B) {
	r := NewRedactor(benchKnown...)
	for _, bc := range benchArgs {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.args)))
			for b.Loop() {
				if _, ok := r.Contains(bc.args); ok {
					b.Fatal("clean arguments flagged")
				}
			}
		})
	}
}

// BenchmarkContainsVault20 is the secret-in-arguments check with a vault
// of 20 realistic values (keys of the common shapes and passphrases, drawn
// as in TestTransformFalsePositives), every one of them searched for
// transformed as well as exactly.
func BenchmarkContainsVault20(b *testing.B) {
	rng := rand.New(rand.NewPCG(21, 3))
	words := strings.Fields("maple orbit falcon tundra river stone quartz meadow lantern harbor cobalt willow ember canyon")
	vault := make([]string, 20)
	for i := range vault {
		if i%4 == 3 {
			vault[i] = randomPassphrase(rng, words)
		} else {
			vault[i] = randomKey(rng)
		}
	}
	r := NewRedactor(vault...)
	for _, bc := range benchArgs {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.args)))
			for b.Loop() {
				if _, ok := r.Contains(bc.args); ok {
					b.Fatal("clean arguments flagged")
				}
			}
		})
	}
}
