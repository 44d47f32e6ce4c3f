// Package lang is the language homard speaks to a person: English or
// Chinese, chosen by the `lang` setting ("auto", "en" or "zh"; auto reads
// LC_ALL, LC_MESSAGES and LANG as POSIX orders them), per chat from the
// platform's language_code, and the message catalog every user-facing
// string goes through.
//
// Contract: a message's key is its English text, a fmt format
// (gettext's msgid). Printer.T, Sprintf, Fprintf, Fprintln and Errorf
// look the key up for the printer's language and fall back to the
// English text, so English needs no catalog and a missing translation
// never loses a message. N marks a literal as a message to translate
// later (a table of labels) without translating it. Every key used in a
// catalogued package has a Chinese entry with the same verbs (the
// catalog test), and no other user-facing literal is left in those
// packages (the literal test, which a `// lang:en` comment on the line
// answers for a string that stays English on purpose: machine-readable
// output, identifiers, log keys). Machine-readable output (--json, API
// fields, rule ids) is never translated.
//
// The catalog is a Go map rather than golang.org/x/text/message or
// go-i18n: both bring x/text/language's tables (about 210 KB measured
// on this binary), which the 25 MB binary ceiling cannot pay; two
// languages need neither plural rules nor matching beyond a prefix.
package lang

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tag is a language homard speaks.
type Tag uint8

const (
	// EN is English, the default and the catalog's keys.
	EN Tag = iota
	// ZH is Simplified Chinese.
	ZH
)

// String is the tag's setting value: "en" or "zh".
func (t Tag) String() string {
	if t == ZH {
		return "zh"
	}
	return "en"
}

// Settings are the values the `lang` setting accepts.
var Settings = []string{"auto", "en", "zh"}

// Parse reads a language tag or a POSIX locale: "en", "en-US", "zh",
// "zh-hans", "zh_CN.UTF-8", "zh-Hant-TW". ok is false for an empty value,
// "C", "POSIX" and any language homard does not speak.
func Parse(s string) (t Tag, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexAny(s, "-_.@"); i >= 0 {
		s = s[:i]
	}
	switch s {
	case "en":
		return EN, true
	case "zh":
		return ZH, true
	}
	return EN, false
}

// FromEnv is the language of the environment: the first of LC_ALL,
// LC_MESSAGES and LANG that is set decides (POSIX order); English when
// none is set or the one set names a language homard does not speak.
func FromEnv(getenv func(string) string) Tag {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			t, _ := Parse(v)
			return t
		}
	}
	return EN
}

// Resolve turns the `lang` setting into a language: "auto" or empty
// reads the environment, "en" and "zh" are themselves. Anything else is
// an error that lists what is accepted.
func Resolve(setting string, getenv func(string) string) (Tag, error) {
	switch strings.ToLower(strings.TrimSpace(setting)) {
	case "", "auto":
		return FromEnv(getenv), nil
	case "en":
		return EN, nil
	case "zh":
		return ZH, nil
	}
	return EN, fmt.Errorf("lang = %q: use one of %s", setting, strings.Join(Settings, ", "))
}

// ForTurn is the language of a model turn: code when it names one ("zh",
// "zh-hans", "en"), else the setting resolved with getenv (an invalid
// setting is English; config validation reports it).
func ForTurn(code, setting string, getenv func(string) string) Tag {
	if t, ok := Parse(code); ok {
		return t
	}
	t, _ := Resolve(setting, getenv)
	return t
}

// PromptLine is what the system prompt gets for t: for Chinese, one line
// asking the model to answer in Simplified Chinese; for English, nothing
// (the first request's byte budget has no room, and English is the
// prompt's own language).
func PromptLine(t Tag) string {
	if t == ZH {
		return "\nAnswer in Simplified Chinese unless the owner writes in another language."
	}
	return ""
}

// Printer prints messages in one language. The zero Printer prints
// English.
type Printer struct{ tag Tag }

// For returns the printer of t.
func For(t Tag) Printer { return Printer{tag: t} }

// Tag is the printer's language.
func (p Printer) Tag() Tag { return p.tag }

// N marks msg as a catalog key and returns it untranslated: for a table
// of labels translated where it is printed (p.T(label)).
func N(msg string) string { return msg }

// T is msg in the printer's language (msg when it has no entry).
func (p Printer) T(msg string) string {
	if p.tag == EN {
		return msg
	}
	if s, ok := lookup(p.tag, msg); ok {
		return s
	}
	return msg
}

// Sprintf formats the translation of format with args.
func (p Printer) Sprintf(format string, args ...any) string {
	return fmt.Sprintf(p.T(format), args...)
}

// Fprintf writes the translation of format with args to w.
func (p Printer) Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, p.T(format), args...)
}

// Fprintln writes the translation of msg and a newline to w.
func (p Printer) Fprintln(w io.Writer, msg string) (int, error) {
	return io.WriteString(w, p.T(msg)+"\n")
}

// Errorf is fmt.Errorf of the translation of format (%w wraps as usual).
func (p Printer) Errorf(format string, args ...any) error {
	return fmt.Errorf(p.T(format), args...)
}

// Date is t's calendar date: "6 Dec 2026" or "2026年12月6日".
func (p Printer) Date(t time.Time) string {
	if p.tag == ZH {
		return strconv.Itoa(t.Year()) + "年" + strconv.Itoa(int(t.Month())) + "月" + strconv.Itoa(t.Day()) + "日"
	}
	return t.Format("2 Jan 2006")
}

// DateTime is t's date and minute: "6 Dec 2026 18:00" or
// "2026年12月6日 18:00".
func (p Printer) DateTime(t time.Time) string {
	return p.Date(t) + " " + t.Format("15:04")
}

// Weekday is d's name: "Monday" or "星期一".
func (p Printer) Weekday(d time.Weekday) string {
	if p.tag == ZH {
		return "星期" + []string{"日", "一", "二", "三", "四", "五", "六"}[d%7]
	}
	return d.String()
}

// Int is n with its thousands grouped: "12,345" in both languages (the
// grouping Chinese text uses with Arabic digits).
func (p Printer) Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

var (
	zhOnce   = newOnce()
	zhAll    map[string]string // the keyed parts: zhSets and zhPacked
	zhByHash map[uint64]string // the hashed parts: zhHashed
)

// newOnce is a fresh once (a test swaps the catalog).
func newOnce() *sync.Once { return new(sync.Once) }

// loadZH reads the Chinese catalog's parts on the first Chinese lookup.
func loadZH() {
	zhAll = merge(append(zhSets[:len(zhSets):len(zhSets)], unpack(zhPacked)...))
	zhByHash = unpackHashed(zhHashed)
}

// lookup finds msg's translation into t (only ZH has a catalog).
func lookup(t Tag, msg string) (string, bool) {
	if t != ZH {
		return "", false
	}
	zhOnce.Do(loadZH)
	if s, ok := zhAll[msg]; ok {
		return s, true
	}
	s, ok := zhByHash[keyHash(msg)]
	return s, ok
}

// merge joins the catalog's parts into one map. A key in two parts keeps
// the first; the catalog test reports it.
func merge(sets []map[string]string) map[string]string {
	n := 0
	for _, m := range sets {
		n += len(m)
	}
	all := make(map[string]string, n)
	for _, m := range sets {
		for k, v := range m {
			if _, dup := all[k]; !dup {
				all[k] = v
			}
		}
	}
	return all
}

// Catalog returns a copy of the keyed parts of the Chinese catalog: key
// (English) → translation. The web UI's strings are served from it; the
// hashed parts (the CLI's, setup's, the memory review's and mcp login's:
// zhHashed) are not in it, and the catalog test keeps every key of the
// web UI's scripts in it.
func Catalog(t Tag) map[string]string {
	if t != ZH {
		return map[string]string{}
	}
	zhOnce.Do(loadZH)
	out := make(map[string]string, len(zhAll))
	for k, v := range zhAll {
		out[k] = v
	}
	return out
}
