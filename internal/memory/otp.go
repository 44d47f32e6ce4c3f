package memory

import (
	"regexp"
	"strings"
)

// otpKeyword finds words that introduce a one-time code. A number of four
// to eight digits close to one of them is taken for a code.
var otpKeyword = regexp.MustCompile(`(?i)\b(?:otp|totp|2fa|mfa|one[- ]?time|verification|passcode|pin|code)\b|验证码|驗證碼|校验码|动态码|認証コード|確認コード|인증번호|인증 코드`)

// otpDigits is a 4 to 8 digit number on its own: not part of a date, a
// time, a version or a path ("2026-12-01", "10:30", "1.2345").
var otpDigits = regexp.MustCompile(`(?:^|[^0-9A-Za-z/.-])([0-9]{4,8})(?:$|[^0-9A-Za-z/:-]|\.(?:[^0-9]|$))`)

// notOTP are words that, just before "code", make it something else.
var notOTP = []string{"zip", "postal", "post", "area", "country", "dial", "error", "status", "exit", "http", "source", "promo", "discount"}

// OneTimeCode reports whether text looks like it holds a one-time code
// ("my one-time code is 483920", "OTP: 1234", "验证码 483920"): a keyword
// with a 4 to 8 digit number within a few words after it, or just before.
func OneTimeCode(text string) bool {
	for _, m := range otpKeyword.FindAllStringIndex(text, -1) {
		kw := strings.ToLower(text[m[0]:m[1]])
		if kw == "code" {
			before := strings.Fields(strings.ToLower(text[max(0, m[0]-12):m[0]]))
			if len(before) > 0 && contains(notOTP, strings.Trim(before[len(before)-1], ",.:;-")) {
				continue
			}
		}
		if otpDigits.MatchString(text[m[1]:min(len(text), m[1]+40)]) ||
			otpDigits.MatchString(text[max(0, m[0]-20):m[0]]) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
