package secrets

import (
	"slices"
	"strings"
	"testing"
)

// Fake credentials shaped like real ones. None is live.
const (
	openAIKey    = "sk-abcdEFGH1234ijklMNOP5678qrstUVWX9012yzab"
	openAIProj   = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90_Uv-Wx12"
	anthropicKey = "sk-ant-api03-AbCdEf012345678901234567890123456789-_AA"
	awsKeyID     = "AKIAIOSFODNN7EXAMPLE"
	awsSTSKeyID  = "ASIAY34FZKBOKMUTVV7A"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	githubPAT    = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	githubOAuth  = "gho_1234567890abcdefghijABCDEFGHIJ123456"
	githubUser   = "ghu_1234567890abcdefghijABCDEFGHIJ123456"
	githubServer = "ghs_1234567890abcdefghijABCDEFGHIJ123456"
	githubRefr   = "ghr_1234567890abcdefghijABCDEFGHIJ123456"
	githubFine   = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
	slackBot     = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	jwt          = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemBody      = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx3HBnJ2mX1d0w0q1p5c4a7b6wq0pFQ5bZ0uXx0a1QAAAAJgAAAAAAAAA=\n"
)

func pem(label string) string {
	return "-----BEGIN " + label + "-----\n" + pemBody + "-----END " + label + "-----"
}

func TestRedactPatterns(t *testing.T) {
	r := NewRedactor()
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Private keys.
		{"pem openssh", "key:\n" + pem("OPENSSH PRIVATE KEY") + "\nafter", "key:\n[REDACTED:private-key]\nafter"},
		{"pem rsa", pem("RSA PRIVATE KEY"), "[REDACTED:private-key]"},
		{"pem ec", "a " + pem("EC PRIVATE KEY") + " b", "a [REDACTED:private-key] b"},
		{"pem pkcs8", pem("PRIVATE KEY"), "[REDACTED:private-key]"},
		{"pem encrypted", pem("ENCRYPTED PRIVATE KEY"), "[REDACTED:private-key]"},
		{"pem pgp", pem("PGP PRIVATE KEY BLOCK"), "[REDACTED:private-key]"},
		{"pem in json string", `{"k":"` + strings.ReplaceAll(pem("RSA PRIVATE KEY"), "\n", `\n`) + `"}`, `{"k":"[REDACTED:private-key]"}`},
		{"pem two blocks", pem("RSA PRIVATE KEY") + "\nmid\n" + pem("EC PRIVATE KEY"), "[REDACTED:private-key]\nmid\n[REDACTED:private-key]"},
		{"pem truncated redacts to end", "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "x\n[REDACTED:private-key]"},
		{"pem public key kept", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"pem certificate kept", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"prose about private keys kept", "keep your PRIVATE KEY safe", "keep your PRIVATE KEY safe"},

		// OpenAI and Anthropic keys.
		{"openai", "key " + openAIKey + " end", "key [REDACTED:openai-key] end"},
		{"openai project", openAIProj, "[REDACTED:openai-key]"},
		{"anthropic", "ANTHROPIC=" + anthropicKey, "ANTHROPIC=[REDACTED:anthropic-key]"},
		{"openai env var keeps the name", "OPENAI_API_KEY=" + openAIKey, "OPENAI_API_KEY=[REDACTED:openai-key]"},
		{"skeleton kept", "a skeleton key", "a skeleton key"},
		{"task id kept", "task-12345678901234567890123456", "task-12345678901234567890123456"},
		{"sk- too short kept", "sk-abc123", "sk-abc123"},
		{"sk- lowercase slug kept", "see sk-learn-preprocessing-pipeline-guide", "see sk-learn-preprocessing-pipeline-guide"},

		// AWS.
		{"aws key id", "id=" + awsKeyID + ".", "id=[REDACTED:aws-access-key-id]."},
		{"aws sts key id", awsSTSKeyID, "[REDACTED:aws-access-key-id]"},
		{"AKIA too short kept", "AKIA1234ABCD", "AKIA1234ABCD"},
		{"AKIA too long kept", awsKeyID + "X", awsKeyID + "X"},
		{"akia lowercase kept", strings.ToLower(awsKeyID), strings.ToLower(awsKeyID)},
		{"aws secret ini", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = [REDACTED:aws-secret-key]"},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + awsSecret + "\n", "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]\n"},
		{"aws secret json", `{"aws_secret_access_key": "` + awsSecret + `"}`, `{"aws_secret_access_key": "[REDACTED:aws-secret-key]"}`},

		// GitHub.
		{"github pat", "token " + githubPAT, "token [REDACTED:github-token]"},
		{"github oauth", githubOAuth, "[REDACTED:github-token]"},
		{"github user", githubUser, "[REDACTED:github-token]"},
		{"github server", githubServer, "[REDACTED:github-token]"},
		{"github refresh", githubRefr, "[REDACTED:github-token]"},
		{"github fine-grained", "x " + githubFine, "x [REDACTED:github-token]"},
		{"github in url", "https://" + githubPAT + "@github.com/o/r", "https://[REDACTED:github-token]@github.com/o/r"},
		{"ghp_ short kept", "ghp_abc123", "ghp_abc123"},
		{"ghx_ kept", "ghx_1234567890abcdefghijABCDEFGHIJ123456", "ghx_1234567890abcdefghijABCDEFGHIJ123456"},

		// Slack.
		{"slack bot", "SLACK=" + slackBot, "SLACK=[REDACTED:slack-token]"},
		{"slack user", "xoxp-1111111111-2222222222", "[REDACTED:slack-token]"},
		{"xoxz kept", "xoxz-123456789012-1234", "xoxz-123456789012-1234"},
		{"xoxb too short kept", "xoxb-123", "xoxb-123"},

		// Bearer and basic credentials.
		{"authorization bearer", "Authorization: Bearer abc123def456ghi789", "Authorization: Bearer [REDACTED:bearer-token]"},
		{"bearer lowercase", "curl -H 'authorization: bearer xyz9876543210'", "curl -H 'authorization: bearer [REDACTED:bearer-token]'"},
		{"bearer jwt", "Bearer " + jwt, "Bearer [REDACTED:bearer-token]"},
		{"bearer prose kept", "the bearer of bad news", "the bearer of bad news"},
		{"bearer word without digit kept", "Bearer instruments", "Bearer instruments"},
		{"bearer placeholder kept", "Authorization: Bearer <token>", "Authorization: Bearer <token>"},
		{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:basic-auth]"},
		{"basic prose kept", "basic dXNlcjpwYXNzd29yZA", "basic dXNlcjpwYXNzd29yZA"},

		// JWT.
		{"jwt", "id_token " + jwt + " end", "id_token [REDACTED:jwt] end"},
		{"jwt without signature", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "[REDACTED:jwt]"},
		{"jwt header alone kept", "eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJIUzI1NiJ9"},

		// URL user info.
		{"url password", "git clone https://bob:pw123@example.com/r.git", "git clone https://bob:[REDACTED:url-password]@example.com/r.git"},
		{"url port kept", "https://example.com:8443/a@b", "https://example.com:8443/a@b"},
		{"url user only kept", "ssh://git@example.com/r", "ssh://git@example.com/r"},

		// Generic key=value assignments.
		{"password unquoted", "password=hunter2", "password=[REDACTED:password]"},
		{"one-time code", "my one-time code is 483920.", "my one-time code is [REDACTED:one-time-code]."},
		{"otp upper", "OTP: 1234", "OTP: [REDACTED:one-time-code]"},
		{"verification code", "Your verification code: 55120", "Your verification code: [REDACTED:one-time-code]"},
		{"cjk code", "验证码483920，五分钟内有效", "验证码[REDACTED:one-time-code]，五分钟内有效"},
		{"not a code: year", "2fa rollout in 2026-12", "2fa rollout in 2026-12"},
		{"not a code: plain code", "exit code 1234", "exit code 1234"},
		{"password yaml", "db:\n  password: hunter2 # prod\n", "db:\n  password: [REDACTED:password] # prod\n"},
		{"passwd", "passwd: s3cr3t", "passwd: [REDACTED:password]"},
		{"passwd file name kept", `path "../../etc/passwd": ".." is never accepted`, `path "../../etc/passwd": ".." is never accepted`},
		{"secret single quoted", "secret = 'two words'", "secret = '[REDACTED:secret]'"},
		{"client secret", "client_secret: abcdef", "client_secret: [REDACTED:secret]"},
		{"token query", "https://x.test/cb?token=abc123&next=%2F", "https://x.test/cb?token=[REDACTED:token]&next=%2F"},
		{"access_token", "access_token=ya29.a0AfH6", "access_token=[REDACTED:token]"},
		{"api_key", "api_key=AbC123", "api_key=[REDACTED:api-key]"},
		{"apikey", "APIKEY: AbC123", "APIKEY: [REDACTED:api-key]"},
		{"api-key flag", "--api-key=AbC123", "--api-key=[REDACTED:api-key]"},
		{"env upper case", "DB_PASSWORD=hunter2", "DB_PASSWORD=[REDACTED:password]"},
		{"json password", `{"user": "bob", "password": "hun\"ter2"}`, `{"user": "bob", "password": "[REDACTED:password]"}`},
		{"json compact", `{"password":"hunter2","n":1}`, `{"password":"[REDACTED:password]","n":1}`},
		{"json number", `{"token": 12345}`, `{"token": [REDACTED:token]}`},
		{"escaped json", `"{\"password\":\"hunter2\"}"`, `"{\"password\":\"[REDACTED:password]\"}"`},
		{"private_key assignment", "private_key: abcdef", "private_key: [REDACTED:secret]"},
		{"max_tokens kept", "max_tokens=100", "max_tokens=100"},
		{"token_count kept", "token_count: 5", "token_count: 5"},
		{"password_hint kept", "password_hint=kitten", "password_hint=kitten"},
		{"tokenizer kept", "tokenizer: bpe", "tokenizer: bpe"},
		{"mypassword kept", "mypassword=x", "mypassword=x"},
		{"code call kept", `password = os.Getenv("DB")`, `password = os.Getenv("DB")`},
		{"env reference kept", "password: ${DB_PASSWORD}", "password: ${DB_PASSWORD}"},
		{"json null kept", `{"password": null}`, `{"password": null}`},
		{"empty value kept", `password=""`, `password=""`},
		{"no value on the next line", "password=\nhunter2", "password=\nhunter2"},
		{"prose kept", "Reset your password by mail.", "Reset your password by mail."},

		// Markers are left alone, so redaction is idempotent.
		{"marker kept", "password=[REDACTED:password]", "password=[REDACTED:password]"},
		{"marker with tail redacted", "password=[REDACTED:password]tail", "password=[REDACTED:password]"},
		{"clean text", "nothing to see here: 42 files, 3 dirs", "nothing to see here: 42 files, 3 dirs"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if got := r.Redact(tt.want); got != tt.want {
				t.Errorf("Redact is not idempotent on %q: got %q", tt.want, got)
			}
		})
	}
}

func TestContains(t *testing.T) {
	r := NewRedactor("vault-value-42")
	tests := []struct {
		in   string
		kind string // "" means Contains must report nothing
	}{
		{"key: " + pem("OPENSSH PRIVATE KEY"), KindPrivateKey},
		{openAIKey, KindOpenAI},
		{openAIProj, KindOpenAI},
		{anthropicKey, KindAnthropic},
		{awsKeyID, KindAWSKeyID},
		{"aws_secret_access_key=" + awsSecret, KindAWSSecret},
		{githubPAT, KindGitHub},
		{githubFine, KindGitHub},
		{slackBot, KindSlack},
		{"Authorization: Bearer abc123def456ghi789", KindBearer},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", KindBasicAuth},
		{jwt, KindJWT},
		{"vault-value-42", KindKnown},
		{`{"body":"dmF1bHQtdmFsdWUtNDI="}`, KindKnown}, // base64
		{"7661756c742d76616c75652d3432", KindKnown},    // hex
		// The generic assignment rule and URL passwords redact, but do
		// not make Contains true: they have false positives.
		{"password=hunter2", ""},
		{`{"token": "abc"}`, ""},
		{"https://bob:pw123@example.com/", ""},
		{"skeleton task-1234 AKIA12 the bearer of news", ""},
		{"", ""},
	}
	for _, tt := range tests {
		kind, ok := r.Contains(tt.in)
		if ok != (tt.kind != "") || kind != tt.kind {
			t.Errorf("Contains(%q) = %q, %v; want %q, %v", tt.in, kind, ok, tt.kind, tt.kind != "")
		}
	}
}

// referenceMatches finds the matches of ru the slow way: a keyword rule's
// anchored regexp is tried at every place not after a letter or digit,
// without foldScan's prefilter.
func referenceMatches(ru *rule, s string) [][]int {
	var out [][]int
	if ru.at != nil {
		// Anchored at every place not inside an ASCII word.
		for i := 0; i < len(s); i++ {
			if i > 0 && isAlnumByte(s[i-1]) {
				continue
			}
			m := ru.re.FindStringSubmatchIndex(s[i:])
			if m == nil {
				continue
			}
			for k := range m {
				if m[k] >= 0 {
					m[k] += i
				}
			}
			if ru.ok(s, m) {
				out = append(out, m)
				i = max(i, m[1]-1)
			}
		}
		return out
	}
	if ru.keyword == 0 {
		for _, m := range ru.re.FindAllStringSubmatchIndex(s, -1) {
			if ru.wordStart && m[0] > 0 && isWordByte(s[m[0]-1]) || !ru.ok(s, m) {
				continue
			}
			out = append(out, m)
		}
		return out
	}
	for i := 0; i < len(s); i++ {
		if i > 0 && continuesWord(s[i-1]) {
			continue
		}
		m := ru.re.FindStringSubmatchIndex(s[i:])
		if m == nil {
			continue
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += i
			}
		}
		if ru.ok(s, m) {
			out = append(out, m)
			i = max(i, m[1]-1)
		}
	}
	return out
}

func fastMatches(ru *rule, s string) [][]int {
	var out [][]int
	ru.matches(s, foldScan(s), func(m []int) bool {
		out = append(out, m)
		return true
	})
	return out
}

// TestPrefilterIsConservative checks that the cheap prefilters never hide
// a match the regexps would find.
func TestPrefilterIsConservative(t *testing.T) {
	inputs := []string{
		"PASSWORD=x", "PassWd : 'y'", "Secret\t=\tz", "TOKEN:1", "Api-Key=k", "APIKEY=k", "access_key=k",
		"PRIVATE-KEY=k", `\"password\": \"v\"`, "BEARER abc123def", "AUTHORIZATION: BASIC abcd",
		"AWS_SECRET_KEY=" + awsSecret, "awssecretaccesskey: " + awsSecret, "x.token=1 y-secret=2 z_passwd=3",
		"bearer bearer 12345678", openAIKey + " " + jwt + " " + slackBot,
	}
	for _, in := range inputs {
		total := 0
		rs := rules()
		for i := range rs {
			ru := &rs[i]
			want, got := referenceMatches(ru, in), fastMatches(ru, in)
			if !slices.EqualFunc(want, got, slices.Equal) {
				t.Errorf("%s on %q: matches %v; reference %v", ru.kind, in, got, want)
			}
			total += len(got)
		}
		if total == 0 {
			t.Errorf("no rule matched %q", in)
		}
	}
}

func TestIsMarker(t *testing.T) {
	for _, kind := range []string{KindKnown, KindPassword, KindOpenAI, KindUnredactable} {
		if !isMarker(marker(kind)) {
			t.Errorf("isMarker(%q) = false", marker(kind))
		}
	}
	for _, s := range []string{"", "[REDACTED:]", "[REDACTED:x", "REDACTED:x]", "[REDACTED:Upper]", "[REDACTED:a b]", "[REDACTED:x]y"} {
		if isMarker(s) {
			t.Errorf("isMarker(%q) = true", s)
		}
	}
}

func TestNilAndZeroRedactor(t *testing.T) {
	var nilR *Redactor
	in := "password=hunter2 " + openAIKey
	want := "password=[REDACTED:password] [REDACTED:openai-key]"
	if got := nilR.Redact(in); got != want {
		t.Errorf("(*Redactor)(nil).Redact = %q; want %q", got, want)
	}
	if got := (&Redactor{}).Redact(in); got != want {
		t.Errorf("Redactor{}.Redact = %q; want %q", got, want)
	}
	if kind, ok := nilR.Contains(openAIKey); !ok || kind != KindOpenAI {
		t.Errorf("(*Redactor)(nil).Contains = %q, %v", kind, ok)
	}
}
