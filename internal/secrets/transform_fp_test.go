package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// maxFalsePositiveRate bounds TestTransformFalsePositives' rate: one pair
// in 100,000 (about 5 of the ~500,000 pairs).
const maxFalsePositiveRate = 1e-5

// TestTransformFalsePositives measures how often the transform search
// fires on text that does not hold the value: every .md and .go file of
// the repository, log-like text of generated tokens (UUIDs, hashes,
// base64, keys of the same shapes as the vault's, passphrases of the same
// words), and tool arguments made of two pieces of repository text. The
// vault values are random keys of the common shapes and passphrases of
// words taken from the repository itself, in vaults of 20. It asserts a
// rate of at most maxFalsePositiveRate, and logs each one, the rate and
// the cost:
//
//	go test -count=1 -run TestTransformFalsePositives -v ./internal/secrets
func TestTransformFalsePositives(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("repository root not found: %v", err)
	}
	var texts []corpusText
	var words []string
	seenWord := make(map[string]bool)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir // the repository's own files: the same corpus here and in CI (which installs node_modules)
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		texts = append(texts, corpusText{path, string(b)})
		for _, w := range strings.FieldsFunc(string(b), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) >= 4 && len(w) <= 9 && !seenWord[w] {
				seenWord[w] = true
				words = append(words, w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(words) // the walk's order is fixed, but keep the draw independent of it
	files := len(texts)

	gen := rand.New(rand.NewPCG(21, 1)) // the corpus's generated tokens
	for i := range 64 {
		var b strings.Builder
		for b.Len() < 8<<10 {
			fmt.Fprintf(&b, "%s %s request=%s sha256=%s blob=%s key=%s pass=%s\n",
				time.Date(2026, 1, 1+i%28, gen.IntN(24), gen.IntN(60), gen.IntN(60), 0, time.UTC).Format(time.RFC3339),
				randomUUID(gen), hex.EncodeToString(randomBytes(gen, 20)), hex.EncodeToString(randomBytes(gen, 32)),
				base64.StdEncoding.EncodeToString(randomBytes(gen, 8+gen.IntN(40))),
				randomKey(gen), randomPassphrase(gen, words))
		}
		texts = append(texts, corpusText{fmt.Sprintf("generated log %d", i), b.String()})
	}
	for i := range 256 { // two pieces of repository text as the arguments of one call
		a, b := texts[gen.IntN(files)].text, texts[gen.IntN(files)].text
		a, b = a[gen.IntN(len(a)/2+1):], b[gen.IntN(len(b)/2+1):]
		args, _ := json.Marshal(map[string]string{"path": "notes/x.md", "content": a[:min(len(a), 2048)], "note": b[:min(len(b), 512)]})
		texts = append(texts, corpusText{fmt.Sprintf("arguments %d", i), string(args)})
	}
	var corpusBytes int
	for _, tx := range texts {
		corpusBytes += len(tx.text)
	}

	vaults := 20
	if testing.Short() {
		vaults = 2
	}
	vals := rand.New(rand.NewPCG(21, 2)) // the vault values
	var values, fired, wholes, modes = 0, 0, 0, map[string]int{}
	var scanned int
	var spent time.Duration
	for range vaults {
		vault := make([]string, 20)
		for i := range vault {
			if i%4 == 3 {
				vault[i] = randomPassphrase(vals, words)
			} else {
				vault[i] = randomKey(vals)
			}
			v, ok := transformOf(vault[i])
			switch {
			case !ok:
				modes["exact only"]++
			case v.whole():
				modes["whole"]++
			default:
				modes["halves"]++
			}
		}
		values += len(vault)
		r := NewRedactor(vault...)
		if tfOf(r) == nil {
			t.Fatal("no vault value qualifies for the transform search")
		}
		// The control: each value that qualifies, reversed and spaced out
		// inside a repository file, is found. A search that finds nothing
		// would pass the count below.
		for _, v := range vault {
			if _, ok := transformOf(v); !ok {
				continue
			}
			host := texts[vals.IntN(files)].text
			at := vals.IntN(len(host) + 1)
			in := host[:at] + " " + spaced(swapCase(reverseString(v)), "\u200b") + " " + host[at:]
			if !tfOf(r).hasPiece(in) || !tfOf(r).whole(in) {
				t.Errorf("control: %q reversed and spaced is not found", v)
			}
		}
		for _, tx := range texts {
			if slices.ContainsFunc(vault, func(v string) bool { return strings.Contains(tx.text, v) }) {
				t.Fatalf("%s holds a vault value: the draw is not random", tx.name)
			}
			start := time.Now()
			hit := tfOf(r).hasPiece(tx.text)
			spent += time.Since(start)
			scanned += len(tx.text)
			if !hit {
				continue
			}
			fired++
			if tfOf(r).whole(tx.text) {
				wholes++
			}
			for _, sp := range tfOf(r).spans(tx.text) {
				t.Logf("false positive in %s: %q (vault %q)", tx.name, tx.text[sp[0]:sp[1]], vault)
			}
		}
	}
	pairs := len(texts) * values
	t.Logf("corpus: %d repository files, %d generated texts, %d argument pairs; %.1f MB", files, 64, 256, float64(corpusBytes)/1e6)
	t.Logf("vault values: %d (%v), in vaults of 20", values, modes)
	t.Logf("false positives: %d of %d text-value pairs redacted (rate %.2g), %d refused as arguments",
		fired, pairs, float64(fired)/float64(pairs), wholes)
	// The bound is a rate, not zero: a passphrase is drawn from the
	// repository's own words, and now and then two of its words stand
	// side by side in a repository file ("…returns remember…" for
	// "EturnsRemember…"): half of the value really is in the text, which
	// the search is meant to find. Any edit of the repository redraws.
	if rate := float64(fired) / float64(pairs); rate > maxFalsePositiveRate {
		t.Errorf("false positive rate %.2g; want at most %.0g", rate, maxFalsePositiveRate)
	}
	t.Logf("cost: %.1f MB scanned in %v, %.0f MB/s, %.2f µs per KiB with 20 values",
		float64(scanned)/1e6, spent.Round(time.Millisecond), float64(scanned)/1e6/spent.Seconds(),
		spent.Seconds()*1e6/(float64(scanned)/1024))
}

type corpusText struct{ name, text string }

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

func randomUUID(rng *rand.Rand) string {
	h := hex.EncodeToString(randomBytes(rng, 16))
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

const (
	alnum   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	symbols = "!@#$%^&*-_=+.,:;?"
)

func randomFrom(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// randomKey returns an API key of a common shape, 20 to 64 characters.
func randomKey(rng *rand.Rand) string {
	switch rng.IntN(8) {
	case 0:
		return "sk-" + randomFrom(rng, alnum, 17+rng.IntN(45))
	case 1:
		return "sk-proj-" + randomFrom(rng, alnum+"-_", 12+rng.IntN(45))
	case 2:
		return "ghp_" + randomFrom(rng, alnum, 36)
	case 3:
		return "xoxb-" + randomFrom(rng, "0123456789", 12) + "-" + randomFrom(rng, "0123456789", 13) + "-" + randomFrom(rng, alnum, 24)
	case 4:
		return base64.StdEncoding.EncodeToString(randomBytes(rng, 15+rng.IntN(34)))
	case 5:
		return hex.EncodeToString(randomBytes(rng, 10+rng.IntN(23)))
	case 6:
		return "AKIA" + randomFrom(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	default: // a random password
		return randomFrom(rng, alnum+symbols, 20+rng.IntN(13))
	}
}

// randomPassphrase returns a password of words (from the repository's own
// text), with digits and a symbol, 20 to 64 characters.
func randomPassphrase(rng *rand.Rand, words []string) string {
	for {
		n := 3 + rng.IntN(4)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
			if rng.IntN(2) == 0 {
				ws[i] = strings.ToUpper(ws[i][:1]) + ws[i][1:]
			}
		}
		sep := []string{"-", "_", ".", "", " "}[rng.IntN(5)]
		p := strings.Join(ws, sep) + sep + randomFrom(rng, "0123456789", 1+rng.IntN(3)) + randomFrom(rng, symbols, rng.IntN(2))
		if len(p) >= 20 && len(p) <= 64 {
			return p
		}
	}
}
