package memory

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxProposals caps the notes one capture answer may propose.
const MaxProposals = 5

// ParseProposals reads the capture model's answer: one JSON object per
// line, exactly {"text": "…", "kind": "fact" | "preference" | "task"}.
// Anything else on a line (prose, a code fence, unknown fields, another
// kind, empty or over-long text, trailing data) makes the line count for
// nothing; the answer is never interpreted beyond that. At most
// MaxProposals are returned, the first of each normalized text only. The
// texts are not checked for secrets here: Offer does that.
func ParseProposals(answer string) []Proposal {
	var out []Proposal
	seen := map[string]bool{}
	for line := range strings.Lines(answer) {
		if len(out) == MaxProposals {
			break
		}
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var p struct {
			Text *string `json:"text"`
			Kind *string `json:"kind"`
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if dec.Decode(&p) != nil || p.Text == nil || p.Kind == nil {
			continue
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			continue // trailing data after the object
		}
		kind := Kind(*p.Kind)
		if kind != KindFact && kind != KindPreference && kind != KindTask {
			continue
		}
		text := oneLine(*p.Text)
		if text == "" || len(text) > MaxCandidateBytes || !utf8.ValidString(text) {
			continue
		}
		norm := Normalize(text)
		if norm == "" || seen[norm] {
			continue
		}
		seen[norm] = true
		out = append(out, Proposal{Text: text, Kind: kind})
	}
	return out
}
