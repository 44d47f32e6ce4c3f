package config

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// unknownKeys reports every key in the file that Config has no field for,
// naming the file, the line and column where data defines it, the table it
// is in, the closest allowed key when one is close, and the keys allowed
// there. A key under an unknown table is reported once, as the table. Keys
// are written as toml.Key.String writes them: a key that is not bare is
// quoted with its control characters escaped.
func unknownKeys(name string, data []byte, md toml.MetaData) []error {
	var errs []error
	seen := make(map[string]bool)
	for _, k := range md.Undecoded() {
		table, allowed, ok := firstUnknown(k)
		if !ok {
			continue // a known key left undecoded, such as an empty array
		}
		badKey := k[:len(table)+1]
		bad := badKey.String()
		if seen[bad] {
			continue
		}
		seen[bad] = true
		where := "at the top level"
		if len(table) > 0 {
			where = "in [" + toml.Key(table).String() + "]"
		}
		near := ""
		if s, ok := closest(badKey[len(badKey)-1], allowed); ok {
			near = toml.Key{s}.String()
			if md.Type(badKey...) == "Hash" {
				near = "[" + toml.Key(append(table[:len(table):len(table)], s)).String() + "]"
			}
			near = " did you mean " + near + "?"
		}
		at := name
		if line, col, ok := keyPosition(data, badKey); ok {
			at = fmt.Sprintf("%s:%d:%d", name, line, col)
		}
		errs = append(errs, fmt.Errorf("%s: unknown key %s:%s allowed %s: %s",
			at, bad, near, where, strings.Join(allowed, ", ")))
	}
	return errs
}

// keyPosition finds the line and column (1-based, in bytes) where data
// defines key: the first table header or key/value statement that is key
// or lies under it; else the statement whose inline table or dotted key
// holds it. BurntSushi/toml records key positions but does not export
// them (v1.6.0), so the line editor's scanner (edit.go) finds them; where
// it cannot follow the file, ok is false and the error names no line.
func keyPosition(data []byte, key toml.Key) (line, col int, ok bool) {
	doc, err := scan(data)
	if err != nil {
		return 0, 0, false
	}
	want := strings.Join(key, ".")
	best, bestLen, exact := -1, -1, false
	consider := func(path string, at int) {
		switch {
		case path == want || strings.HasPrefix(path, want+"."):
			if !exact || at < best {
				best, exact = at, true
			}
		case !exact && strings.HasPrefix(want, path+".") && len(path) > bestLen:
			best, bestLen = at, len(path)
		}
	}
	for _, h := range doc.headers {
		consider(h.name, h.at)
	}
	for _, kv := range doc.keys {
		path := kv.key
		if kv.table != "" {
			path = kv.table + "." + kv.key
		}
		consider(path, kv.at)
	}
	if best < 0 {
		return 0, 0, false
	}
	line = bytes.Count(data[:best], []byte("\n")) + 1
	col = best - bytes.LastIndexByte(data[:best], '\n')
	return line, col, true
}

// closest returns the name in allowed nearest to bad, ignoring case, when
// it is near enough to be a slip of the keyboard: at most 1 edit for a
// name of up to 4 letters, 2 up to 8, 3 beyond. The first of equally near
// names wins.
func closest(bad string, allowed []string) (string, bool) {
	limit := 3
	switch n := len(bad); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, a := range allowed {
		if len(bad) > len(a)+limit || len(a) > len(bad)+limit {
			continue // too far apart, and a long key costs nothing
		}
		if d := editDistance(strings.ToLower(bad), a); d < bestD {
			best, bestD = a, d
		}
	}
	return best, best != ""
}

// editDistance is the optimal string alignment distance between a and b in
// bytes: insertions, deletions, substitutions and swaps of two neighbours
// cost 1 each ("mdoe" is 1 from "mode"). Hand-rolled: a dozen lines, where
// a library would be a new dependency for one suggestion.
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// firstUnknown walks k through the Config type and returns the table holding
// the first segment with no matching field, with the keys allowed there.
func firstUnknown(k toml.Key) (table toml.Key, allowed []string, ok bool) {
	t := reflect.TypeFor[Config]()
	for i, seg := range k {
		if t.Kind() == reflect.Map {
			// A table of named entries ([channels.NAME]): the name is
			// validate's to check; the entry's keys are the element's.
			if t = t.Elem(); t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil, nil, false
		}
		if t == reflect.TypeFor[Models]() && seg != "roles" {
			t = reflect.TypeFor[Model]() // [models.NAME] has the keys of [model]
			continue
		}
		f, found := fieldByTag(t, seg)
		if !found {
			if i == 0 {
				// config_version is decoded beside Config (load.go).
				return nil, append([]string{"config_version"}, tagNames(t)...), true
			}
			return k[:i], tagNames(t), true
		}
		t = f.Type
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			t = t.Elem()
		}
	}
	return nil, nil, false
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagNames(t reflect.Type) []string {
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if n := tagName(t.Field(i)); n != "" {
			names = append(names, n)
		}
	}
	return names
}

func tagName(f reflect.StructField) string {
	n, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if n == "-" {
		return ""
	}
	return n
}
