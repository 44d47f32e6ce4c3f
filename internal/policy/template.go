package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Template is what a standing grant for a command holds: the approved
// argv as the catalog parsed it. A later command is covered only when it
// is the same program (resolved path and, when known, the binary's
// SHA-256), the same catalog entry, in the same working folder, with the
// same subcommands, options and option values in the same order, the
// same number of operands with the same roles, the same stdin and no
// longer a timeout. The only freedom is in path operands: each approved
// one that was a clean relative path becomes a slot. A read slot is "a
// path inside F" where F is the folder it was in ("." for the working
// folder itself). A write slot (the destination: what the command
// creates or overwrites) is narrower, "a new file directly in F": the
// folder the owner saw, and nothing that exists there yet, so approving
// "cp notes.txt backup.txt" for the session lets "cp a.txt copy.txt" run
// but never overwrite an existing file nor write into a subfolder; and
// approving "mkdir build" lets "mkdir src" run but not "mkdir build/x".
// Never "mkdir ../x", "mkdir -p x --mode=4777" or "cp /etc/passwd x".
//
// A command that runs code (RunsCode) gets a template that covers
// anything only when it runs Graded: confined with no network, on an
// overlay whose change set the one gate grades before anything applies.
// Such a template covers the same command run the same way (Graded
// again), and what each run changes is still graded: a grant decides the
// call, never its effects. Anywhere else (the host backend, a read-only
// root's view) its approvals are one-time only.
type Template struct {
	Program  string `json:"program"`          // resolved absolute path
	SHA256   string `json:"sha256,omitempty"` // hex SHA-256 of the binary; set by the caller
	Entry    string `json:"entry"`            // catalog entry; empty for an unknown program
	Dir      string `json:"dir"`              // working folder as a Plan target ("." or "name:rel"); set by the caller
	Items    []Item `json:"items"`
	Stdin    string `json:"stdin_sha256,omitempty"` // hex SHA-256 of stdin, empty for none; see SetStdin
	TimeoutS int    `json:"timeout_s"`              // a covered call may not ask for longer; set by the caller
	RunsCode bool   `json:"runs_code,omitempty"`
	// Graded says the command runs confined by a sandbox backend that
	// gives it no network, on an overlay whose change set the gate grades
	// before anything reaches the root. Set by the caller that chose the
	// view and the backend (run_command's Prepare), never from the
	// model's arguments; a grant made Graded covers only Graded calls.
	Graded bool `json:"graded,omitempty"`
}

// newTemplate builds a command's template from its parsed items: path
// operands of a clean shape become slots.
func newTemplate(entry string, items []Item, runsCode bool) Template {
	t := Template{Entry: entry, Items: slices.Clone(items), RunsCode: runsCode}
	for i, it := range t.Items {
		if it.Kind == ItemOperand && (it.Role == RolePathRead || it.Role == RolePathWrite) && SlotShape(it.Value) {
			t.Items[i].Slot = path.Dir(it.Value)
		}
	}
	return t
}

// SetStdin records the command's standard input by its hash.
func (t *Template) SetStdin(stdin string) {
	if stdin == "" {
		t.Stdin = ""
		return
	}
	sum := sha256.Sum256([]byte(stdin))
	t.Stdin = hex.EncodeToString(sum[:])
}

// Grantable reports whether a standing grant may be made from t: a
// command with a program path that does not run code, or runs it Graded
// (its effects are graded before they apply, with no network to send
// anything out). Which scopes may grant it is the approval service's rule.
func (t Template) Grantable() bool { return t.Program != "" && (!t.RunsCode || t.Graded) }

// SlotShape reports whether an operand has the shape a path slot accepts:
// a clean relative path, not ".", not starting with "-", without "..",
// without control, bidi or zero-width characters (and valid UTF-8).
func SlotShape(op string) bool {
	if op == "" || op == "." || strings.HasPrefix(op, "-") || path.IsAbs(op) || path.Clean(op) != op ||
		strings.ContainsFunc(op, hiddenRune) {
		return false
	}
	return !slices.Contains(strings.Split(op, "/"), "..")
}

// hiddenRune: control characters, bidi controls and zero-width
// characters, which make a name look like another on a card.
func hiddenRune(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e ||
		r >= 0x2066 && r <= 0x2069 || r == 0xfeff || r == utf8.RuneError
}

// InSlot reports whether op has the slot shape and lies strictly inside
// the folder slot ("." is the working folder), by its text alone. The
// caller must still resolve it on disk (see Covers).
func InSlot(slot, op string) bool {
	if !SlotShape(op) {
		return false
	}
	if slot == "." {
		return true
	}
	return SlotShape(slot) && strings.HasPrefix(op, slot+"/")
}

// Inside resolves an operand at run time: it reports whether op, taken
// relative to the working folder dir, resolves (symlinks followed) to a
// path strictly inside slot below dir and outside the protected set; with
// newOnly (a write slot), also that nothing exists there yet.
type Inside func(dir, slot, op string, newOnly bool) bool

// Covers reports whether call, the template of a proposed command, is
// covered by t, the template of a grant. Everything but slot operands
// must be equal; a slot operand must have InSlot's shape and inside must
// confirm it on disk. A nil inside covers no slot: fail closed. A call
// that runs code is covered only by a template that runs code, both
// Graded; a Graded template never covers a call that is not.
func (t Template) Covers(call Template, inside Inside) bool {
	if !t.Grantable() || !call.Grantable() || call.RunsCode != t.RunsCode || t.Graded && !call.Graded {
		return false
	}
	if call.Program != t.Program || call.Entry != t.Entry || call.Dir != t.Dir ||
		call.Stdin != t.Stdin || call.TimeoutS > t.TimeoutS || len(call.Items) != len(t.Items) {
		return false
	}
	if t.SHA256 != "" && call.SHA256 != t.SHA256 {
		return false
	}
	for i, g := range t.Items {
		c := call.Items[i]
		if c.Kind != g.Kind || c.Name != g.Name || c.HasValue != g.HasValue || c.Role != g.Role {
			return false
		}
		if g.Slot == "" {
			if c.Value != g.Value {
				return false
			}
			continue
		}
		write := g.Role == RolePathWrite
		if write && path.Dir(c.Value) != g.Slot {
			return false // a destination stays in the folder the owner saw
		}
		if g.Kind != ItemOperand || !InSlot(g.Slot, c.Value) || inside == nil || !inside(t.Dir, g.Slot, c.Value, write) {
			return false
		}
	}
	return true
}

// String shows the template as the owner reads it on a card, before
// choosing a scope: "mkdir -p ‹path in build/›".
func (t Template) String() string {
	var b strings.Builder
	b.WriteString(quoteWord(path.Base(t.Program)))
	for _, it := range t.Items {
		b.WriteByte(' ')
		switch it.Kind {
		case ItemSub:
			b.WriteString(quoteWord(it.Name))
		case ItemEnd:
			b.WriteString("--")
		case ItemOption:
			if it.Name == "-NUM" {
				b.WriteString("-" + quoteWord(it.Value))
				continue
			}
			b.WriteString(quoteWord(it.Name))
			if !it.HasValue && it.Value != "" {
				// find -exec's command, its words already quoted.
				b.WriteString(" " + strings.TrimSuffix(it.Value, " "))
				continue
			}
			if it.HasValue {
				if strings.HasPrefix(it.Name, "--") {
					b.WriteString("=" + quoteWord(it.Value))
				} else {
					b.WriteString(" " + quoteWord(it.Value))
				}
			}
		case ItemOperand:
			switch {
			case it.Slot == "":
				b.WriteString(quoteWord(it.Value))
			case it.Role == RolePathWrite:
				b.WriteString("‹new name in " + strings.TrimSuffix(it.Slot, "/") + "/›")
			default:
				b.WriteString("‹path in " + strings.TrimSuffix(it.Slot, "/") + "/›")
			}
		}
	}
	if t.Stdin != "" {
		b.WriteString(" ‹with the same stdin›")
	}
	return b.String()
}

// CoverNote is what a card adds after the template of a command that runs
// code, graded: what a session grant of it reaches and what it leaves to
// the gate.
const CoverNote = " (this session only, on a copy with no network; what it changes is still checked, and anything above medium is held for you)"

// Cover is the template as a card names what a grant of it covers: its
// String, and for a command that runs code graded, CoverNote.
func (t Template) Cover() string {
	if t.RunsCode && t.Graded {
		return t.String() + CoverNote
	}
	return t.String()
}

// quoteWord quotes a word that is empty or holds anything but plain
// characters, so control characters and spaces show as escapes.
func quoteWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r == '"' || r == '\'' || r == '\\' || r >= 0x7f
	}) {
		return s
	}
	return strconv.QuoteToASCII(s)
}
