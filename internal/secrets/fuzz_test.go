package secrets

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzRedact checks, for any text and any known value: the prefilters hide
// no match, Redact never panics, its output holds no hideable known value in
// any encoding and no high-confidence pattern (Contains is false), and it is
// idempotent.
func FuzzRedact(f *testing.F) {
	f.Add("password=hunter2 "+openAIKey, "hunter2")
	f.Add("x "+base64.StdEncoding.EncodeToString([]byte("vault-secret"))+" y", "vault-secret")
	f.Add(pem("RSA PRIVATE KEY"), "")
	f.Add("-----BEGIN EC PRIVATE KEY-----\nabc", "abcdef")
	f.Add(`{"password": "a\"b", "token": [REDACTED:token]}`, "a\"b\"cd")
	f.Add("Authorization: Bearer "+jwt, "Bearer")
	f.Add("token=password=secret=x", "secret=x")
	f.Add("t"+strings.Repeat("]", 20), "t]]]]]")
	f.Add("aws_secret_access_key="+awsSecret+"\n"+awsKeyID, awsSecret)
	f.Add("https://u:"+githubPAT+"@h/", githubPAT)
	f.Add("my one-time code is 483920, OTP 1234 and 验证码 99887766", "483920")
	f.Add("2FA: 2026-12 then mfa 12345678901 and x otp:0000", "")
	f.Fuzz(func(t *testing.T, text, known string) {
		rs := rules()
		for i := range rs {
			ru := &rs[i]
			if want, got := referenceMatches(ru, text), fastMatches(ru, text); !slices.EqualFunc(want, got, slices.Equal) {
				t.Fatalf("%s on %q: prefiltered matches %v; reference %v", ru.kind, text, got, want)
			}
		}
		const fixed = "fixed-known-9f3e"
		r := NewRedactor(known, fixed)
		out := r.Redact(text)
		for _, v := range []string{known, fixed} {
			if !hideable(v) {
				continue
			}
			for _, form := range Encodings(v) {
				if len(form) >= 4 && !strings.Contains(markerVocabulary, form) && strings.Contains(out, form) {
					t.Fatalf("Redact(%q) with known %q = %q: holds the form %q", text, v, out, form)
				}
			}
		}
		if !hideable(known) && len(known) >= MinKnownLen {
			return // a value inside marker text: only no-panic is promised
		}
		if kind, ok := r.Contains(out); ok {
			t.Fatalf("Redact(%q) = %q, which still Contains a %s", text, out, kind)
		}
		if again := r.Redact(out); again != out {
			t.Fatalf("not idempotent:\n in   %q\n once %q\n twice %q", text, out, again)
		}
	})
}

// FuzzTransform checks the search for transformed values (transform.go)
// for any text, value and separator: the one-pass scan finds a needle
// exactly when the skeletons built by skeletonOf hold one; the skeleton of
// text without escapes or markers is the independently written one; and a
// qualifying value, reversed, case-swapped, spaced with any separator that
// is no letter or digit, or cut in two, is refused in arguments and leaves
// no piece in Redact's output.
func FuzzTransform(f *testing.F) {
	f.Add(cleanText[:300], vaultStripe, " ", uint8(7))
	f.Add("", vaultGitHub, "\u200b", uint8(5))
	f.Add(`{"x":"a\nb\u00e9%41"}`, vaultBase64, `\`, uint8(4))
	f.Add("100% sure", vaultHex, "%", uint8(0x5c))
	f.Add("[REDACTED:token] x", vaultPhrase, "[REDACTED:known-secret]", uint8(3))
	f.Add("ｆｕｌｌ", "ÉtéBrûlant-Ünïcødé-Clé-9x7Q", "·", uint8(6))
	f.Fuzz(func(t *testing.T, text, value, sep string, how uint8) {
		r := NewRedactor(value)
		x := r.current()
		if x != nil && x.tf != nil {
			want := false
			for _, sk := range skeletons(text) {
				for _, n := range x.tf.needles {
					want = want || strings.Contains(sk.t, n.s)
				}
			}
			if got := x.tf.hasPiece(text); got != want {
				t.Fatalf("hasPiece(%q) = %v; the skeletons say %v", text, got, want)
			}
		}
		if !strings.ContainsAny(text, `\%[`) {
			sk, _ := skeletonOf(text, readBoth)
			if want := testSkeleton(text); sk.t != want && !hasSpecialFold(text) {
				t.Fatalf("skeleton of %q = %q; want %q", text, sk.t, want)
			}
		}
		// The transforms are a model's text: valid UTF-8 (a stray byte
		// of a separator could join one of the value's into a letter).
		if x == nil || x.tf == nil || testSkeleton(sep) != "" || strings.Contains(sep, "[") && !isMarker(sep) ||
			!utf8.ValidString(value) || !utf8.ValidString(sep) {
			return
		}
		v := value
		if how&1 != 0 {
			v = reverseString(v)
		}
		if how&2 != 0 {
			v = swapCase(v)
		}
		if how&4 != 0 {
			v = spaced(v, sep)
		}
		args := map[string]string{"a": text, "b": v}
		split := how&8 != 0 && !x.tf.values[0].whole() // only a value searched in halves is found cut
		if split {                                     // cut in two, around a third argument
			cut := int(how>>4) * len(v) / 16
			args = map[string]string{"a": v[cut:], "b": text, "c": v[:cut]}
		}
		b, _ := json.Marshal(args)
		if kind, ok := r.Contains(string(b)); !ok || kind != KindKnown {
			t.Fatalf("Contains(%q) = %q, %v; want %q, true (value %q)", b, kind, ok, KindKnown, value)
		}
		if split {
			return
		}
		out := r.Redact(text + "\n" + v + "\n" + text)
		if out == marker(KindUnredactable) {
			return
		}
		if x.tf.hasPiece(out) {
			t.Fatalf("Redact left a piece of %q in %q", value, out)
		}
		plain := testSkeleton(markerRE.ReplaceAllString(out, ""))
		if x := x.tf.values[0]; strings.Contains(plain, x.fwd) || strings.Contains(plain, x.rev) {
			t.Fatalf("Redact left %q (transformed) in %q", value, out)
		}
	})
}

var markerRE = regexp.MustCompile(`\[REDACTED:[a-z0-9-]{1,32}\]`)

// hasSpecialFold reports whether s has a character that unicode.ToLower
// alone folds differently from the skeleton's ToLower(ToUpper(r)) ("ſ").
func hasSpecialFold(s string) bool {
	for _, r := range s {
		if unicode.ToLower(r) != unicode.ToLower(unicode.ToUpper(r)) {
			return true
		}
	}
	return false
}
