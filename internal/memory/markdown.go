package memory

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Kind is what a unit records.
type Kind string

// Kinds of unit. A hand-written unit without a kind line is a fact.
const (
	KindFact       Kind = "fact"
	KindPreference Kind = "preference"
	KindTask       Kind = "task" // a task note
)

// ParseKind validates a kind name; "" means fact.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return KindFact, nil
	case KindFact, KindPreference, KindTask:
		return k, nil
	case "task note", "task-note", "note":
		return KindTask, nil
	}
	return "", fmt.Errorf("unknown kind %q (want fact, preference or task)", s)
}

// Unit is one remembered thing: a section of memory.md.
type Unit struct {
	ID      string
	Kind    Kind
	Text    string
	Source  string // "owner", or "session <id>" for a unit a tool wrote
	Created time.Time
	Updated time.Time
	Expires time.Time // zero: never
	// Line is the 1-based line of the unit's heading in memory.md.
	Line int
	// NoID marks a hand-added unit whose heading had no id: ID was derived
	// from its text and is written into the file on the next write.
	NoID bool
}

// Expired reports whether the unit has expired at now.
func (u Unit) Expired(now time.Time) bool { return !u.Expires.IsZero() && !now.Before(u.Expires) }

// Problem is a section of memory.md that could not be read as a unit. It
// is kept in the file exactly as written, left out of the index and
// reported by `homard doctor` and `homard memory list`.
type Problem struct {
	Line   int
	ID     string // the heading's id, if it had one
	Reason string
	raw    string // the section as written, heading included
}

func (p Problem) String() string {
	if p.ID != "" {
		return fmt.Sprintf("line %d (%s): %s", p.Line, p.ID, p.Reason)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.Reason)
}

// document is a parsed memory.md: its units and its unreadable sections in
// file order.
type document struct {
	// head is what the file holds before its first unit, as written; ""
	// (a new or headless file) is written as homard's own header.
	head     string
	sections []section
}

type section struct {
	unit    *Unit
	problem *Problem
}

func (d *document) units() []Unit { return pick(d, func(s section) *Unit { return s.unit }) }

func (d *document) problems() []Problem {
	return pick(d, func(s section) *Problem { return s.problem })
}

// pick returns, in order, what get finds in each of d's sections (nil:
// nothing).
func pick[T any](d *document, get func(section) *T) []T {
	var out []T
	for _, s := range d.sections {
		if v := get(s); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// idPrefix starts every unit id; the rest is 12 lowercase hex digits.
const idPrefix = "m_"

// ValidID reports whether s has the form of a unit id.
func ValidID(s string) bool {
	rest, ok := strings.CutPrefix(s, idPrefix)
	if !ok || len(rest) < 4 || len(rest) > 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// derivedID is the id of a hand-added unit: a hash of its text, so that it
// is the same in every projection until homard writes it into the file.
func derivedID(text string) string {
	sum := sha256.Sum256([]byte(text))
	return idPrefix + hex.EncodeToString(sum[:6])
}

// metaKeys are the metadata keys of a unit, in the order they are written.
var metaKeys = []string{"kind", "created", "updated", "source", "expires"}

// parse reads memory.md. It never fails: a section that cannot be read is
// a Problem. fallback is the time given to a hand-added unit that has no
// created line (the file's modification time).
func parse(data string, fallback time.Time) *document {
	d := &document{}
	var cur, head []string
	curLine := 0
	seen := map[string]bool{}
	flush := func() {
		if cur == nil {
			return
		}
		d.sections = append(d.sections, parseSection(cur, curLine, fallback, seen))
		cur = nil
	}
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimRight(sc.Text(), "\r")
		if l == "##" || strings.HasPrefix(l, "## ") {
			flush()
			cur, curLine = []string{l}, line
			continue
		}
		if cur != nil {
			cur = append(cur, l)
		} else {
			head = append(head, l)
		}
		// Lines before the first unit are the file's header, written
		// back as they were (an edit changes only the units it names).
	}
	flush()
	if h := strings.Join(head, "\n"); strings.TrimSpace(h) != "" {
		d.head = strings.TrimRight(h, "\n") + "\n"
	}
	return d
}

func parseSection(lines []string, lineNo int, fallback time.Time, seen map[string]bool) section {
	raw := strings.Join(lines, "\n")
	heading := strings.TrimSpace(strings.TrimPrefix(lines[0], "##"))
	bad := func(id, format string, args ...any) section {
		return section{problem: &Problem{Line: lineNo, ID: id, Reason: fmt.Sprintf(format, args...), raw: raw}}
	}
	u := &Unit{Line: lineNo, Kind: KindFact}
	if ValidID(heading) {
		u.ID = heading
	}
	body := lines[1:]
	// Metadata: "key: value" lines (optionally list items) right after
	// the heading; blank lines before them are skipped.
	i := 0
	for i < len(body) && strings.TrimSpace(body[i]) == "" {
		i++
	}
	got := map[string]bool{}
	for ; i < len(body); i++ {
		key, value, ok := metaLine(body[i])
		if !ok {
			break
		}
		if got[key] {
			return bad(u.ID, "%s appears twice", key)
		}
		got[key] = true
		var err error
		switch key {
		case "kind":
			u.Kind, err = ParseKind(value)
		case "created":
			u.Created, err = parseTime(value)
		case "updated":
			u.Updated, err = parseTime(value)
		case "source":
			u.Source = value
		case "expires":
			if v := strings.ToLower(value); v != "" && v != "never" {
				u.Expires, err = parseTime(value)
			}
		}
		if err != nil {
			return bad(u.ID, "%s: %v", key, err)
		}
	}
	text := append([]string(nil), body[i:]...)
	u.Text = strings.TrimSpace(strings.Join(text, "\n"))
	if u.Text == "" && u.ID == "" {
		u.Text = heading // "## I like oolong" with nothing under it
	}
	if u.Text == "" {
		return bad(u.ID, "the unit has no text")
	}
	if u.ID == "" {
		u.ID, u.NoID = derivedID(u.Text), true
	}
	if seen[u.ID] {
		return bad(u.ID, "the id %s appears twice; give one of them another id or delete it", u.ID)
	}
	seen[u.ID] = true
	if u.Source == "" {
		u.Source = "owner"
	}
	if u.Created.IsZero() {
		u.Created = fallback.UTC().Truncate(time.Second)
	}
	if u.Updated.IsZero() {
		u.Updated = u.Created
	}
	return section{unit: u}
}

// metaLine recognises "kind: fact" or "- kind: fact" with a known key.
func metaLine(l string) (key, value string, ok bool) {
	t := strings.TrimSpace(l)
	t = strings.TrimPrefix(strings.TrimPrefix(t, "- "), "* ")
	k, v, found := strings.Cut(t, ":")
	if !found {
		return "", "", false
	}
	k = strings.ToLower(strings.TrimSpace(k))
	for _, mk := range metaKeys {
		if k == mk {
			return k, strings.TrimSpace(v), true
		}
	}
	return "", "", false
}

// parseTime accepts RFC 3339 or a plain date (midnight UTC).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date (want 2026-11-30 or 2026-11-30T16:15:00Z)", s)
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// header starts every memory.md homard writes.
const header = `# Memory

<!-- homard's memory of its owner. Edit it freely in any editor: each unit is
a "## m_<id>" heading, then "- key: value" lines (kind: fact, preference or
task; created, updated and expires as 2026-11-30 or RFC 3339; source), a
blank line and the text. To add a unit, write "## new" and the text below it;
homard gives it an id on its next write. Deleting a section forgets it. -->
`

// format renders the document. Units are written in their canonical form
// (hand-added ones with their id); problem sections exactly as they were.
func (d *document) format() []byte {
	var b strings.Builder
	if d.head != "" {
		b.WriteString(d.head)
	} else {
		b.WriteString(header)
	}
	for _, s := range d.sections {
		b.WriteString("\n")
		if s.problem != nil {
			b.WriteString(strings.TrimRight(s.problem.raw, "\n"))
			b.WriteString("\n")
			continue
		}
		writeUnit(&b, *s.unit)
	}
	return []byte(b.String())
}

func writeUnit(b *strings.Builder, u Unit) {
	fmt.Fprintf(b, "## %s\n", u.ID)
	fmt.Fprintf(b, "- kind: %s\n", u.Kind)
	fmt.Fprintf(b, "- created: %s\n", formatTime(u.Created))
	fmt.Fprintf(b, "- updated: %s\n", formatTime(u.Updated))
	fmt.Fprintf(b, "- source: %s\n", oneLine(u.Source))
	if !u.Expires.IsZero() {
		fmt.Fprintf(b, "- expires: %s\n", formatTime(u.Expires))
	}
	b.WriteString("\n")
	b.WriteString(safeText(u.Text))
	b.WriteString("\n")
}

// oneLine folds line breaks into spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// safeText keeps a unit's text from being read back as structure: a line
// that would start a new unit is indented by one space (the parser trims
// it again). Metadata always ends with a blank line, so text that looks
// like "source: …" stays text.
func safeText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == "##" || strings.HasPrefix(l, "## ") {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "\n")
}
