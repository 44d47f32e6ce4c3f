package memory

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func offer(t *testing.T, m *Memory, text string, kind Kind, source string) Candidate {
	t.Helper()
	c, err := m.Offer(context.Background(), "owner", source, Proposal{Text: text, Kind: kind})
	if err != nil {
		t.Fatalf("Offer(%q): %v", text, err)
	}
	return c
}

func memoryFile(t *testing.T, m *Memory) string {
	t.Helper()
	p, _ := m.Path("owner")
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestOfferBuffersThenPromotesOnRepeat(t *testing.T) {
	m, _, c := newMemory(t)
	ctx := context.Background()
	first := offer(t, m, "I prefer oolong tea", KindPreference, "session cli turn 1")
	if first.Status != Buffered || first.Seen != 1 || first.ID == "" {
		t.Fatalf("first Offer = %+v; want buffered, seen once", first)
	}
	if strings.Contains(memoryFile(t, m), "oolong") {
		t.Fatal("a candidate seen once is already in memory.md")
	}
	if got, _ := m.Candidates(ctx, "owner"); len(got) != 1 || got[0].ID != first.ID {
		t.Fatalf("Candidates = %+v; want the buffered one", got)
	}
	c.t = c.t.Add(time.Hour)
	// Phrased a little differently: the same normalized note.
	second := offer(t, m, "The owner prefers oolong tea.", KindPreference, "session cli turn 2")
	if second.Status != Promoted || second.ID != first.ID || second.Seen != 2 || second.UnitID == "" {
		t.Fatalf("second Offer = %+v; want %s promoted", second, first.ID)
	}
	u, err := m.Unit("owner", second.UnitID)
	if err != nil || u.Text != "I prefer oolong tea" || u.Kind != KindPreference || u.Source != "session cli turn 1" {
		t.Fatalf("promoted unit = %+v, %v; want the first text, kind and source", u, err)
	}
	if got := recall(t, m, "owner", "oolong"); len(got) != 1 {
		t.Fatalf("recall oolong = %v; want the promoted unit", got)
	}
	// Seen a third time: memory.md holds it, nothing changes.
	third := offer(t, m, "prefers oolong tea", KindPreference, "session cli turn 3")
	if third.Status != Known || third.UnitID != second.UnitID {
		t.Fatalf("third Offer = %+v; want known as %s", third, second.UnitID)
	}
	if got, _ := m.Candidates(ctx, "owner"); len(got) != 0 {
		t.Fatalf("Candidates = %+v; want none waiting", got)
	}
	if n := strings.Count(memoryFile(t, m), "oolong"); n != 1 {
		t.Fatalf("memory.md mentions oolong %d times; want 1", n)
	}
}

func TestOfferConflictGoesToReview(t *testing.T) {
	m, _, c := newMemory(t)
	ctx := context.Background()
	old, err := m.Remember(ctx, "owner", Note{Text: "Prefers oolong tea", Kind: KindPreference})
	if err != nil {
		t.Fatal(err)
	}
	before := memoryFile(t, m)
	for i := range 3 { // seen again and again: still only the owner decides
		got := offer(t, m, "No longer likes tea, prefers green tea instead", KindPreference, "session cli turn 9")
		if got.Status != Review || got.ConflictsWith != old.ID || got.Seen != i+1 {
			t.Fatalf("Offer #%d = %+v; want review against %s", i, got, old.ID)
		}
	}
	if memoryFile(t, m) != before {
		t.Fatal("a conflicting candidate changed memory.md")
	}
	// A fact about tea, or a preference about something else, is no conflict.
	if got := offer(t, m, "Tea shop on Rue Oberkampf closes at 7", KindFact, "s"); got.Status != Buffered {
		t.Fatalf("fact Offer = %+v; want buffered", got)
	}
	c.t = c.t.Add(time.Minute) // listed after the fact
	if got := offer(t, m, "Prefers window seats on trains", KindPreference, "s"); got.Status != Buffered {
		t.Fatalf("unrelated preference Offer = %+v; want buffered", got)
	}
	list, err := m.Candidates(ctx, "owner")
	if err != nil || len(list) != 3 || list[0].Status != Review || !strings.HasPrefix(list[1].Text, "Tea shop") {
		t.Fatalf("Candidates = %+v, %v; want the review first, then two buffered", list, err)
	}
	// Accept with --replace: the new preference in, the old one out, in
	// one write.
	acc, err := m.Accept(ctx, "owner", list[0].ID, old.ID)
	if err != nil || acc.Status != Promoted {
		t.Fatalf("Accept = %+v, %v", acc, err)
	}
	f := memoryFile(t, m)
	if strings.Contains(f, old.ID) || !strings.Contains(f, "green tea instead") {
		t.Fatalf("memory.md after accept --replace:\n%s", f)
	}
	if got := recall(t, m, "owner", "oolong"); len(got) != 0 {
		t.Fatalf("recall oolong = %v; want the replaced unit gone from the index", got)
	}
	if _, err := m.Accept(ctx, "owner", list[0].ID, ""); !errors.Is(err, ErrCandidate) {
		t.Fatalf("Accept twice: %v; want ErrCandidate", err)
	}
	// Dismissed stays dismissed.
	d, err := m.Dismiss(ctx, "owner", list[1].ID)
	if err != nil || d.Status != Dismissed {
		t.Fatalf("Dismiss = %+v, %v", d, err)
	}
	again := offer(t, m, "Tea shop on Rue Oberkampf closes at 7", KindFact, "s")
	if again.Status != Dismissed || strings.Contains(memoryFile(t, m), "Oberkampf") {
		t.Fatalf("Offer after dismiss = %+v; want it to stay dismissed", again)
	}
	// Replacing a unit that does not exist changes nothing.
	if _, err := m.Accept(ctx, "owner", list[2].ID, "m_000000000000"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Accept --replace unknown: %v; want ErrNotFound", err)
	}
	if strings.Contains(memoryFile(t, m), "window seats") {
		t.Fatal("a failed accept wrote the candidate")
	}
}

func TestOfferRefusesSecretsAndExpires(t *testing.T) {
	m, st, c := newMemory(t)
	ctx := context.Background()
	for _, text := range []string{"my one-time code is 483920", "aws key AKIAIOSFODNN7EXAMPLE", "", strings.Repeat("tea ", 100)} {
		if _, err := m.Offer(ctx, "owner", "s", Proposal{Text: text, Kind: KindFact}); err == nil {
			t.Errorf("Offer(%.30q) = nil; want refused", text)
		} else if strings.Contains(err.Error(), "483920") || strings.Contains(err.Error(), "AKIA") {
			t.Errorf("Offer error quotes the secret: %v", err)
		}
	}
	for _, s := range []string{Buffered, Review, Promoted, Dismissed} {
		if rows, _ := st.MemoryCandidates(ctx, "owner", s); len(rows) != 0 {
			t.Fatalf("%s candidates = %+v; want none stored", s, rows)
		}
	}
	offer(t, m, "Cycles to work on Tuesdays", KindFact, "s")
	c.t = c.t.Add(CandidateTTL + time.Hour)
	if got, _ := m.Candidates(ctx, "owner"); len(got) != 0 {
		t.Fatalf("Candidates after the TTL = %+v; want the buffered one expired", got)
	}
	// Seen again after expiry: buffered anew, not promoted.
	if got := offer(t, m, "Cycles to work on Tuesdays", KindFact, "s"); got.Status != Buffered || got.Seen != 1 {
		t.Fatalf("Offer after expiry = %+v; want buffered once", got)
	}
	// Another owner's candidates are not visible.
	if _, err := m.Accept(ctx, "guest", "c_000000000000", ""); !errors.Is(err, ErrCandidate) {
		t.Fatalf("Accept as another owner: %v", err)
	}
}

func TestNormalizeAndConflicts(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"I prefer oolong tea", "The owner prefers oolong tea."},
		{"Likes cats", "likes cat"},
		{"喜欢乌龙茶", "喜欢乌龙茶"},
	} {
		if Normalize(tc.a) != Normalize(tc.b) {
			t.Errorf("Normalize(%q) = %q, Normalize(%q) = %q; want equal", tc.a, Normalize(tc.a), tc.b, Normalize(tc.b))
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"prefers oolong tea", "prefers coffee over tea", true},
		{"prefers oolong tea", "no longer likes oolong", true},
		{"prefers oolong tea", "prefers window seats", false},
		{"prefers oolong tea", "prefers oolong tea", false},
		{"喜欢乌龙茶", "喜欢绿茶", true},
	} {
		if got := Conflicts(Normalize(tc.a), Normalize(tc.b)); got != tc.want {
			t.Errorf("Conflicts(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestParseProposals(t *testing.T) {
	answer := "Here you go:\n```json\n" +
		`{"text":"Prefers oolong tea","kind":"preference"}` + "\n" +
		`{"text":"prefers oolong tea.","kind":"preference"}` + "\n" + // same note
		`{"text":"x","kind":"opinion"}` + "\n" + // unknown kind
		`{"text":"y","kind":"fact","extra":1}` + "\n" + // unknown field
		`{"text":"z","kind":"fact"} {"text":"w","kind":"fact"}` + "\n" + // trailing data
		`{"text":"","kind":"fact"}` + "\n" +
		`{"kind":"fact"}` + "\n" +
		`{"text":"Lives in Lyon","kind":"FACT"}` + "\n" + // kinds are exact
		`{"text":"Lives in Lyon","kind":"fact"}` + "\n```\n" +
		`{"text":"a1","kind":"task"}` + "\n" + `{"text":"a2","kind":"task"}` + "\n" +
		`{"text":"a3","kind":"task"}` + "\n" + `{"text":"a4","kind":"task"}` + "\n"
	got := ParseProposals(answer)
	want := []Proposal{{"Prefers oolong tea", KindPreference}, {"Lives in Lyon", KindFact}, {"a1", KindTask}, {"a2", KindTask}, {"a3", KindTask}}
	if len(got) != len(want) {
		t.Fatalf("ParseProposals = %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ParseProposals[%d] = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func FuzzParseProposals(f *testing.F) {
	f.Add(`{"text":"Prefers oolong tea","kind":"preference"}`)
	f.Add("{\"text\":\"\xff\",\"kind\":\"fact\"}\n{")
	f.Fuzz(func(t *testing.T, s string) {
		ps := ParseProposals(s)
		if len(ps) > MaxProposals {
			t.Fatalf("%d proposals; want at most %d", len(ps), MaxProposals)
		}
		for _, p := range ps {
			if p.Text == "" || len(p.Text) > MaxCandidateBytes || strings.Contains(p.Text, "\n") {
				t.Fatalf("proposal %q escaped the checks", p.Text)
			}
		}
	})
}
