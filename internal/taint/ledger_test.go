package taint

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

const note = "Bank: account 4417-2231-9980, PIN hint: blue heron over the dam"

func reversed(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func noteLedger() *Ledger {
	l := &Ledger{}
	l.Add(Source{Private, "the file notes/bank.txt"}, note)
	return l
}

// TestFindsPrivateTextInEveryEncoding: a piece of the note, 8 bytes or
// more, is found in an outbound value as it is, in another case, and
// URL-, base64- (standard and URL alphabets, at any offset in the value)
// or hex-encoded, and the match names the note.
func TestFindsPrivateTextInEveryEncoding(t *testing.T) {
	l := noteLedger()
	piece := "4417-2231-9980"
	cases := map[string]string{
		"plain":          "https://evil.example/c?d=" + piece,
		"upper":          "https://evil.example/c?d=" + strings.ToUpper("blue heron over"),
		"url":            "https://evil.example/c?d=" + url.QueryEscape("PIN hint: blue"),
		"url twice":      "https://evil.example/c?d=" + url.QueryEscape(url.QueryEscape("PIN hint: blue")),
		"base64":         "https://evil.example/c?d=" + base64.StdEncoding.EncodeToString([]byte(piece)),
		"base64 url raw": "https://evil.example/x" + base64.RawURLEncoding.EncodeToString([]byte("heron over the dam")),
		"base64 offset":  "https://evil.example/c?d=zz" + base64.StdEncoding.EncodeToString([]byte("over the dam")),
		"hex":            "https://evil.example/c?d=" + hex.EncodeToString([]byte(piece)),
		"hex upper odd":  "https://evil.example/c?d=f" + strings.ToUpper(hex.EncodeToString([]byte(piece))),
		"in a query":     "what does blue heron over mean",
		"spaced out":     "https://evil.example/c?d=" + strings.Join(strings.Split("blueheron", ""), "."),
		"no separators":  "https://evil.example/c?d=441722319980",
		"reversed":       "https://evil.example/c?d=" + reversed("heron over the dam"),
		"rot13":          "https://evil.example/c?d=" + rot13("heron over the dam"),
		"base32":         "https://evil.example/c?d=" + base32.StdEncoding.EncodeToString([]byte(piece)),
		"base32 lower":   "https://evil.example/c/" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("over the dam"))),
		"hex reversed":   "https://evil.example/c?d=" + hex.EncodeToString([]byte(reversed(piece))),
	}
	want := map[string]string{"plain": "", "upper": "", "url": "url", "url twice": "url", "base64": "base64",
		"base64 url raw": "base64", "base64 offset": "base64", "hex": "hex", "hex upper odd": "hex", "in a query": "",
		"spaced out": "", "no separators": "", "reversed": "reversed", "rot13": "ROT13", "base32": "base32", "base32 lower": "base32",
		"hex reversed": "hex, reversed"}
	for name, v := range cases {
		m, ok := l.Find(v)
		if !ok {
			t.Errorf("%s: %q carries the note and was not found", name, v)
			continue
		}
		if m.Source.What != "the file notes/bank.txt" || m.Source.Label != Private {
			t.Errorf("%s: matched %+v; want the note", name, m.Source)
		}
		if m.Encoding != want[name] {
			t.Errorf("%s: encoding %q; want %q", name, m.Encoding, want[name])
		}
	}
}

// TestCleanValuesPass is the twin: values that share nothing of 8 bytes
// with the note, or only what is not telling (spaces, punctuation, one
// byte repeated), or only 7 bytes, are not matched.
func TestCleanValuesPass(t *testing.T) {
	l := noteLedger()
	l.Add(Source{Private, "the file sep.txt"}, "==========          ::::::::")
	for _, v := range []string{
		"https://en.wikipedia.org/wiki/Heron",
		"weather in Paris tomorrow",
		"4417-22",   // 7 bytes of the account number
		"========",  // only punctuation
		"        x", // spaces
		base64.StdEncoding.EncodeToString([]byte("weather in Paris")),
		hex.EncodeToString([]byte("weather in Paris")),
	} {
		if m, ok := l.Find(v); ok {
			t.Errorf("%q matched %+v; it carries nothing private", v, m)
		}
	}
}

// TestPublicAndOwnerTextIsNotPrivate: a run the model also read on a public
// page, or that the owner typed, is not counted, whichever came first; a
// run of the note seen nowhere else still is.
func TestPublicAndOwnerTextIsNotPrivate(t *testing.T) {
	l := noteLedger()
	l.Add(Source{Public, "https://birds.example/"}, "The blue heron over the dam is a common sight.")
	if m, ok := l.Find("blue heron over the dam"); ok {
		t.Errorf("text also on a public page matched %+v", m)
	}
	l.Add(Source{Owner, "you"}, "look up account 4417-2231")
	if m, ok := l.Find("account 4417-2231"); ok {
		t.Errorf("text the owner typed matched %+v", m)
	}
	if _, ok := l.Find("2231-9980"); !ok {
		t.Error("the rest of the account number, seen nowhere public, was not found")
	}
	// Public first, private after: the shared runs are never indexed.
	l2 := &Ledger{}
	l2.Add(Source{Public, "page"}, "release notes for version 1.2.3")
	l2.Add(Source{Private, "the file todo.md"}, "read the release notes for version 1.2.3 and my key XJ7-QQ-99A1")
	if m, ok := l2.Find("release notes for version"); ok {
		t.Errorf("public text indexed after the fact: %+v", m)
	}
	if _, ok := l2.Find("key XJ7-QQ-99A1"); !ok {
		t.Error("the private part was not found")
	}
}

// TestOverflowFailsClosed: past MaxGrams the ledger says it overflowed
// (the caller then treats every outbound value as private), and an empty
// ledger finds nothing.
func TestOverflowFailsClosed(t *testing.T) {
	l := &Ledger{}
	if !l.Empty() || l.Overflow() {
		t.Fatal("a new ledger is not empty")
	}
	var b strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Len() < MaxGrams+2*Window {
		b.WriteString(strconv.FormatUint(rng.Uint64(), 36))
	}
	l.Add(Source{Private, "big"}, b.String())
	if !l.Overflow() || l.Empty() {
		t.Fatalf("overflow %v, empty %v after %d bytes; want an overflowed ledger", l.Overflow(), l.Empty(), b.Len())
	}
}

// TestFirstSourceIsNamed: a run two private texts share names the first.
func TestFirstSourceIsNamed(t *testing.T) {
	l := noteLedger()
	l.Add(Source{Private, "the output of `cat notes/bank.txt`"}, note)
	if m, _ := l.Find(note); m.Source.What != "the file notes/bank.txt" {
		t.Errorf("named %q; want the first source", m.Source.What)
	}
}

// FuzzFind: any value, however built, is checked without a panic, and a
// value holding the note verbatim is always found.
func FuzzFind(f *testing.F) {
	f.Add("https://x.example/?q=%41%42", 3)
	f.Add("////////", 0)
	f.Add("a1b2c3d4e5f6a7b8c9d0", 5)
	l := noteLedger()
	f.Fuzz(func(t *testing.T, v string, at int) {
		l.Find(v)
		if at < 0 {
			at = -at
		}
		at %= len(v) + 1
		if _, ok := l.Find(v[:at] + note + v[at:]); !ok {
			t.Fatalf("the note inside %q was not found", v)
		}
	})
}

// BenchmarkFind: one outbound URL of about 200 bytes checked against a
// ledger holding 64 KiB of private text — the cost value taint adds to a
// fetch's decision.
func BenchmarkFind(b *testing.B) {
	l := &Ledger{}
	rng := rand.New(rand.NewPCG(3, 4))
	var text strings.Builder
	for text.Len() < 64<<10 {
		text.WriteString(strconv.FormatUint(rng.Uint64(), 36) + " ")
	}
	l.Add(Source{Private, "the file big.txt"}, text.String())
	v := "https://search.example/q?query=" + url.QueryEscape("weather in Paris tomorrow and the day after, hourly") +
		"&session=" + base64.RawURLEncoding.EncodeToString([]byte("a harmless session token value")) + "&lang=en"
	for b.Loop() {
		if _, ok := l.Find(v); ok {
			b.Fatal("matched")
		}
	}
}
