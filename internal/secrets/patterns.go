package secrets

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Kinds named in replacement markers. A marker is "[REDACTED:" + kind + "]".
const (
	KindKnown          = "known-secret"      // a value the Redactor was given
	KindPrivateKey     = "private-key"       // a PEM or PGP private key block
	KindOpenAI         = "openai-key"        // sk-…, sk-proj-…
	KindAnthropic      = "anthropic-key"     // sk-ant-…
	KindAWSKeyID       = "aws-access-key-id" // AKIA…, ASIA…
	KindAWSSecret      = "aws-secret-key"    // aws_secret_access_key = …
	KindGitHub         = "github-token"      // ghp_…, github_pat_…
	KindSlack          = "slack-token"       // xoxb-…
	KindBearer         = "bearer-token"      // Bearer …
	KindBasicAuth      = "basic-auth"        // Authorization: Basic …
	KindJWT            = "jwt"               // eyJ….eyJ….…
	KindURLPassword    = "url-password"      // scheme://user:PASSWORD@host
	KindPassword       = "password"          // password=…, passwd: …
	KindSecret         = "secret"            // secret=…, client_secret: …
	KindToken          = "token"             // token=…, access_token: …
	KindAPIKey         = "api-key"           // api_key=…, apikey: …
	KindOneTimeCode    = "one-time-code"     // "OTP: 483920", "验证码 483920"
	KindUnredactable   = "unredactable"      // see Redactor.Redact
	markerPrefix       = "[REDACTED:"
	markerSuffix       = "]"
	maxMarkerKindBytes = 32
)

func marker(kind string) string { return markerPrefix + kind + markerSuffix }

// isMarker reports whether v is exactly one replacement marker, so that
// redacting redacted text changes nothing.
func isMarker(v string) bool {
	kind, ok := strings.CutPrefix(v, markerPrefix)
	if !ok {
		return false
	}
	kind, ok = strings.CutSuffix(kind, markerSuffix)
	if !ok || kind == "" || len(kind) > maxMarkerKindBytes {
		return false
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// A rule is one secret pattern. Most text holds no secret, so a rule's
// regexp runs only where a cheap test finds a place a match may start:
//
//   - a case-sensitive rule's regexp begins with a literal ("sk-", "eyJ"),
//     which the regexp package finds with a fast substring search;
//   - a keyword rule ("password=", "Bearer …") is case-insensitive, which
//     defeats that search; its regexp is anchored and is tried only at the
//     places where foldScan's keyword test holds.
type rule struct {
	kind string
	re   *regexp.Regexp
	// high marks a high-confidence pattern: Contains reports it. The
	// generic key=value rule is not one (it has false positives).
	high bool
	// lits, for a case-sensitive rule, are literals one of which every
	// match holds; a literal with a rare first byte is searched fastest.
	lits []string
	// at, when set instead of lits or keyword, reports the places where
	// a match may start; re is anchored ("^") and applied there. It is
	// called only within atWindow bytes before a run of four or more
	// digits: every match of a rule using it ends in one.
	at func(s string, i int) bool
	// keyword, for a keyword rule, is its foldScan bit; re is anchored
	// ("^") and applied at each place where keywordAt has that bit.
	keyword foldHits
	// wordStart requires a match not to follow an ASCII letter, digit or
	// '_': the leading \b that a regexp cannot say without losing its
	// literal prefix.
	wordStart bool
	// groups lists the submatches that hold the secret; the first one
	// that took part in the match is replaced and the rest of the match
	// (a key name, a "Bearer " prefix) is kept. Empty: the whole match.
	groups []int
	// accept, when set, rejects look-alikes the regexp cannot rule out.
	accept func(secret string) bool
	// kindOf, when set, names the kind from the submatches.
	kindOf func(s string, m []int) string
}

// foldHits records which keyword rules may match (see foldScan).
type foldHits uint8

const (
	foldBearer foldHits = 1 << iota
	foldAuthorization
	foldAWSSecret
	foldAssignment
)

// rules are compiled on first use, not at package init: a process that
// never redacts (homard version, an idle serve) does not pay for the
// compiled programs (about 0.3 MB of allocations, measured with
// GODEBUG=inittrace=1).
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{
			kind: KindPrivateKey,
			// A block without its END line (a truncated file, a cut preview)
			// is redacted to the end of the text: a partial key still leaks.
			re:   regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)`),
			high: true,
			lits: []string{"PRIVATE KEY"},
		},
		{
			kind:      KindOpenAI,
			re:        regexp.MustCompile(`sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}`),
			high:      true,
			lits:      []string{"sk-"},
			wordStart: true,
			accept:    func(v string) bool { return hasDigitOrUpper(v[len("sk-"):]) },
			kindOf: func(s string, m []int) string {
				if m[2] >= 0 && s[m[2]:m[3]] == "ant-" {
					return KindAnthropic
				}
				return KindOpenAI
			},
		},
		{
			kind:      KindAWSKeyID,
			re:        regexp.MustCompile(`A(?:KIA|SIA)[A-Z0-9]{16}\b`),
			high:      true,
			lits:      []string{"AKIA", "ASIA"},
			wordStart: true,
		},
		{
			kind:    KindAWSSecret,
			re:      regexp.MustCompile(`^(?i)aws_?secret_?(?:access_?)?key\\?["']?[ \t]*[:=][ \t]*\\?["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`),
			high:    true,
			keyword: foldAWSSecret,
			groups:  []int{1},
		},
		{
			kind: KindGitHub,
			re:   regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}`),
			high: true,
			lits: []string{"gh"},
		},
		{
			kind: KindGitHub,
			re:   regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`),
			high: true,
			lits: []string{"github_pat_"},
		},
		{
			kind: KindSlack,
			re:   regexp.MustCompile(`xox[baprs]-[A-Za-z0-9-]{10,}`),
			high: true,
			lits: []string{"xox"},
		},
		{
			kind: KindBearer,
			// Only a token with a digit counts, so that prose ("the bearer
			// instrument") is left alone; real tokens are random.
			re:      regexp.MustCompile(`^(?i)bearer[ \t]+([A-Za-z0-9._~+/-]{8,}=*)`),
			high:    true,
			keyword: foldBearer,
			groups:  []int{1},
			accept:  hasDigit,
		},
		{
			kind:    KindBasicAuth,
			re:      regexp.MustCompile(`^(?i)authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?basic[ \t]+([A-Za-z0-9+/]{4,}=*)`),
			high:    true,
			keyword: foldAuthorization,
			groups:  []int{1},
		},
		{
			kind: KindJWT,
			re:   regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),
			high: true,
			lits: []string{"yJ"}, // rarer first byte than "eyJ"
		},
		{
			// scheme://user:PASSWORD@host
			kind:   KindURLPassword,
			re:     regexp.MustCompile(`://[^\s/:@?#\[\]]+:([^\s/@?#\[\]]+)@`),
			lits:   []string{"://"},
			groups: []int{1},
		},
		{
			// The digits after a one-time-code keyword: "my one-time code is
			// 483920", "OTP: 1234", "验证码 483920". Low confidence (not
			// reported by Contains): "2FA" near a number is not always a
			// code.
			kind: KindOneTimeCode,
			re: regexp.MustCompile(`^(?i)(?:(?:t?otp|2fa|mfa|one[- ]?time(?:[- ]?(?:pass)?(?:code|password|pin))?|` +
				`(?:verification|security|login|auth|authentication|confirmation)[- ]code|passcode)|` +
				`验证码|驗證碼|認証コード|確認コード|인증번호)[^0-9\n]{0,24}?\b([0-9]{4,8})` +
				// Not a date, a time, a version or a path: "2026-12", "10:30".
				`(?:$|[^0-9A-Za-z/:.\-]|\.(?:$|[^0-9]))`),
			at:     oneTimeCodeAt,
			groups: []int{1},
		},
		{
			// key = value assignments. The key is kept; the value is
			// replaced whether double-quoted (also inside a JSON string, with
			// escaped quotes), single-quoted or bare. The keyword may end a
			// longer key ("db_password", "client-secret", "x.token").
			kind: KindPassword,
			re: regexp.MustCompile(`^(?i)(password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)` +
				`\\?["']?[ \t]*[:=][ \t]*` +
				`(?:\\"((?:[^"\\\n]|\\[^"\n])*)\\"|"((?:[^"\\\n]|\\[^\n])*)"|'([^'\n]*)'|([^\s"'&,;<>{}\\]+))`),
			keyword: foldAssignment,
			groups:  []int{2, 3, 4, 5},
			accept:  assignedValue,
			kindOf: func(s string, m []int) string {
				switch kw := strings.ToLower(s[m[2]:m[3]]); {
				case strings.HasPrefix(kw, "pass"):
					return KindPassword
				case kw == "token":
					return KindToken
				case strings.HasPrefix(kw, "api"):
					return KindAPIKey
				}
				return KindSecret
			},
		},
	}
})

// matches calls yield with each accepted match of ru in s, in order and
// not overlapping, until yield returns false. Each match is given as the
// index pairs of FindStringSubmatchIndex, relative to s.
func (ru *rule) matches(s string, fold foldHits, yield func(m []int) bool) {
	if ru.keyword != 0 {
		if fold&ru.keyword == 0 {
			return
		}
		for i := 0; i < len(s); i++ {
			if !keywordStart[s[i]] || keywordAt(s, i)&ru.keyword == 0 {
				continue
			}
			m := ru.matchAt(s, i)
			if m == nil {
				continue
			}
			if !yield(m) {
				return
			}
			i = max(i, m[1]-1)
		}
		return
	}
	if ru.at != nil {
		// Every match ends in a run of four or more digits no more
		// than atWindow bytes after its start: look for starts only in
		// the window before each run.
		from := 0
		for d := 0; d < len(s); {
			if s[d] < '0' || s[d] > '9' {
				d++
				continue
			}
			e := d
			for e < len(s) && s[e] >= '0' && s[e] <= '9' {
				e++
			}
			if e-d >= 4 {
				for i := max(from, d-atWindow); i < d; i++ {
					if !ru.at(s, i) {
						continue
					}
					m := ru.matchAt(s, i)
					if m == nil {
						continue
					}
					if !yield(m) {
						return
					}
					from = m[1]
					break
				}
			}
			d = max(e, from)
		}
		return
	}
	if !slices.ContainsFunc(ru.lits, func(l string) bool { return strings.Contains(s, l) }) {
		return
	}
	for _, m := range ru.re.FindAllStringSubmatchIndex(s, -1) {
		if ru.wordStart && m[0] > 0 && isWordByte(s[m[0]-1]) {
			continue
		}
		if ru.ok(s, m) && !yield(m) {
			return
		}
	}
}

// matchAt returns ru's first match in s[i:], as index pairs relative to
// s, or nil when there is none or ok rejects it.
func (ru *rule) matchAt(s string, i int) []int {
	m := ru.re.FindStringSubmatchIndex(s[i:])
	if m == nil {
		return nil
	}
	for k := range m {
		if m[k] >= 0 {
			m[k] += i
		}
	}
	if !ru.ok(s, m) {
		return nil
	}
	return m
}

// ok reports whether match m holds a secret and accept agrees.
func (ru *rule) ok(s string, m []int) bool {
	start, end := ru.span(m)
	return start >= 0 && (ru.accept == nil || ru.accept(s[start:end]))
}

// assignedValue rejects values of a key=value assignment that are not a
// secret: nothing, a JSON literal, or a reference to one elsewhere (a call,
// a variable, a template), which is how source code mentions a password.
func assignedValue(v string) bool {
	if v == "" || isMarker(v) {
		return false
	}
	switch v {
	case "null", "true", "false", "None", "nil":
		return false
	}
	switch v[0] {
	case '$', '{', '%':
		return false
	}
	return !strings.Contains(v, "(")
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

func hasDigitOrUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' || s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// foldScan makes one ASCII case-insensitive pass over s and reports which
// keyword rules may match. It must never miss a match of their regexps
// that is spelled in ASCII. (The regexps' (?i) also folds the Kelvin sign
// and the long s; a keyword spelled with those is not looked for.)
func foldScan(s string) foldHits {
	var h foldHits
	for i := 0; i < len(s); i++ {
		if keywordStart[s[i]] && (i == 0 || !continuesWord(s[i-1])) {
			h |= keywordAt(s, i)
		}
	}
	return h
}

// continuesWord reports whether a keyword after b is part of a longer
// word or a path: "db_password" is a key, but "/etc/passwd" is a file
// name, not an assignment, however it is followed.
func continuesWord(b byte) bool { return isAlnumByte(b) || b == '/' }

// keywordStart marks the first letters of the keywords, in both cases.
var keywordStart = func() (t [256]bool) {
	for _, c := range "abpstABPST" {
		t[c] = true
	}
	return t
}()

// keywordAt reports which keyword rules may match at s[i]: a keyword
// starts there, after no ASCII letter or digit (a keyword rule's \b, or for
// key=value the end of a longer key such as "db_password").
func keywordAt(s string, i int) foldHits {
	if !keywordStart[s[i]] || i > 0 && continuesWord(s[i-1]) {
		return 0
	}
	t := s[i:]
	var h foldHits
	switch t[0] | 0x20 {
	case 'a':
		if hasPrefixFold(t, "aws") && (hasPrefixFold(t[3:], "secret") || hasPrefixFold(t[3:], "_secret")) {
			h |= foldAWSSecret
		} else if hasPrefixFold(t, "authorization") {
			h |= foldAuthorization
		}
	case 'b':
		if hasPrefixFold(t, "bearer") && bearerTokenAt(t[len("bearer"):]) {
			h |= foldBearer
		}
		return h
	}
	if end := keywordEnd(s, i); end >= 0 && separatorAt(s, end) {
		h |= foldAssignment
	}
	return h
}

// bearerTokenAt reports whether s starts with what the bearer rule needs
// after its keyword: blanks, then eight or more token characters with a
// digit among them.
func bearerTokenAt(s string) bool {
	j := 0
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j == 0 {
		return false
	}
	n, digit := 0, false
	for ; j < len(s) && isTokenByte(s[j]); j++ {
		n++
		digit = digit || s[j] >= '0' && s[j] <= '9'
	}
	return n >= 8 && digit
}

func isTokenByte(c byte) bool {
	switch c {
	case '.', '_', '~', '+', '/', '-':
		return true
	}
	return isAlnumByte(c)
}

func isAlnumByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isWordByte(c byte) bool { return c == '_' || isAlnumByte(c) }

// keywordEnd returns the end of the generic rule's keyword that starts at
// s[i] (password, passwd, secret, token, api key, access key, private key,
// with "_", "-" or nothing before "key"), or -1.
func keywordEnd(s string, i int) int {
	t := s[i:]
	switch t[0] | 0x20 {
	case 'p':
		switch {
		case hasPrefixFold(t, "password"):
			return i + len("password")
		case hasPrefixFold(t, "passwd"):
			return i + len("passwd")
		case hasPrefixFold(t, "private"):
			return keyEnd(s, i+len("private"))
		}
	case 's':
		if hasPrefixFold(t, "secret") {
			return i + len("secret")
		}
	case 't':
		if hasPrefixFold(t, "token") {
			return i + len("token")
		}
	case 'a':
		switch {
		case hasPrefixFold(t, "api"):
			return keyEnd(s, i+len("api"))
		case hasPrefixFold(t, "access"):
			return keyEnd(s, i+len("access"))
		}
	}
	return -1
}

// keyEnd returns the end of "key", "_key" or "-key" at s[j], or -1.
func keyEnd(s string, j int) int {
	if j < len(s) && (s[j] == '_' || s[j] == '-') {
		j++
	}
	if hasPrefixFold(s[j:], "key") {
		return j + len("key")
	}
	return -1
}

// separatorAt reports whether s[j:] starts with what the generic rule
// requires after its keyword: an optional backslash, an optional quote,
// blanks, then ':' or '='.
func separatorAt(s string, j int) bool {
	if j < len(s) && s[j] == '\\' {
		j++
	}
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j < len(s) && (s[j] == ':' || s[j] == '=')
}

// hasPrefixFold reports whether s starts with lower, ignoring ASCII case.
// lower must be lowercase ASCII letters, digits, '_' or '-'.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// otpKeywords are the lowercase spellings every one-time-code match
// starts with (the regexp's alternatives, cut to a common part), indexed
// by their first byte.
var otpKeywords = func() (t [256][]string) {
	for _, k := range []string{"otp", "totp", "2fa", "mfa", "one", "verification", "security", "login", "auth",
		"confirmation", "passcode", "验证码", "驗證碼", "認証コード", "確認コード", "인증번호"} {
		t[k[0]] = append(t[k[0]], k)
		if k[0] >= 'a' && k[0] <= 'z' {
			t[k[0]-'a'+'A'] = t[k[0]]
		}
	}
	return t
}()

// oneTimeCodeAt reports whether a one-time-code keyword starts at s[i],
// not inside a longer ASCII word.
func oneTimeCodeAt(s string, i int) bool {
	ks := otpKeywords[s[i]]
	if ks == nil || i > 0 && isAlnumByte(s[i-1]) {
		return false
	}
	for _, k := range ks {
		if hasPrefixFold(s[i:], k) {
			return true
		}
	}
	return false
}

// atWindow bounds how far before its digits an "at" rule's match starts:
// the longest keyword and the 24 characters (up to 4 bytes each) allowed
// between keyword and digits.
const atWindow = 24 + 24*4
