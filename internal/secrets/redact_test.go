package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// markerVocabulary holds every marker text. A known value inside it cannot
// be hidden by a marker; the contract excludes such values.
var markerVocabulary = func() string {
	var b strings.Builder
	for _, k := range []string{KindKnown, KindPrivateKey, KindOpenAI, KindAnthropic, KindAWSKeyID, KindAWSSecret,
		KindGitHub, KindSlack, KindBearer, KindBasicAuth, KindJWT, KindURLPassword, KindPassword, KindSecret,
		KindToken, KindAPIKey, KindUnredactable} {
		b.WriteString(marker(k))
		b.WriteByte('\n')
	}
	return b.String()
}()

// hideable reports whether the contract promises v is hidden: it is long
// enough and no piece of marker text.
func hideable(v string) bool {
	return len(v) >= MinKnownLen && !strings.Contains(markerVocabulary, v)
}

func TestKnownValueEncodings(t *testing.T) {
	const v = "hunter2-Vault/Value+?&=é"
	r := NewRedactor(v, "short") // "short" is under MinKnownLen: ignored
	b := []byte(v)
	forms := map[string]string{
		"raw":         v,
		"hex":         hex.EncodeToString(b),
		"HEX":         strings.ToUpper(hex.EncodeToString(b)),
		"std":         base64.StdEncoding.EncodeToString(b),
		"std raw":     base64.RawStdEncoding.EncodeToString(b),
		"url":         base64.URLEncoding.EncodeToString(b),
		"url raw":     base64.RawURLEncoding.EncodeToString(b),
		"query":       url.QueryEscape(v),
		"path":        url.PathEscape(v),
		"json":        jsonString(v, true),
		"json noHTML": jsonString(v, false),
	}
	for name, f := range forms {
		in := "before " + f + " after"
		if got, want := r.Redact(in), "before [REDACTED:known-secret] after"; got != want {
			t.Errorf("%s: Redact(%q) = %q; want %q", name, in, got, want)
		}
		if kind, ok := r.Contains(in); !ok || kind != KindKnown {
			t.Errorf("%s: Contains(%q) = %q, %v; want %q, true", name, in, kind, ok, KindKnown)
		}
	}
	if got := r.Redact("short and sweet"); got != "short and sweet" {
		t.Errorf("a value under MinKnownLen was redacted: %q", got)
	}
	// Overlapping known values are hidden as one span.
	r2 := NewRedactor("abcdef123", "123xyz789")
	if got, want := r2.Redact("<abcdef123xyz789>"), "<[REDACTED:known-secret]>"; got != want {
		t.Errorf("overlapping values: got %q; want %q", got, want)
	}
}

// jsonString returns v as it appears between the quotes of a JSON string.
func jsonString(v string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	s := strings.TrimSpace(buf.String())
	return s[1 : len(s)-1]
}

// canaryChars mixes letters, digits, the characters that escaping changes
// and multi-byte UTF-8.
var canaryChars = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~éß漢🔑")

func randString(rng *rand.Rand, alphabet []rune, minLen, maxLen int) string {
	n := minLen + rng.IntN(maxLen-minLen+1)
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

var proseChars = []rune("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789.,:;-_/\n\"'{}[]=")

// TestCanaryProperty embeds every encoding of a random canary in random
// text and checks that neither the canary nor anything that decodes to it
// survives. The checks decode the output independently of the Redactor.
func TestCanaryProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iterations := 1500
	if testing.Short() {
		iterations = 200
	}
	for i := range iterations {
		canary := randString(rng, canaryChars, MinKnownLen, 40)
		if !hideable(canary) {
			continue
		}
		decoy := randString(rng, canaryChars, MinKnownLen, 20)
		r := NewRedactor(decoy, canary)
		cb := []byte(canary)
		pre, post := randString(rng, proseChars, 0, 60), randString(rng, proseChars, 0, 60)

		type embedded struct {
			name   string
			text   string
			decode func(string) [][]byte // what a reader could recover
		}
		cases := []embedded{
			{"raw", canary, nil},
			{"hex", hex.EncodeToString(cb), decodeHexRuns},
			{"HEX", strings.ToUpper(hex.EncodeToString(cb)), decodeHexRuns},
			{"query", url.QueryEscape(canary), decodePercent},
			{"path", url.PathEscape(canary), decodePercent},
			{"json", jsonString(canary, true), decodeJSONEscapes},
			{"json noHTML", jsonString(canary, false), decodeJSONEscapes},
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			cases = append(cases, embedded{"base64", enc.EncodeToString(cb), decodeBase64Runs})
			// The canary inside a longer base64-encoded blob, at a random
			// byte offset (so every alignment mod 3 is exercised).
			blob := make([]byte, 0, 64+len(cb))
			for range rng.IntN(30) {
				blob = append(blob, byte(rng.UintN(256)))
			}
			blob = append(blob, cb...)
			for range rng.IntN(30) {
				blob = append(blob, byte(rng.UintN(256)))
			}
			cases = append(cases, embedded{"base64 blob", enc.EncodeToString(blob), decodeBase64Runs})
		}
		for _, c := range cases {
			in := pre + c.text + post
			out := r.Redact(in)
			if strings.Contains(out, canary) {
				t.Fatalf("#%d %s: canary %q survives in %q", i, c.name, canary, out)
			}
			if out == marker(KindUnredactable) {
				t.Fatalf("#%d %s: benign text failed closed: %q", i, c.name, in)
			}
			if c.decode != nil {
				for _, d := range c.decode(out) {
					if bytes.Contains(d, cb) {
						t.Fatalf("#%d %s: canary %q recoverable from %q", i, c.name, canary, out)
					}
				}
			}
			if _, ok := r.Contains(in); !ok {
				t.Fatalf("#%d %s: Contains(%q) = false", i, c.name, in)
			}
			if again := r.Redact(out); again != out {
				t.Fatalf("#%d %s: not idempotent: %q then %q", i, c.name, out, again)
			}
		}
	}
}

func isB64(c byte, urlSafe bool) bool {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return true
	case urlSafe:
		return c == '-' || c == '_'
	}
	return c == '+' || c == '/'
}

// decodeBase64Runs decodes every maximal run of base64 characters of s,
// both alphabets, starting at each of the four character offsets.
func decodeBase64Runs(s string) [][]byte {
	var out [][]byte
	for _, urlSafe := range []bool{false, true} {
		enc := base64.RawStdEncoding
		if urlSafe {
			enc = base64.RawURLEncoding
		}
		for _, run := range runs(s, func(c byte) bool { return isB64(c, urlSafe) }) {
			for off := 0; off < 4 && off < len(run); off++ {
				r := run[off:]
				if len(r)%4 == 1 {
					r = r[:len(r)-1]
				}
				if d, err := enc.DecodeString(r); err == nil {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

func decodeHexRuns(s string) [][]byte {
	var out [][]byte
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	for _, run := range runs(s, isHex) {
		for off := 0; off < 2 && off < len(run); off++ {
			r := run[off:]
			r = r[:len(r)/2*2]
			if d, err := hex.DecodeString(r); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}

func runs(s string, in func(byte) bool) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && in(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

// decodePercent undoes %XX and '+' leniently, as a reader would.
func decodePercent(s string) [][]byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+':
			b = append(b, ' ')
		case s[i] == '%' && i+2 < len(s):
			if d, err := hex.DecodeString(s[i+1 : i+3]); err == nil {
				b = append(b, d...)
				i += 2
				continue
			}
			b = append(b, s[i])
		default:
			b = append(b, s[i])
		}
	}
	return [][]byte{b}
}

// decodeJSONEscapes undoes JSON string escapes leniently.
func decodeJSONEscapes(s string) [][]byte {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			var r rune
			if i+4 < len(s) {
				if d, err := hex.DecodeString(s[i+1 : i+5]); err == nil {
					r = rune(d[0])<<8 | rune(d[1])
					b.WriteRune(r)
					i += 4
					continue
				}
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte(s[i])
		}
	}
	return [][]byte{[]byte(b.String())}
}

// TestFailClosed drives Redact into a text that never settles: a known
// value that reappears from its own marker and the text after it.
func TestFailClosed(t *testing.T) {
	r := NewRedactor("t]]]]]")
	out := r.Redact("t" + strings.Repeat("]", 40))
	if strings.Contains(out, "t]]]]]") {
		t.Fatalf("known value survives: %q", out)
	}
	if again := r.Redact(out); again != out {
		t.Errorf("not idempotent: %q then %q", out, again)
	}
}

// TestConcurrentUse runs one Redactor from many goroutines (with -race).
func TestConcurrentUse(t *testing.T) {
	r := NewRedactor("concurrent-canary-1", "concurrent-canary-2")
	in := "a concurrent-canary-1 b password=x " + openAIKey
	want := r.Redact(in)
	done := make(chan string)
	for range 8 {
		go func() {
			for range 50 {
				r.Contains(in)
			}
			done <- r.Redact(in)
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Errorf("concurrent Redact = %q; want %q", got, want)
		}
	}
}

// TestRedactorLearn: a value learnt after the redactor was built (a token
// refreshed after start) is redacted from then on, while Redact runs
// concurrently (go test -race); a value too short to look for is ignored.
func TestRedactorLearn(t *testing.T) {
	r := NewRedactor("first-CANARY-value")
	const later = "later-CANARY-refreshed-token"
	if got := r.Redact("x " + later); got != "x "+later {
		t.Fatalf("Redact before Learn = %q; want it unchanged", got)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			r.Redact("first-CANARY-value and " + later)
		}
	}()
	r.Learn(later, "abc")
	<-done
	for _, s := range []string{later, "first-CANARY-value"} {
		if got := r.Redact("x " + s); strings.Contains(got, s) {
			t.Errorf("Redact after Learn = %q; want %q hidden", got, s)
		}
	}
	if got := r.Redact("abc"); got != "abc" {
		t.Errorf("a 3-byte value was learnt: %q", got)
	}
	var zero Redactor
	zero.Learn(later)
	if got := zero.Redact(later); strings.Contains(got, later) {
		t.Errorf("the zero Redactor did not learn: %q", got)
	}
}
