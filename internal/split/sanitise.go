package split

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Value is a worker's answer after its sanitiser: what the planner may
// see. A refused answer is Value{OK: false} with why, and the planner is
// told only that the item gave no value.
type Value struct {
	Item string
	Type string
	// Text is the sanitised value; for an artifact, a placeholder the
	// planner can pass on ("[artifact a1]").
	Text string
	OK   bool
	// Why a refused answer was refused (shown to the owner, not the
	// planner).
	Why string
	// Artifact is an artifact's text: shown to the owner after the
	// answer, never to the planner.
	Artifact string
}

var numberRe = regexp.MustCompile(`^-?[0-9]{1,15}(\.[0-9]{1,6})?$`)

// Sanitise reduces a worker's answer to its item's declared type. Only
// the first line that parses counts for number, date, url and yesno (a
// model often adds a sentence); nothing else of the answer passes.
func Sanitise(it Item, answer string) Value {
	v := Value{Item: it.ID, Type: it.Returns.Type}
	refuse := func(format string, args ...any) Value {
		v.Why = fmt.Sprintf(format, args...)
		return v
	}
	answer = strings.TrimSpace(answer)
	switch it.Returns.Type {
	case Artifact:
		v.Text, v.OK, v.Artifact = "[artifact "+it.ID+"]", true, answer
		return v
	case Text:
		t := oneLine(answer)
		if t == "" {
			return refuse("empty")
		}
		if utf8.RuneCountInString(t) > MaxTextLen {
			return refuse("longer than %d characters", MaxTextLen)
		}
		v.Text, v.OK = t, true
		return v
	}
	for _, line := range strings.Split(answer, "\n") {
		s := strings.Trim(strings.TrimSpace(line), "`*\"'. ")
		if s == "" {
			continue
		}
		switch it.Returns.Type {
		case Number:
			n := strings.ReplaceAll(s, ",", "")
			if numberRe.MatchString(n) {
				v.Text, v.OK = n, true
				return v
			}
		case Date:
			if d, err := time.Parse("2006-01-02", s); err == nil {
				v.Text, v.OK = d.Format("2006-01-02"), true
				return v
			}
		case YesNo:
			switch strings.ToLower(s) {
			case "yes", "true", "y":
				v.Text, v.OK = "yes", true
				return v
			case "no", "false", "n":
				v.Text, v.OK = "no", true
				return v
			}
		case URL:
			if u, ok := allowedURL(s, it.Returns.Allow); ok {
				v.Text, v.OK = u, true
				return v
			}
		}
	}
	return refuse("no %s in the answer", it.Returns.Type)
}

// allowedURL returns s as an https URL on one of allow's hosts, without
// credentials.
func allowedURL(s string, allow []string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Host == "" || len(s) > 2000 || u.Port() != "" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	for _, a := range allow {
		if host == a || (strings.HasPrefix(a, "*.") && strings.HasSuffix(host, a[1:])) {
			return u.String(), true
		}
	}
	return "", false
}

// oneLine is text as one line: controls and line breaks become spaces,
// runs of spaces one.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// Values is the block the planner's last call reads: each item's value or
// that it gave none, as data.
func Values(vs []Value) string {
	var b strings.Builder
	for _, v := range vs {
		if v.OK {
			fmt.Fprintf(&b, "%s (%s): %s\n", v.Item, v.Type, strconv.Quote(v.Text))
		} else {
			fmt.Fprintf(&b, "%s (%s): no value\n", v.Item, v.Type)
		}
	}
	return b.String()
}
