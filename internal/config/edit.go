package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/homard/homard/internal/atomicfile"
)

// This file is a small line-level TOML editor, hand-rolled because no
// library available here round-trips TOML comments: BurntSushi/toml decodes
// and encodes values only, so rewriting config.toml through it would drop
// every comment the owner wrote. The editor changes a key's value text in
// place and touches nothing else: comments, blank lines, key order,
// quoting style and line endings (LF or CRLF) stay as they were.
//
// It scans statements (table headers, key/value pairs, comments) without
// building a tree; a value is skipped by tracking strings (basic, literal,
// multi-line) and bracket depth, so a value may span lines (an array of
// roots) and hold '#' inside quotes. Every edit is then checked by decoding
// the file before and after: a result in which anything but the edited
// keys changed is refused, so a blind spot of the scanner is an error, never
// a silently rewritten setting.

// KeyEdit sets one key of one table.
type KeyEdit struct {
	// Table is the table's name as in its header ("model"); "" is the
	// top level. Array tables ([[rules]]) cannot be edited.
	Table string
	// Key is the bare key ("provider").
	Key string
	// Value is the new value as TOML text: `"deepseek"`, `42`,
	// `[{ name = "main", path = "/ws" }]`. QuoteString makes a string.
	Value string
}

// QuoteString returns s as a TOML basic string, escaped the way Render
// writes strings.
func QuoteString(s string) string { return quote(s) }

// RootsValue returns roots as the TOML text of workspace.roots, one inline
// table per line.
func RootsValue(roots []Root) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, r := range roots {
		access := r.Access
		if access == "" {
			access = AccessReadWrite
		}
		fmt.Fprintf(&b, "  { name = %s, path = %s, access = %s },\n", quote(r.Name), quote(r.Path), quote(access))
	}
	b.WriteString("]")
	return b.String()
}

// EditKeys returns data with every edit applied: a key that exists gets the
// new value in place (its comments kept); a missing key is added after the
// last key of its table; a missing table is added at the end. data must be
// valid TOML. The result is checked: it decodes, the edited keys read back
// as the new values and every other value is unchanged; otherwise EditKeys
// returns an error and no data.
func EditKeys(data []byte, edits ...KeyEdit) ([]byte, error) {
	before := map[string]any{}
	if _, err := toml.Decode(string(data), &before); err != nil {
		return nil, fmt.Errorf("edit config: the file is not valid TOML: %w", err)
	}
	want := deepCopy(before)
	out := data
	for _, e := range edits {
		v, err := decodeValue(e.Value)
		if err != nil {
			return nil, fmt.Errorf("edit config: %s.%s: the new value %w", e.Table, e.Key, err)
		}
		t := want
		if e.Table != "" {
			sub, ok := want[e.Table].(map[string]any)
			if !ok {
				sub = map[string]any{}
				want[e.Table] = sub
			}
			t = sub
		}
		t[e.Key] = v
		if out, err = editOne(out, e); err != nil {
			return nil, err
		}
	}
	after := map[string]any{}
	if _, err := toml.Decode(string(out), &after); err != nil {
		return nil, fmt.Errorf("edit config: the edited file would not be valid TOML (%v); make the change by hand", err)
	}
	if !reflect.DeepEqual(after, want) {
		return nil, errors.New("edit config: the file's layout is beyond this editor (a table written as dotted keys or inline?); make the change by hand")
	}
	return out, nil
}

// decodeValue parses the TOML value text v.
func decodeValue(v string) (any, error) {
	var m map[string]any
	if _, err := toml.Decode("v = "+v, &m); err != nil {
		return nil, fmt.Errorf("is not a TOML value: %w", err)
	}
	return m["v"], nil
}

// deepCopy copies the nested tables of a decoded document, so the wanted
// state can be changed without touching the original.
func deepCopy(m map[string]any) map[string]any {
	c := maps.Clone(m)
	for k, v := range c {
		if sub, ok := v.(map[string]any); ok {
			c[k] = deepCopy(sub)
		}
	}
	return c
}

// editOne applies one edit to data.
func editOne(data []byte, e KeyEdit) ([]byte, error) {
	doc, err := scan(data)
	if err != nil {
		return nil, err
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	line := e.Key + " = " + strings.ReplaceAll(e.Value, "\n", nl)
	t, ok := doc.tables[e.Table]
	if t.array {
		return nil, fmt.Errorf("edit config: [[%s]] is an array of tables; this editor changes plain tables only", e.Table)
	}
	var out []byte
	for _, kv := range doc.keys {
		if kv.table == e.Table && kv.key == e.Key {
			out = append(out, data[:kv.start]...)
			out = append(out, strings.ReplaceAll(e.Value, "\n", nl)...)
			return append(out, data[kv.end:]...), nil
		}
	}
	if !ok {
		if e.Table == "" {
			// The top level always exists: it starts at offset 0.
			t = tableSpan{insertAt: 0}
		} else {
			out = append(out, data...)
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, nl...)
			}
			return append(out, nl+"["+e.Table+"]"+nl+line+nl...), nil
		}
	}
	at := t.insertAt
	out = append(out, data[:at]...)
	if at > 0 && data[at-1] != '\n' {
		out = append(out, nl...) // the last line had no newline
	}
	out = append(out, line+nl...)
	return append(out, data[at:]...), nil
}

// keyValue is one key/value statement: its table, its key, where the key
// starts, and the byte span of its value text (without trailing blanks or
// comment).
type keyValue struct {
	table, key string
	at         int
	start, end int
}

// header is one table header ([name] or [[name]]) and where it starts.
type header struct {
	name string
	at   int
}

// tableSpan is where a new key of a table goes: after the end of the line
// of its last key, or of its header when it has no keys.
type tableSpan struct {
	insertAt int
	array    bool
}

type document struct {
	keys    []keyValue
	headers []header
	tables  map[string]tableSpan
}

// scan walks data statement by statement.
func scan(data []byte) (document, error) {
	doc := document{tables: map[string]tableSpan{}}
	table := ""
	s := scanner{data: data}
	for !s.done() {
		s.skipBlanks()
		switch {
		case s.done():
		case s.peek() == '\n' || s.peek() == '\r' || s.peek() == '#':
			s.skipLine()
		case s.peek() == '[':
			at := s.i
			name, array, err := s.header()
			if err != nil {
				return doc, err
			}
			table = name
			doc.headers = append(doc.headers, header{name: name, at: at})
			s.skipLine()
			if _, seen := doc.tables[name]; !seen || array {
				doc.tables[name] = tableSpan{insertAt: s.i, array: array}
			}
		default:
			at := s.i
			key, err := s.key()
			if err != nil {
				return doc, err
			}
			s.skipBlanks()
			start := s.i
			end, err := s.value()
			if err != nil {
				return doc, fmt.Errorf("edit config: line %d: key %s: %w", s.line(start), key, err)
			}
			doc.keys = append(doc.keys, keyValue{table: table, key: key, at: at, start: start, end: end})
			s.skipLine()
			if t, ok := doc.tables[table]; ok || table == "" {
				t.insertAt = s.i
				doc.tables[table] = t
			}
		}
	}
	return doc, nil
}

// scanner reads TOML statements from data; i is the next byte.
type scanner struct {
	data []byte
	i    int
}

func (s *scanner) done() bool { return s.i >= len(s.data) }
func (s *scanner) peek() byte { return s.data[s.i] }

func (s *scanner) line(at int) int { return bytes.Count(s.data[:at], []byte("\n")) + 1 }

// skipBlanks skips spaces and tabs.
func (s *scanner) skipBlanks() {
	for !s.done() && (s.peek() == ' ' || s.peek() == '\t') {
		s.i++
	}
}

// skipLine moves past the next newline (a comment or the rest of a
// statement's line).
func (s *scanner) skipLine() {
	for !s.done() && s.peek() != '\n' {
		s.i++
	}
	if !s.done() {
		s.i++
	}
}

// key reads a possibly dotted, possibly quoted key up to and including '='
// and returns it normalised: parts unquoted, joined with ".".
func (s *scanner) key() (string, error) {
	name, err := s.dotted('=')
	if err != nil {
		return "", err
	}
	s.i++ // '='
	return name, nil
}

// header reads "[name]" or "[[name]]" and returns the normalised name.
func (s *scanner) header() (name string, array bool, err error) {
	s.i++ // '['
	if !s.done() && s.peek() == '[' {
		array = true
		s.i++
	}
	name, err = s.dotted(']')
	if err != nil {
		return "", false, err
	}
	s.i++
	if array {
		if s.done() || s.peek() != ']' {
			return "", false, fmt.Errorf("edit config: line %d: want ]] to close [[%s", s.line(s.i), name)
		}
		s.i++
	}
	return name, array, nil
}

// dotted reads key parts separated by '.' until stop, which it leaves
// unread.
func (s *scanner) dotted(stop byte) (string, error) {
	var parts []string
	var part strings.Builder
	for {
		s.skipBlanks()
		if s.done() || s.peek() == '\n' {
			return "", fmt.Errorf("edit config: line %d: a key or table name is not finished", s.line(s.i))
		}
		switch c := s.peek(); {
		case c == '"' || c == '\'':
			start := s.i
			if err := s.str(); err != nil {
				return "", err
			}
			raw := string(s.data[start+1 : s.i-1])
			if c == '"' {
				// A basic string's escapes as TOML reads them.
				if v, err := decodeValue(string(s.data[start:s.i])); err == nil {
					raw, _ = v.(string)
				}
			}
			part.WriteString(raw)
		case c == '.':
			parts = append(parts, part.String())
			part.Reset()
			s.i++
		case c == stop:
			return strings.Join(append(parts, part.String()), "."), nil
		default:
			for !s.done() && isBareKeyByte(s.peek()) {
				part.WriteByte(s.peek())
				s.i++
			}
			if s.done() || !(isBareKeyByte(s.peek()) || strings.IndexByte(" \t.\"'", s.peek()) >= 0 || s.peek() == stop) {
				return "", fmt.Errorf("edit config: line %d: unexpected %q in a key", s.line(s.i), s.data[min(s.i, len(s.data)-1)])
			}
		}
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value moves past a value and returns the end of its text: strings and
// brackets are followed across lines; the value ends at a newline or a
// comment outside them. Trailing blanks are not part of it.
func (s *scanner) value() (int, error) {
	depth := 0
	end := s.i
	for !s.done() {
		c := s.peek()
		switch c {
		case '"', '\'':
			if err := s.str(); err != nil {
				return 0, err
			}
			end = s.i
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '#':
			if depth == 0 {
				return end, nil
			}
			for !s.done() && s.peek() != '\n' {
				s.i++
			}
			continue
		case '\n':
			if depth <= 0 {
				return end, nil
			}
		}
		s.i++
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			end = s.i
		}
	}
	if depth > 0 {
		return 0, errors.New("an array or inline table is not closed")
	}
	return end, nil
}

// str moves past a basic, literal or multi-line string starting at s.i.
func (s *scanner) str() error {
	q := s.peek()
	start := s.i
	triple := bytes.HasPrefix(s.data[s.i:], []byte{q, q, q})
	if triple {
		s.i += 3
		for !s.done() {
			switch {
			case q == '"' && s.peek() == '\\':
				s.i += 2
			case bytes.HasPrefix(s.data[s.i:], []byte{q, q, q}):
				s.i += 3
				// Up to two more quotes belong to the content.
				for n := 0; n < 2 && !s.done() && s.peek() == q; n++ {
					s.i++
				}
				return nil
			default:
				s.i++
			}
		}
		return fmt.Errorf("edit config: line %d: a multi-line string is not closed", s.line(start))
	}
	s.i++
	for !s.done() && s.peek() != '\n' {
		switch c := s.peek(); {
		case q == '"' && c == '\\':
			s.i += 2
		case c == q:
			s.i++
			return nil
		default:
			s.i++
		}
	}
	return fmt.Errorf("edit config: line %d: a string is not closed", s.line(start))
}

// Check validates data as the config file at path would be read by Load,
// without writing anything; errors name path.
func Check(path string, data []byte) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("check config %s: %w", path, err)
	}
	return parse(path, filepath.Dir(abs), data, os.Getenv)
}

// WriteChecked replaces the config file at path with data: it writes a
// temporary file with mode 0600 beside it, loads that with Load (so what
// lands is exactly what homard will read), then renames it into place.
// On any error the old file is untouched.
func WriteChecked(path string, data []byte) (*Config, error) {
	s, err := atomicfile.Stage(path, data, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	defer s.Discard()
	c, err := Load(s.Name())
	if err != nil {
		return nil, fmt.Errorf("write config: the new %s would not load, so it was not written: %w", path, err)
	}
	if err := s.Replace(); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	return c, nil
}
