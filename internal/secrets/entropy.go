package secrets

import (
	"math"
	"strings"
)

// How random a value looks, so that only values random enough are searched
// for transformed (transform.go). The estimate is rough and leans low: it
// goes by runs of characters, not by the value's source, and a value it
// overrates (a word it does not know, letters in mixed case) only widens
// the search, which TestTransformFalsePositives keeps honest.

// Entropy estimates, in bits per character, by the kind of run of letters
// and digits the character is in (see tokenBits).
var (
	digitBits = math.Log2(10)
	hexBits   = 4.0
	alnumBits = math.Log2(36) // case is folded
	wordBits  = 2.6           // English words run about 13 bits a word of 5 letters
	otherBits = 4.0           // a run with a character outside ASCII
	// distinctBits caps a piece's estimate by its distinct characters.
	distinctBits = 6.0
)

// publicPrefixes are key prefixes (as skeletons) that every key of a kind
// starts with; they carry no entropy. The longest that a core starts with
// counts for nothing.
var publicPrefixes = []string{
	"sk", "skproj", "sksvcacct", "skadmin", "skant", "skantapi03", "skantadmin01",
	"sklive", "sktest", "rklive", "rktest", "pklive", "pktest", "whsec",
	"ghp", "gho", "ghu", "ghs", "ghr", "githubpat", "glpat",
	"xoxb", "xoxp", "xoxa", "xoxe", "xoxs", "xapp",
	"akia", "asia", "hf", "npm", "pypi", "aiza",
}

// coreOf returns the core of v (its skeleton, read plainly) and the
// estimated entropy of each of its characters (see runBits).
func coreOf(v string) (core string, bits []float64) {
	var b strings.Builder
	var tok []rune
	flush := func() {
		for _, r := range tok {
			var u [4]byte
			b.Write(u[:foldRune(r, &u)])
		}
		bits = append(bits, tokenBits(tok)...)
		tok = tok[:0]
	}
	for _, r := range v {
		var u [4]byte
		if foldRune(r, &u) == 0 {
			flush()
			continue
		}
		tok = append(tok, r)
	}
	flush()
	core = b.String()
	pub := 0
	for _, p := range publicPrefixes {
		if len(p) > pub && strings.HasPrefix(core, p) {
			pub = len(p)
		}
	}
	for i := range min(pub, len(bits)) {
		bits[i] = 0
	}
	return core, bits
}

// tokenBits estimates the entropy of each character of a token, a run of
// letters and digits between separators. A token of hex digits in one
// case (with a letter and a digit) is hex; any other is cut into runs of
// ASCII digits, of ASCII letters (a new one at each lower-to-upper case
// change), and of other characters, and each run is estimated on its own
// (runBits).
func tokenBits(tok []rune) []float64 {
	out := make([]float64, 0, len(tok))
	class := func(r rune) int {
		switch {
		case r >= '0' && r <= '9':
			return 0
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			return 1
		}
		return 2
	}
	if isHexToken(tok) {
		for range tok {
			out = append(out, hexBits)
		}
		return out
	}
	// A lower-case letter followed by a capital starts a new run, so that
	// CamelCase words ("ProvidersEarlyWhom", a passphrase's usual shape)
	// are estimated as words, not as random mixed-case letters.
	camel := func(a, b rune) bool { return a >= 'a' && a <= 'z' && b >= 'A' && b <= 'Z' }
	for i := 0; i < len(tok); {
		j := i + 1
		for j < len(tok) && class(tok[j]) == class(tok[i]) && !camel(tok[j-1], tok[j]) {
			j++
		}
		per := runBits(tok[i:j], class(tok[i]))
		for range tok[i:j] {
			out = append(out, per)
		}
		i = j
	}
	return out
}

func isHexToken(tok []rune) bool {
	digits, lower, upper := 0, 0, 0
	for _, r := range tok {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'f':
			lower++
		case r >= 'A' && r <= 'F':
			upper++
		default:
			return false
		}
	}
	return digits > 0 && lower+upper > 0 && (lower == 0 || upper == 0)
}

// runBits estimates the entropy of each character of a run of one class
// (0 digits, 1 ASCII letters, 2 other letters and digits). A run of
// letters is a word, which carries far less than random letters, when it
// has three letters or more, one of them a vowel, in one case or
// capitalised ("maple", "TUNDRA", "Orbit"); "mKp", "xq" and "zzt" are
// random.
func runBits(run []rune, class int) float64 {
	switch class {
	case 0:
		return digitBits
	case 2:
		return otherBits
	}
	lower, upper, vowel := 0, 0, false
	for _, r := range run {
		if r >= 'a' && r <= 'z' {
			lower++
		} else {
			upper++
		}
		vowel = vowel || strings.ContainsRune("aeiouyAEIOUY", r)
	}
	capitalised := upper == 1 && run[0] <= 'Z'
	if len(run) >= 3 && vowel && (lower == 0 || upper == 0 || capitalised) {
		return wordBits
	}
	return alnumBits
}
