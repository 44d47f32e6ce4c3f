// Package secrets keeps secret values out of everything homard shows the
// model or writes down: prompts, tool results, logs, the audit trail and
// memory.
//
// A Vault keeps secret values encrypted at rest (AES-256-GCM, key in a 0600
// file), each bound to the hosts it may be sent to; Release hands a value
// out only for a bound host, at the egress boundary.
//
// A Redactor replaces known secret values (in raw, base64, hex, URL-escaped
// and JSON-escaped form, and, for a long and random enough value, reversed,
// in another case, spaced out, or half of it: transform.go) and well-known
// secret patterns (private keys, API keys, access tokens, key=value
// passwords) with markers such as "[REDACTED:openai-key]"; Contains tells
// the arbiter that tool arguments carry a secret, so the proposal is
// denied. The vault's values are handed to NewRedactor.
//
// Contract: a Redactor is immutable and safe for concurrent use; when the
// known values change, build a new one. Redact is idempotent, and its output
// never contains a known value (or any of its encoded forms, or a piece of
// a transformed one that the search looks for), unless that value is itself
// a piece of marker text such as "REDACTED".
package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

const (
	// MinKnownLen is the shortest known value a Redactor looks for;
	// shorter ones would match ordinary text.
	MinKnownLen = 6
	// maxPasses bounds the redaction passes that Redact runs to reach a
	// text that a further pass leaves unchanged.
	maxPasses = 4
	// filterBits is the size of the Bloom-style filter over the first four
	// bytes of every needle.
	filterBits = 1 << 16
)

// Redactor replaces secrets in text. The zero value and a nil *Redactor
// know no values and redact patterns only. It is safe for concurrent use;
// Learn adds values (a token refreshed after start) while it is in use.
type Redactor struct {
	mu    sync.Mutex            // serialises Learn
	known []string              // the values its index was built from
	idx   atomic.Pointer[index] // nil until a value long enough is known
}

// index is the search structure over a set of known values; an index is
// never changed once built, so a reader needs no lock.
type index struct {
	needles  []string           // every encoded form of every known value
	byPrefix map[uint32][]int32 // needle ids by their first four bytes, longest first
	filter   []uint64           // bit filterHash(first four bytes) of every needle
	tf       *transforms        // pieces of transformed values; nil when no value qualifies
}

// NewRedactor returns a Redactor for the given known secret values, for
// example the vault's. Values shorter than MinKnownLen bytes are ignored.
func NewRedactor(known ...string) *Redactor {
	r := &Redactor{}
	r.Learn(known...)
	return r
}

// Learn adds known values (shorter than MinKnownLen: ignored) and builds
// the index again, swapped in whole: a Redact running meanwhile uses the
// old or the new one, never half of each.
func (r *Redactor) Learn(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) >= MinKnownLen && !slices.Contains(r.known, v) {
			r.known = append(r.known, v)
			added = true
		}
	}
	if added {
		r.idx.Store(newIndex(r.known))
	}
}

// newIndex builds the index over values (each at least MinKnownLen long);
// nil when no encoded form is long enough to look for.
func newIndex(values []string) *index {
	x := &index{}
	seen := make(map[string]bool)
	for _, v := range values {
		for _, n := range Encodings(v) {
			if len(n) >= 4 && !seen[n] {
				seen[n] = true
				x.needles = append(x.needles, n)
			}
		}
	}
	if len(x.needles) == 0 {
		return nil
	}
	x.tf = newTransforms(values)
	x.byPrefix = make(map[uint32][]int32)
	x.filter = make([]uint64, filterBits/64)
	for id, n := range x.needles {
		w := word(n, 0)
		x.byPrefix[w] = append(x.byPrefix[w], int32(id))
		h := filterHash(w)
		x.filter[h/64] |= 1 << (h % 64)
	}
	for w, ids := range x.byPrefix {
		slices.SortFunc(ids, func(a, b int32) int { return len(x.needles[b]) - len(x.needles[a]) })
		x.byPrefix[w] = ids
	}
	return x
}

// current is the index in use; nil for a nil Redactor or one that knows
// no value.
func (r *Redactor) current() *index {
	if r == nil {
		return nil
	}
	return r.idx.Load()
}

// Encodings lists the forms in which a value may appear in text: raw, lower
// and upper hex, standard and URL-safe base64 with and without padding, the
// base64 characters that encode the value when it sits at each of the three
// byte alignments inside a longer base64-encoded text, URL query and path
// escaping and JSON string escaping.
func Encodings(v string) []string {
	b := []byte(v)
	out := []string{
		v,
		hex.EncodeToString(b),
		strings.ToUpper(hex.EncodeToString(b)),
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(v),
		url.PathEscape(v),
		jsonEscape(v, true),
		jsonEscape(v, false),
	}
	// Inside a longer base64 text the value starts at byte offset k mod 3.
	// Characters whose six bits all come from the value are fixed; the
	// first and last may mix in neighbouring bytes and are left out. At
	// k = 0 this is the unpadded encoding (less a partial last character).
	for k := range 3 {
		start := (8*k + 5) / 6
		end := 8 * (k + len(b)) / 6
		buf := append(make([]byte, k, k+len(b)), b...)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString(buf)[start:end])
		}
	}
	return out
}

// jsonEscape returns v as it appears between the quotes of a JSON string.
func jsonEscape(v string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v) // a string always encodes
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

func word(s string, i int) uint32 {
	_ = s[i+3] // one bounds check
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func filterHash(w uint32) uint32 { return (w * 0x9E3779B1) >> 16 }

// knownSpans returns the merged byte ranges of s covered by known values,
// in order. With firstOnly it stops at the first.
func (r *index) knownSpans(s string, firstOnly bool) [][2]int {
	if r == nil || len(r.needles) == 0 {
		return nil
	}
	var spans [][2]int
	for i := 0; i+4 <= len(s); i++ {
		w := word(s, i)
		h := filterHash(w)
		if r.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, id := range r.byPrefix[w] {
			n := r.needles[id]
			if !strings.HasPrefix(s[i:], n) {
				continue
			}
			end := i + len(n)
			if k := len(spans) - 1; k >= 0 && i < spans[k][1] {
				spans[k][1] = max(spans[k][1], end)
			} else {
				spans = append(spans, [2]int{i, end})
			}
			if firstOnly {
				return spans
			}
			break // the longest needle at i
		}
	}
	return spans
}

// Redact returns s with every known value (exact, encoded, or a piece of
// it transformed) and every secret pattern replaced by a marker naming its
// kind. Pattern matches keep their non-secret part: "password=hunter2"
// becomes "password=[REDACTED:password]".
//
// Redact repeats its pass until the text no longer changes, so that a
// replacement cannot leave (or create, with neighbouring text) something a
// pass would redact; that makes Redact idempotent. If the text has not
// settled after a few passes, which takes hostile input, the whole text is
// replaced by "[REDACTED:unredactable]": failing closed beats leaking.
func (r *Redactor) Redact(s string) string {
	for range maxPasses {
		out := r.pass(s)
		if out == s {
			return s
		}
		s = out
	}
	return marker(KindUnredactable)
}

// pass redacts known values and pieces of transformed ones, then each
// pattern once.
func (r *Redactor) pass(s string) string {
	x := r.current()
	spans := x.knownSpans(s, false)
	if x.transformed(s) {
		spans = mergeSpans(append(spans, x.tf.spans(s)...))
	}
	if spans != nil {
		var b strings.Builder
		last := 0
		for _, sp := range spans {
			b.WriteString(s[last:sp[0]])
			b.WriteString(marker(KindKnown))
			last = sp[1]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	fold := foldScan(s)
	rs := rules()
	for i := range rs {
		s = rs[i].replace(s, fold)
	}
	return s
}

// Contains reports whether s holds a known value in any of its encodings,
// or transformed (reversed, in another case, spaced out, or cut in two
// pieces anywhere in s: transform.go), or a high-confidence secret pattern
// (a private key, an API key, an AWS key, a GitHub or Slack token, a bearer
// or basic credential, a JWT), and names the kind. The generic key=value
// rule is left out: "token: 3" is common in honest arguments. Half of a
// transformed value alone is not reported, though Redact hides it.
func (r *Redactor) Contains(s string) (kind string, ok bool) {
	if x := r.current(); x.knownSpans(s, true) != nil || x.transformed(s) && x.tf.whole(s) {
		return KindKnown, true
	}
	fold := foldScan(s)
	rs := rules()
	for i := range rs {
		ru := &rs[i]
		if !ru.high {
			continue
		}
		found := false
		ru.matches(s, fold, func(m []int) bool {
			kind, found = ru.kindAt(s, m), true
			return false
		})
		if found {
			return kind, true
		}
	}
	return "", false
}

// transformed reports whether s may hold a piece of a transformed value
// (transform.go): the cheap test before the search that allocates.
func (r *index) transformed(s string) bool {
	return r != nil && r.tf != nil && r.tf.hasPiece(s)
}

// span returns the part of match m that holds the secret, or -1, -1.
func (ru *rule) span(m []int) (start, end int) {
	if len(ru.groups) == 0 {
		return m[0], m[1]
	}
	for _, g := range ru.groups {
		if m[2*g] >= 0 {
			return m[2*g], m[2*g+1]
		}
	}
	return -1, -1
}

func (ru *rule) kindAt(s string, m []int) string {
	if ru.kindOf != nil {
		return ru.kindOf(s, m)
	}
	return ru.kind
}

// replace redacts every accepted match of ru in s.
func (ru *rule) replace(s string, fold foldHits) string {
	var b strings.Builder
	last := 0
	ru.matches(s, fold, func(m []int) bool {
		start, end := ru.span(m)
		b.WriteString(s[last:start])
		b.WriteString(marker(ru.kindAt(s, m)))
		last = end
		return true
	})
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
