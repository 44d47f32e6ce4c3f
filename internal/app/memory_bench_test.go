package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/agent"
)

// BenchmarkInjection10k measures what memory costs a turn before the model
// is called, with 10,000 units in memory.md: the recall for the owner's
// message (reconcile check, FTS5 query, lookup) and the rendering of the
// memory block. Units are synthetic: words from a 3,000-word vocabulary,
// skewed so that a few are common, plus tea, coffee and dentist notes
// each in about 1 % of units.
func BenchmarkInjection10k(b *testing.B) {
	r := newTestRuntime(b, "smart")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	vocab := make([]string, 3000)
	for i := range vocab {
		var w strings.Builder
		for range 3 + rng.IntN(6) {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = w.String()
	}
	topics := []string{"prefers oolong tea", "drinks coffee black", "dentist appointment on Friday"}
	var md strings.Builder
	md.WriteString("# Memory\n\n")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	for i := range 10000 {
		var text strings.Builder
		for range 8 + rng.IntN(12) {
			text.WriteString(vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64())])
			text.WriteByte(' ')
		}
		if i%100 < len(topics) {
			text.WriteString(topics[i%100])
		}
		fmt.Fprintf(&md, "## m_%012x\n- kind: fact\n- created: %s\n- updated: %s\n- source: owner\n\n%s\n\n", i, t0, t0, strings.TrimSpace(text.String()))
	}
	p, err := r.Owner.MemoryPath()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(md.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	// An hour old, as a real memory.md is (a just-written file is hashed on
	// each recall for two seconds; see memory's racy window).
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		b.Fatal(err)
	}
	if st, err := r.Owner.MemoryRebuild(ctx); err != nil || st.Indexed != 10000 {
		b.Fatalf("rebuild = %+v, %v", st, err)
	}
	for _, msg := range []struct{ name, text string }{
		{"tea", "What tea do I like?"},
		{"dentist-coffee", "Before the dentist, should I have a coffee?"},
		{"nothing", "Good morning!"},
	} {
		b.Run(msg.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				notes := r.captures.Recall(ctx, r.Config.Owner, msg.text)
				block := agent.MemoryBlock(notes)
				if msg.name != "nothing" && (len(notes) == 0 || block == "") {
					b.Fatalf("no notes for %q", msg.text)
				}
			}
		})
	}
}
