package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Limits bound what strict decoding accepts.
type Limits struct {
	MaxBytes  int // whole argument document
	MaxString int // one string value, in bytes
	MaxItems  int // elements of one array or members of one object
	MaxDepth  int // nesting of arrays and objects
}

// DefaultLimits fit every built-in tool: a write_file of up to 1 MiB.
var DefaultLimits = Limits{MaxBytes: 1<<20 + 4096, MaxString: 1 << 20, MaxItems: 1024, MaxDepth: 16}

// ErrArguments is wrapped by every strict-decoding failure.
var ErrArguments = errors.New("invalid arguments")

func argErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrArguments, fmt.Sprintf(format, args...))
}

// DecodeStrict decodes raw JSON arguments into dst (a pointer to a struct)
// and rejects what encoding/json would quietly accept: duplicate keys, keys
// that differ from a field only by case, unknown fields, null for a
// non-pointer field, missing required fields (no omitempty), wrong types,
// trailing data, invalid UTF-8 and values over the limits. Empty input is
// read as {} so tools without parameters can be called with nothing.
//
// encoding/json v1 is kept for the final decode; the checks it lacks are a
// token walk alongside the Go type, since no maintained strict decoder is
// served here (encoding/json/v2 is still an experiment in Go 1.26).
func DecodeStrict(raw []byte, dst any, lim Limits) error {
	if len(raw) > lim.MaxBytes {
		return argErr("arguments are %d bytes; the limit is %d", len(raw), lim.MaxBytes)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if !utf8.Valid(raw) {
		return argErr("arguments are not valid UTF-8")
	}
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decode: destination must be a non-nil pointer, got %T", dst)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	w := walker{dec: dec, lim: lim}
	if err := w.value(rv.Type().Elem(), "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return argErr("unexpected data after the arguments object")
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return argErr("field %s: want %s, got %s", fieldName(te.Field), jsonKind(te.Type), te.Value)
		}
		return argErr("%v", err)
	}
	return nil
}

func fieldName(f string) string {
	if f == "" {
		return "(top level)"
	}
	return f
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

type walker struct {
	dec *json.Decoder
	lim Limits
}

type field struct {
	typ      reflect.Type
	required bool
}

// fields lists the JSON names of a struct's fields as encoding/json (and
// the schema generator) see them: exported fields, plus the fields of
// embedded structs without a json name, promoted unless a shallower field,
// or a tagged one at the same depth, has the same name. Names that stay
// ambiguous are left out, as encoding/json ignores them.
//
// The result is cached per type and must not be modified.
func fields(t reflect.Type) map[string]field {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]field)
	}
	m, _ := fieldCache.LoadOrStore(t, buildFields(t))
	return m.(map[string]field)
}

// fieldCache maps a struct type to its fields: the set of parameter types
// is fixed (one per tool), and building it costs more than decoding a
// small call.
var fieldCache sync.Map // reflect.Type → map[string]field

func buildFields(t reflect.Type) map[string]field {
	type candidate struct {
		field
		depth  int
		tagged bool
	}
	byName := make(map[string][]candidate)
	onPath := make(map[reflect.Type]bool)
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		if onPath[t] {
			return
		}
		onPath[t] = true
		defer delete(onPath, t)
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = f.Name
			}
			optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") ||
				f.Type.Kind() == reflect.Pointer
			byName[name] = append(byName[name], candidate{field{typ: f.Type, required: !optional}, depth, tagged})
		}
	}
	walk(t, 0)
	out := make(map[string]field, len(byName))
	for name, cs := range byName {
		minDepth := cs[0].depth
		for _, c := range cs {
			minDepth = min(minDepth, c.depth)
		}
		var top, tagged []candidate
		for _, c := range cs {
			if c.depth == minDepth {
				top = append(top, c)
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
		}
		switch {
		case len(top) == 1:
			out[name] = top[0].field
		case len(tagged) == 1:
			out[name] = tagged[0].field
		}
	}
	return out
}

func (w *walker) value(t reflect.Type, at string, depth int) error {
	if depth > w.lim.MaxDepth {
		return argErr("arguments nest deeper than %d levels", w.lim.MaxDepth)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return argErr("malformed JSON: %v", err)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		if tok == nil {
			return nil
		}
		t = t.Elem()
	}
	switch v := tok.(type) {
	case nil:
		if t != nil && t.Kind() != reflect.Interface && t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
			return argErr("field %s: must not be null", fieldName(at))
		}
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) {
			return argErr("field %s: must not be null", fieldName(at))
		}
		return nil
	case string:
		if len(v) > w.lim.MaxString {
			return argErr("field %s: string is %d bytes; the limit is %d", fieldName(at), len(v), w.lim.MaxString)
		}
		return nil
	case json.Delim:
		switch v {
		case '{':
			return w.object(t, at, depth)
		case '[':
			return w.array(t, at, depth)
		}
		return argErr("malformed JSON at %s", fieldName(at))
	}
	return nil // numbers and booleans: types checked by the final decode
}

func (w *walker) object(t reflect.Type, at string, depth int) error {
	var known map[string]field
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			known = fields(t)
		case reflect.Map:
			elem = t.Elem()
		case reflect.Interface:
		default:
			return argErr("field %s: want %s, got an object", fieldName(at), jsonKind(t))
		}
	}
	seen := make(map[string]bool)
	folded := make(map[string]string)
	n := 0
	for w.dec.More() {
		n++
		if n > w.lim.MaxItems {
			return argErr("field %s: more than %d members", fieldName(at), w.lim.MaxItems)
		}
		tok, err := w.dec.Token()
		if err != nil {
			return argErr("malformed JSON: %v", err)
		}
		key, _ := tok.(string)
		path := key
		if at != "" {
			path = at + "." + key
		}
		if seen[key] {
			return argErr("duplicate key %q", path)
		}
		seen[key] = true
		fold := foldKey(key)
		if prev, ok := folded[fold]; ok {
			return argErr("keys %q and %q differ only by case", prev, key)
		}
		folded[fold] = key
		var ft reflect.Type
		switch {
		case known != nil:
			f, ok := known[key]
			if !ok {
				for name := range known {
					if strings.EqualFold(name, key) {
						return argErr("unknown field %q (did you mean %q? names are case-sensitive)", path, name)
					}
				}
				return argErr("unknown field %q", path)
			}
			ft = f.typ
		case elem != nil:
			ft = elem
		}
		if err := w.value(ft, path, depth+1); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // '}'
		return argErr("malformed JSON: %v", err)
	}
	for name, f := range known {
		if f.required && !seen[name] {
			p := name
			if at != "" {
				p = at + "." + name
			}
			return argErr("missing required field %q", p)
		}
	}
	return nil
}

// foldKey maps every key to one representative of its Unicode case-folding
// class, so two keys collide exactly when strings.EqualFold holds (which
// strings.ToLower misses: "s" and "ſ", the long s, fold together).
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		ascii = ascii && s[i] < utf8.RuneSelf
	}
	if ascii {
		return strings.ToUpper(s) // the least rune of an ASCII letter's class
	}
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

func (w *walker) array(t reflect.Type, at string, depth int) error {
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			elem = t.Elem()
		case reflect.Interface:
		default:
			return argErr("field %s: want %s, got an array", fieldName(at), jsonKind(t))
		}
	}
	limit := w.lim.MaxItems
	if t != nil && t.Kind() == reflect.Array {
		limit = min(limit, t.Len())
	}
	n := 0
	for w.dec.More() {
		n++
		if n > limit {
			return argErr("field %s: more than %d items", fieldName(at), limit)
		}
		if err := w.value(elem, fmt.Sprintf("%s[%d]", at, n-1), depth+1); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return argErr("malformed JSON: %v", err)
	}
	// encoding/json zero-fills a short fixed-size array; say so instead.
	if t != nil && t.Kind() == reflect.Array && n != t.Len() {
		return argErr("field %s: want exactly %d items, got %d", fieldName(at), t.Len(), n)
	}
	return nil
}
