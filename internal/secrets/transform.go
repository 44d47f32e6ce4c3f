package secrets

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Transformed known values.
//
// A hostile model can carry a known value past an exact search with cheap
// transforms: write it backwards, change its case, put a space, '-', '.',
// ',', '_', a zero-width character or a line break between its characters,
// or cut it in two and put the halves in two arguments. All of these are
// found by one search, in skeletons (fold.go): a value's core is the
// skeleton of the value, and
//
//   - a change of case or separators leaves the core unchanged;
//   - a reversed value has the reversed core;
//   - of the two pieces of a value cut in two, one holds at least half of
//     the core: its first half (a prefix piece) or its last half (a suffix
//     piece), each possibly reversed on its own.
//
// So each value contributes four needles, the first and last halves of its
// core and of the reversed core, and a text holds a piece of the value
// when its skeleton holds a needle. Where one is found, it is extended as
// far as the core goes, giving the longest prefix and suffix pieces that
// the text holds.
//
// Redact hides every such piece: a text that holds half a key hides it,
// so reading a key in two halves (two tool calls) shows neither. Contains,
// which refuses a tool call, asks for the whole value: a prefix piece and a
// suffix piece that together make the core, in any order and anywhere in
// the text (in one JSON string or two, any pair order), or one piece that
// is the whole core. The arbiter hands Contains the raw arguments and the
// canonical Plan, so the "string values" are read straight from the JSON,
// escapes and all; a piece cut across two values is found because the
// skeleton skips the JSON between them.
//
// Only values long and random enough take part, so that a short or plain
// value does not turn ordinary text into a match: the core must have
// minTransformRunes characters and keep at least half the value's, and a
// needle must carry minPieceBits of estimated entropy (tokenBits). A value
// whose halves are too plain (a passphrase of dictionary words, a hex
// string under 20 characters) is searched for whole only; one whose whole
// core is too plain, exactly only. What is not searched for: a value cut in
// three or more pieces, pieces in other encodings (a reversed value in
// base64), other look-alike characters (Cyrillic for Latin; fullwidth ASCII
// is folded), and a value whose first or last half is public text (a
// webhook URL whose token is at its end: its first half matches other
// URLs of that host; store the token instead).
const (
	// minTransformRunes is the shortest core searched for transformed.
	minTransformRunes = 12
	// minPieceBits is the least estimated entropy of a needle. A needle
	// matches a random position of unrelated text with a chance of about
	// 2^-minPieceBits.
	minPieceBits = 40
	// pieceKeyLen is the length of the needles' index key; every needle
	// is at least that long (a needle of minPieceBits has 8 or more
	// runes, and a whole core minTransformRunes).
	pieceKeyLen = 8
	// pieceFilterBits is the size of the filter over the needles' keys.
	pieceFilterBits = 1 << 16
)

// A transformed is one known value as the transform search sees it.
type transformed struct {
	fwd, rev   string // the core, and the core reversed by characters
	head, tail int    // bytes of fwd in its first and last half; both len(fwd) when searched whole
}

func (v *transformed) whole() bool { return v.head == len(v.fwd) }

// A needle is one piece searched for: the first or last half of a value's
// core or reversed core (or the whole of either).
type needle struct {
	s        string
	value    int32 // index in transforms.values
	reversed bool  // a piece of rev, not of fwd
	starts   bool  // the piece starts its core (extended forwards), else ends it (backwards)
}

// transforms searches skeletons for pieces of known values.
type transforms struct {
	values  []transformed
	needles []needle                      // each at least pieceKeyLen bytes
	byKey   map[uint64][]int32            // needle ids by their first pieceKeyLen bytes
	filter  *[pieceFilterBits / 64]uint64 // bit pieceHash(key) of every needle
}

// newTransforms returns the search for the values that qualify, or nil.
func newTransforms(values []string) *transforms {
	tf := &transforms{}
	seen := make(map[string]bool)
	for _, val := range values {
		v, ok := transformOf(val)
		if !ok || seen[v.fwd] {
			continue
		}
		seen[v.fwd] = true
		id := int32(len(tf.values))
		tf.values = append(tf.values, v)
		l := len(v.fwd)
		tf.needles = append(tf.needles,
			needle{v.fwd[:v.head], id, false, true},
			needle{v.rev[:v.tail], id, true, true})
		if !v.whole() {
			tf.needles = append(tf.needles,
				needle{v.fwd[l-v.tail:], id, false, false},
				needle{v.rev[l-v.head:], id, true, false})
		}
	}
	if len(tf.values) == 0 {
		return nil
	}
	tf.byKey = make(map[uint64][]int32)
	tf.filter = new([pieceFilterBits / 64]uint64)
	for id, n := range tf.needles {
		k := pieceKey(n.s)
		tf.byKey[k] = append(tf.byKey[k], int32(id))
		h := pieceHash(k)
		tf.filter[h/64] |= 1 << (h % 64)
	}
	return tf
}

func pieceKey(n string) uint64 {
	var k uint64
	for i := range pieceKeyLen {
		k = k<<8 | uint64(n[i])
	}
	return k
}

// pieceHash is 16 bits of k, well mixed.
func pieceHash(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> 48 }

// transformOf returns how the value v is searched for transformed, and
// false if it is searched for exactly only.
func transformOf(v string) (transformed, bool) {
	core, bits := coreOf(v)
	l := len(bits)
	if l < minTransformRunes || 2*l < utf8.RuneCountInString(v) {
		return transformed{}, false
	}
	runes := []rune(core)
	// sum estimates the entropy of runes[a:b]: the characters' estimates,
	// but at most distinctBits a distinct character, so that a repetitive
	// value ("0000000000000000", "abcabcabcabc") is too plain.
	sum := func(a, b int) (s float64) {
		distinct := make(map[rune]bool)
		for i := a; i < b; i++ {
			s += bits[i]
			distinct[runes[i]] = true
		}
		return min(s, distinctBits*float64(len(distinct)))
	}
	if sum(0, l) < minPieceBits {
		return transformed{}, false
	}
	rev := []rune(core)
	slices.Reverse(rev)
	t := transformed{fwd: core, rev: string(rev), head: len(core), tail: len(core)}
	if h := (l + 1) / 2; sum(0, h) >= minPieceBits && sum(l-h, l) >= minPieceBits {
		head, tail := len(string(runes[:h])), len(string(runes[l-h:]))
		if min(head, tail) >= pieceKeyLen { // always, with these constants
			t.head, t.tail = head, tail
		}
	}
	return t, true
}

// hasPiece reports whether the skeleton of s, in any reading, holds a
// needle. It reads s once and does not allocate; it is the whole cost of
// the search on text that holds no piece: per byte, a table lookup and a
// filter test.
//
// Readings part only at an escape that covers a letter or digit ("\n",
// "%41"), and only until pieceKeyLen more skeleton bytes have gone by:
// then their windows hold the same bytes again. So readBoth has the one
// window that is always read, and each other reading has its own only for
// those bytes after an escape that it reads otherwise; while a reading's
// window is readBoth's, a key found there is followed in that reading too.
func (tf *transforms) hasPiece(s string) bool {
	filter := tf.filter
	hit := func(w uint64) bool {
		h := pieceHash(w)
		return filter[h/64]&(1<<(h%64)) != 0
	}
	var win [readings]uint64 // the last pieceKeyLen bytes of each reading
	var n [readings]int      // skeleton bytes read in each reading
	var apart [readings]int  // bytes still to read before win[rd] is win[readBoth] again
	along := func(rd reading) bool { return apart[rd] == 0 }
	// follow reports whether a needle with key win[readBoth] goes on
	// from pending and s[i], in readBoth or a reading that is along.
	follow := func(pending []byte, i int) bool {
		for rd := readBoth; ; rd-- {
			if (rd == readBoth || along(rd)) && tf.found(win[readBoth], pending, s, i, rd) {
				return true
			}
			if rd == 0 {
				return false
			}
		}
	}
	for i := 0; i < len(s); {
		if apart == [readings]int{} {
			var stopped bool
			if i, win[readBoth], n[readBoth], stopped = asciiRun(filter, s, i, win[readBoth], n[readBoth]); stopped {
				if follow(nil, i) {
					return true
				}
				continue
			}
			if i == len(s) {
				break
			}
		}
		// Here some reading is apart, or s[i] needs unitAt.
		if f := foldByte[s[i]]; f != foldSlow { // plain ASCII: alike in every reading
			i++
			if f == 0 {
				continue
			}
			for rd := reading(0); rd < readBoth; rd++ {
				if !along(rd) {
					win[rd] = win[rd]<<8 | uint64(f)
					n[rd]++
					apart[rd]--
					if hit(win[rd]) && n[rd] >= pieceKeyLen && tf.found(win[rd], nil, s, i, rd) {
						return true
					}
				}
			}
			win[readBoth] = win[readBoth]<<8 | uint64(f)
			n[readBoth]++
			if hit(win[readBoth]) && n[readBoth] >= pieceKeyLen && follow(nil, i) {
				return true
			}
			continue
		}
		u, k, next := unitAt(s, i, readBoth)
		fam := otherwise(s, i, next)
		for rd := reading(0); rd < readBoth; rd++ {
			switch {
			case fam != 0 && rd&fam == 0: // rd reads this unit otherwise
				if along(rd) {
					win[rd], n[rd] = win[readBoth], n[readBoth]
				}
				// Plainly, the escape's own letters and digits are
				// skeleton bytes (its first byte, '\\' or '%', is not).
				for j := i + 1; j < next; j++ {
					if f := foldByte[s[j]]; f >= '0' && f != foldSlow {
						win[rd] = win[rd]<<8 | uint64(f)
						n[rd]++
						if hit(win[rd]) && n[rd] >= pieceKeyLen && tf.found(win[rd], nil, s, j+1, rd) {
							return true
						}
					}
				}
				apart[rd] = pieceKeyLen
			case !along(rd): // rd reads this unit as readBoth does
				for j := range k {
					win[rd] = win[rd]<<8 | uint64(u[j])
					n[rd]++
					apart[rd] = max(apart[rd]-1, 0)
					if hit(win[rd]) && n[rd] >= pieceKeyLen && tf.found(win[rd], u[j+1:k], s, next, rd) {
						return true
					}
				}
			}
		}
		i = next
		for j := range k {
			win[readBoth] = win[readBoth]<<8 | uint64(u[j])
			n[readBoth]++
			if hit(win[readBoth]) && n[readBoth] >= pieceKeyLen && follow(u[j+1:k], i) {
				return true
			}
		}
	}
	return false
}

// asciiRun reads s from s[i] into the window win while the bytes are plain
// ASCII (no byte that needs unitAt, but for the escapes that every reading
// reads as separators), until the filter passes a full window. It returns
// where it stopped, the window, the skeleton bytes read, and whether it
// stopped for the filter. It calls nothing, so that its state stays in
// registers.
func asciiRun(filter *[pieceFilterBits / 64]uint64, s string, i int, win uint64, n int) (int, uint64, int, bool) {
	for i < len(s) {
		f := foldByte[s[i]]
		if f == foldSlow {
			// \", \\ and \/, the commonest escapes in JSON, are
			// separators in every reading.
			if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\' || s[i+1] == '/') {
				i += 2
				continue
			}
			return i, win, n, false
		}
		// A separator (f == 0) leaves win as it is: shifted by no
		// bytes, or'ed with nothing. No branch on which it is: a folded
		// byte is at most 'z', so keep is 1 for it, 0 for a separator.
		keep := (uint64(f) + 127) >> 7
		win = win<<(8*keep) | uint64(f)
		n += int(keep)
		i++
		if h := pieceHash(win); filter[h/64]&(1<<(h%64)) != 0 && n >= pieceKeyLen {
			return i, win, n, true
		}
	}
	return i, win, n, false
}

// found reports whether a needle starts with the key win and goes on with
// pending and then the skeleton of s from s[i] in the reading rd. It
// reads what follows once, into a buffer, and compares every needle of the
// key with that, so that many needles sharing a key (values with a common
// prefix) cost a comparison each.
func (tf *transforms) found(win uint64, pending []byte, s string, i int, rd reading) bool {
	ids := tf.byKey[win]
	if len(ids) == 0 {
		return false
	}
	var buf [32]byte
	n := copy(buf[:], pending)
	for i < len(s) {
		u, k, next := unitAt(s, i, rd)
		if n+k > len(buf) {
			break
		}
		n += copy(buf[n:], u[:k])
		i = next
	}
	ahead := buf[:n]
	for _, id := range ids {
		rest := tf.needles[id].s[pieceKeyLen:]
		switch {
		case len(rest) <= len(ahead):
			if string(ahead[:len(rest)]) == rest {
				return true
			}
		case string(ahead) == rest[:len(ahead)] && i < len(s):
			if hasSkeletonPrefix(nil, s, i, rd, rest[len(ahead):]) {
				return true
			}
		}
	}
	return false
}

// pieces calls fn for each longest piece of a value in the skeleton t: the
// value, the piece's span in t, its length in bytes and whether it is a
// prefix (else a suffix) of the core, read forwards or reversed. It reads
// t once, whatever the number of values.
func (tf *transforms) pieces(t string, fn func(v int32, start, end, n int, prefix bool)) {
	var win uint64
	for j := 0; j < len(t); j++ {
		win = win<<8 | uint64(t[j])
		if j+1 < pieceKeyLen {
			continue
		}
		if h := pieceHash(win); tf.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		p := j + 1 - pieceKeyLen
		for _, id := range tf.byKey[win] {
			nd := &tf.needles[id]
			if !strings.HasPrefix(t[p:], nd.s) {
				continue
			}
			v := &tf.values[nd.value]
			x, l := v.fwd, len(v.fwd)
			if nd.reversed {
				x = v.rev
			}
			if nd.starts { // x[:k] at p, extended forwards
				k := len(nd.s)
				for k < l && p+k < len(t) && t[p+k] == x[k] {
					k++
				}
				for k < l && !utf8.RuneStart(x[k]) {
					k--
				}
				fn(nd.value, p, p+k, k, !nd.reversed)
				continue
			}
			// x[j:] ending at p+len(nd.s), extended backwards.
			j, a := l-len(nd.s), p
			for j > 0 && a > 0 && t[a-1] == x[j-1] {
				j, a = j-1, a-1
			}
			for j < l && !utf8.RuneStart(x[j]) {
				j, a = j+1, a+1
			}
			fn(nd.value, a, p+len(nd.s), l-j, nd.reversed)
		}
	}
}

// spans returns the merged byte ranges of s that hold a piece of a value,
// in either reading.
func (tf *transforms) spans(s string) [][2]int {
	if len(s) > maxSkeletonText {
		return [][2]int{{0, len(s)}}
	}
	var spans [][2]int
	for _, sk := range skeletons(s) {
		tf.pieces(sk.t, func(_ int32, start, end, _ int, _ bool) {
			spans = append(spans, [2]int{int(sk.start[start]), sk.unitEnd(s, end-1)})
		})
	}
	return mergeSpans(spans)
}

// skeletons returns the readings of s that differ: readBoth, and each
// reading that reads otherwise some family of escapes that s has (one
// covering a letter or digit) and alike every family s has none of.
func skeletons(s string) []skeleton {
	sk, parts := skeletonOf(s, readBoth)
	out := []skeleton{sk}
	for rd := reading(0); rd < readBoth; rd++ {
		if readBoth&^parts&^rd == 0 {
			other, _ := skeletonOf(s, rd)
			out = append(out, other)
		}
	}
	return out
}

// whole reports whether s holds a whole value in either reading: one piece
// that is the core, or a prefix and a suffix piece that together make it.
func (tf *transforms) whole(s string) bool {
	if len(s) > maxSkeletonText {
		return true
	}
	for _, sk := range skeletons(s) {
		if tf.wholeIn(sk.t) {
			return true
		}
	}
	return false
}

func (tf *transforms) wholeIn(t string) bool {
	pre := make([]int, len(tf.values)) // the longest prefix piece of each value
	suf := make([]int, len(tf.values)) // and suffix piece
	tf.pieces(t, func(v int32, _, _, n int, prefix bool) {
		if prefix {
			pre[v] = max(pre[v], n)
		} else {
			suf[v] = max(suf[v], n)
		}
	})
	for i := range tf.values {
		v, l := &tf.values[i], len(tf.values[i].fwd)
		switch p, q := pre[i], suf[i]; {
		case p == l || q == l:
			return true
		case p > 0 && (strings.Contains(t, v.fwd[p:]) || strings.Contains(t, v.rev[:l-p])):
			return true
		case q > 0 && (strings.Contains(t, v.fwd[:l-q]) || strings.Contains(t, v.rev[q:])):
			return true
		}
	}
	return false
}

// mergeSpans sorts byte ranges and merges those that overlap, as
// knownSpans does.
func mergeSpans(spans [][2]int) [][2]int {
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var out [][2]int
	for _, sp := range spans {
		if k := len(out) - 1; k >= 0 && sp[0] < out[k][1] {
			out[k][1] = max(out[k][1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return out
}
