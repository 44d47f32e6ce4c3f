package secrets

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
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
