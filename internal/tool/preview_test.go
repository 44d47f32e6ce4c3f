package tool

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPreviewIsNotHashed: the preview is display. Two Plans that differ
// only in it have the same hash and canonical form, so an approval binds
// what runs (the Body), not what the card showed about the file around it.
func TestPreviewIsNotHashed(t *testing.T) {
	a := baseSpec()
	b := baseSpec()
	a.Preview = "--- notes/a.md\n+++ notes/a.md\n-old\n+hello"
	b.Preview = "something else entirely"
	pa, pb, pn := mustPlan(t, a), mustPlan(t, b), mustPlan(t, baseSpec())
	for _, p := range []Plan{pb, pn} {
		if p.Hash() != pa.Hash() || string(p.Canonical()) != string(pa.Canonical()) {
			t.Errorf("a Plan's hash depends on its preview: %s vs %s", p.Hash(), pa.Hash())
		}
	}
	if pa.Preview() != a.Preview || pb.Preview() != b.Preview {
		t.Errorf("Preview() = %q, %q; want the specs' previews", pa.Preview(), pb.Preview())
	}
	// Twin: a change to the Body still changes the hash.
	c := baseSpec()
	c.Body = writeBody{Path: "notes/a.md", Content: "hello <b>&</b>!"}
	if mustPlan(t, c).Hash() == pa.Hash() {
		t.Error("a changed body kept the hash")
	}
}

// TestPreviewDefaultsToTheBody: a tool that writes no preview gets its
// exact body, indented — computed from the canonical bytes, with control
// characters still escaped as JSON escapes them.
func TestPreviewDefaultsToTheBody(t *testing.T) {
	s := baseSpec()
	s.Body = map[string]string{"text": "a\x1b[31mred\nb"}
	got := mustPlan(t, s).Preview()
	want := "{\n  \"text\": \"a\\u001b[31mred\\nb\"\n}"
	if got != want {
		t.Errorf("Preview() = %q; want %q", got, want)
	}
	if (Plan{}).Preview() != "" {
		t.Error("the zero Plan has a preview")
	}
}

func TestClipPreview(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("line")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name         string
		in           string
		lines, bytes int
		want         string
		omitted      int
	}{
		{"empty", "", 0, 0, "", 0},
		{"fits", "a\nb\n", 0, 0, "a\nb", 0},
		{"line cap", lines(5), 3, 0, lines(3), 2},
		{"default line cap", lines(250), 0, 0, lines(200), 50},
		{"byte cap on a line end", lines(5), 0, 14, lines(3), 2},
		{"first line too long", strings.Repeat("é", 10), 0, 5, "éé …", 1},
		{"exactly the cap", lines(3), 3, 14, lines(3), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, omitted := ClipPreview(tc.in, tc.lines, tc.bytes)
			if got != tc.want || omitted != tc.omitted {
				t.Errorf("ClipPreview(%q, %d, %d) = %q, %d; want %q, %d", tc.in, tc.lines, tc.bytes, got, omitted, tc.want, tc.omitted)
			}
		})
	}
}

func TestCapPreview(t *testing.T) {
	small := "a\nb"
	if CapPreview(small) != small {
		t.Error("CapPreview changed a small preview")
	}
	big := strings.Repeat("0123456789abcde\n", MaxPreviewBytes/16+10)
	got := CapPreview(big)
	if len(got) > MaxPreviewBytes+64 || !strings.HasSuffix(got, "[homard: preview cut at 1 MiB]\n") {
		t.Errorf("CapPreview(%d bytes) = %d bytes ending %q", len(big), len(got), got[len(got)-40:])
	}
	if !strings.HasSuffix(strings.TrimSuffix(got, "[homard: preview cut at 1 MiB]\n"), "abcde\n\n") {
		t.Error("CapPreview did not cut on a line end")
	}
}

func TestIsDiff(t *testing.T) {
	for in, want := range map[string]bool{
		"--- a.md\n+++ a.md\n": true,
		"run /bin/ls":          false,
		"+--- a":               false,
		"":                     false,
	} {
		if IsDiff(in) != want {
			t.Errorf("IsDiff(%q) = %v; want %v", in, !want, want)
		}
	}
}

// FuzzClipPreview: a clipped preview is a prefix of the preview (plus the
// " …" of a cut first line), within the limits, valid UTF-8 when the
// preview is, and says how many lines it left out.
func FuzzClipPreview(f *testing.F) {
	f.Add("a\nb\nc", 2, 10)
	f.Add("ééé\n", 1, 3)
	f.Add("\n\n\n", 1, 1)
	f.Fuzz(func(t *testing.T, s string, lines, maxBytes int) {
		lines, maxBytes = 1+abs(lines)%50, 1+abs(maxBytes)%200
		shown, omitted := ClipPreview(s, lines, maxBytes)
		trimmed := strings.TrimSuffix(s, "\n")
		body, cut := strings.CutSuffix(shown, " …")
		if !strings.HasPrefix(trimmed, body) && !(cut && strings.HasPrefix(trimmed, body)) {
			t.Fatalf("ClipPreview(%q, %d, %d) = %q: not a prefix", s, lines, maxBytes, shown)
		}
		if omitted < 0 || (omitted == 0 && shown != trimmed) {
			t.Fatalf("ClipPreview(%q, %d, %d) = %q, %d omitted", s, lines, maxBytes, shown, omitted)
		}
		if omitted > 0 && (strings.Count(body, "\n")+1 > lines || len(body) > maxBytes) {
			t.Fatalf("ClipPreview(%q, %d, %d) = %q: over the limits", s, lines, maxBytes, shown)
		}
		if utf8.ValidString(s) && !utf8.ValidString(shown) {
			t.Fatalf("ClipPreview(%q, %d, %d) = %q: invalid UTF-8", s, lines, maxBytes, shown)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func TestRuneCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		n    int
		want int
	}{
		{"shorter than n", "abc", 5, 3},
		{"exactly n", "abc", 3, 3},
		{"ascii", "abcdef", 4, 4},
		{"zero", "abc", 0, 0},
		{"inside a rune backs off", "a中b", 2, 1}, // 中 is bytes 1-3
		{"at a rune start", "a中b", 1, 1},
		{"after a rune", "a中b", 4, 4},
		{"inside the first rune", "中", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuneCut(tc.s, tc.n); got != tc.want {
				t.Errorf("RuneCut(%q, %d) = %d; want %d", tc.s, tc.n, got, tc.want)
			}
		})
	}
}
