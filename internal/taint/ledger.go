// Package taint follows the owner's private text through a session by
// value: a Ledger remembers every run of Window bytes of private text the
// model was shown (a file, command output, memory, an answer obtained with
// a vault secret), with where it came from, and finds such a run again in
// the arguments of an outbound call — as it was, in another case, with
// separators added or taken out, reversed, or under the encodings a model
// reaches for (URL, base64, base32, hex, ROT13). The arbiter asks the
// owner before an outbound call that carries one, and names the source.
//
// It is a tripwire, not a proof: a model can paraphrase, translate or
// summarise what it read, and no byte comparison sees that. The session
// mark (permissions.taint = "session": every outbound call of a session
// that read private data asks) stays the strict setting. To keep false
// alarms down, a run also seen in public text (a web page) or typed by the
// owner is not counted: the model could have it from there.
//
// The package is pure: no I/O, no clock. Ledgers are kept and rebuilt by
// the arbiter.
package taint

import (
	"encoding/binary"
	"strings"
	"sync"
	"unicode/utf8"
)

// Window is the shortest run that counts as carrying private text: 8
// letters and digits, case-folded, whatever separates them (a CJK
// character counts as its 3 bytes).
const Window = 8

// MaxGrams bounds what one ledger indexes: about 256 KiB of private text.
// A session that read more is past what can be followed by value, and the
// ledger says so (Overflow): every outbound call counts as carrying
// private data, as under the session mark.
const MaxGrams = 256 << 10

// Label says where a text came from.
type Label uint8

const (
	// Public: the open web or the clock; anyone could have it.
	Public Label = iota
	// Private: the owner's files, memory, command output, or an answer
	// obtained with one of the owner's secrets.
	Private
	// Owner: what the owner typed. It is the task: sending it is what
	// the owner asked for, so it is never counted as private.
	Owner
)

// String names the label.
func (l Label) String() string {
	switch l {
	case Public:
		return "public"
	case Private:
		return "private"
	case Owner:
		return "owner"
	}
	return "unknown"
}

// Source is where a private text came from, as a card names it: "the
// file notes/bank.txt", "your memory", "the output of `cat a.txt`".
type Source struct {
	Label Label
	What  string
}

// Match is private text found in an outbound value.
type Match struct {
	Source Source
	// Encoding is how the value carried it: "" (as it was, or in another
	// case), "url", "base64" or "hex".
	Encoding string
}

// Ledger is one session's private text. The zero Ledger is empty and
// ready; it is safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	grams    map[uint64]uint32 // a folded window → index in sources
	dropped  map[uint64]struct{}
	sources  []Source
	overflow bool
}

// Add records text from src. Private text is indexed; public and owner
// text unmarks the runs it shares with private text (and keeps them from
// being indexed later): whoever holds them did not need the private
// source.
func (l *Ledger) Add(src Source, text string) {
	if text == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if src.Label != Private {
		if l.dropped == nil {
			l.dropped = make(map[uint64]struct{})
		}
		eachGram(fold(text), func(g uint64) bool {
			if len(l.dropped) < MaxGrams {
				l.dropped[g] = struct{}{}
			}
			delete(l.grams, g)
			return true
		})
		return
	}
	if l.overflow {
		return
	}
	if l.grams == nil {
		l.grams = make(map[uint64]uint32)
	}
	idx := uint32(len(l.sources))
	used := false
	eachGram(fold(text), func(g uint64) bool {
		if _, pub := l.dropped[g]; pub {
			return true
		}
		if _, seen := l.grams[g]; seen {
			return true // the first source keeps it
		}
		if len(l.grams) >= MaxGrams {
			l.overflow = true
			return false
		}
		l.grams[g] = idx
		used = true
		return true
	})
	if used {
		l.sources = append(l.sources, src)
	}
}

// Overflow reports whether the ledger holds more private text than it
// can index: every outbound value then counts as carrying some.
func (l *Ledger) Overflow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overflow
}

// Empty reports whether the ledger holds no private text.
func (l *Ledger) Empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.grams) == 0 && !l.overflow
}

// Find reports the first private run found in any of values, as given,
// case-folded, or decoded from URL escapes, base64 or hex.
func (l *Ledger) Find(values ...string) (Match, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.grams) == 0 {
		return Match{}, false
	}
	for _, v := range values {
		for _, d := range decodings(v) {
			var m Match
			found := false
			eachGram(fold(d.text), func(g uint64) bool {
				if i, ok := l.grams[g]; ok {
					m, found = Match{Source: l.sources[i], Encoding: d.encoding}, true
					return false
				}
				return true
			})
			if found {
				return m, true
			}
		}
	}
	return Match{}, false
}

// fold is the text the windows are taken from: case-folded, with only
// letters, digits and non-ASCII kept, so that separators a model slips in
// ("4417 2231", "d.e.n.t.i.s.t") or takes out change nothing.
func fold(s string) string {
	s = strings.ToLower(s)
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') {
			b = append(b, c)
		}
	}
	return string(b)
}

// eachGram calls f with every Window-byte run of s, a folded text, that
// could carry something (not one byte repeated), until f returns false.
func eachGram(s string, f func(uint64) bool) {
	for i := 0; i+Window <= len(s); i++ {
		w := s[i : i+Window]
		if !telling(w) {
			continue
		}
		if !f(binary.LittleEndian.Uint64([]byte(w))) {
			return
		}
	}
}

// telling reports whether a window can carry information worth a card:
// not one byte repeated ("00000000").
func telling(w string) bool {
	return strings.Count(w, w[:1]) != len(w)
}
