package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// benchWords and benchHan make synthetic units: a vocabulary of 5,000
// English-like words and 2,000 common Han characters, drawn with a skew
// so that some terms are frequent and most are rare, as in real notes.
var benchWords = func() []string {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 5000)
	for i := range out {
		var b strings.Builder
		for range 3 + rng.IntN(6) {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		out[i] = b.String()
	}
	return out
}()

func benchHan(i int) rune { return rune(0x4E00 + i%2000) }

func benchText(rng *rand.Rand) string {
	var b strings.Builder
	for range 8 + rng.IntN(12) {
		b.WriteString(benchWords[int(float64(len(benchWords))*rng.Float64()*rng.Float64())])
		b.WriteByte(' ')
	}
	for range 6 + rng.IntN(10) {
		b.WriteRune(benchHan(int(2000 * rng.Float64() * rng.Float64())))
	}
	return b.String()
}

// seed writes n units straight into owner's memory.md.
func seed(tb testing.TB, m *Memory, owner string, n int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	doc := &document{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		u := &Unit{ID: fmt.Sprintf("m_%012x", i), Kind: KindFact, Text: benchText(rng), Source: "owner",
			Created: t0.Add(time.Duration(i) * time.Minute), Updated: t0.Add(time.Duration(i) * time.Minute)}
		doc.sections = append(doc.sections, section{unit: u})
	}
	p, _ := m.Path(owner)
	if err := writeAtomic(p, doc.format()); err != nil {
		tb.Fatal(err)
	}
	// Written an hour ago, as a real memory.md is: a file modified just
	// before it is indexed is hashed on every recall for two seconds
	// (see racy).
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		tb.Fatal(err)
	}
}

func benchRecall(b *testing.B, n int) {
	m, _, _ := newMemory(b)
	seed(b, m, "owner", n)
	ctx := context.Background()
	if _, err := m.Rebuild(ctx, "owner"); err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, query string }{
		{"word", benchWords[120]},                                  // in about 1% of units
		{"two-words", benchWords[40] + " " + benchWords[300]},      // all, else any
		{"cjk-bigram", string([]rune{benchHan(10), benchHan(11)})}, // two Han characters
		{"mixed", benchWords[900] + " " + string([]rune{benchHan(3), benchHan(4)})},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Recall(ctx, "owner", q.query, 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRecall10k(b *testing.B)  { benchRecall(b, 10_000) }
func BenchmarkRecall100k(b *testing.B) { benchRecall(b, 100_000) }

// BenchmarkRecallOneChar10k is the substring-scan fallback (a one-
// character CJK query) over 10,000 units.
func BenchmarkRecallOneChar10k(b *testing.B) {
	m, _, _ := newMemory(b)
	seed(b, m, "owner", 10_000)
	ctx := context.Background()
	if _, err := m.Rebuild(ctx, "owner"); err != nil {
		b.Fatal(err)
	}
	q := string(benchHan(500))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Recall(ctx, "owner", q, 5); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRebuild100k parses a 100,000-unit memory.md and replaces the
// projection with it.
func BenchmarkRebuild100k(b *testing.B) {
	m, _, _ := newMemory(b)
	seed(b, m, "owner", 100_000)
	p, _ := m.Path("owner")
	if fi, err := os.Stat(p); err == nil {
		b.SetBytes(fi.Size())
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Rebuild(ctx, "owner"); err != nil {
			b.Fatal(err)
		}
	}
}
