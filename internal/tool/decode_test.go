package tool

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type readParams struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty"`
}

type noParams struct{}

type nestedParams struct {
	Name   string            `json:"name"`
	Opts   options           `json:"opts"`
	Items  []item            `json:"items"`
	Labels map[string]string `json:"labels,omitempty"`
	Ratio  float64           `json:"ratio,omitzero"`
	Note   *string           `json:"note"`
	Flags  [2]bool           `json:"flags,omitzero"`
	Any    any               `json:"any,omitempty"`
	//lint:ignore U1000 an unexported field the decoder must skip
	ignored string
}

type options struct {
	Verbose bool `json:"verbose"`
	Depth   uint `json:"depth,omitempty"`
}

type item struct {
	ID  int      `json:"id"`
	Tag []string `json:"tag,omitempty"`
}

// Embedded structs are flattened as encoding/json and the schema
// generator flatten them.
type Common struct {
	Path string `json:"path"`
}

type embeddedParams struct {
	Common
	Mode string `json:"mode,omitempty"`
}

// shadowParams: the outer Path wins over the promoted one.
type shadowParams struct {
	Common
	Path int `json:"path"`
}

var smallLimits = Limits{MaxBytes: 256, MaxString: 16, MaxItems: 4, MaxDepth: 3}

func TestDecodeStrictRejects(t *testing.T) {
	deep := `{"any":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`
	tests := []struct {
		name string
		dst  func() any
		in   string
		lim  Limits
		want string // substring of the error
	}{
		{"case-fold collision", newOf[readParams], `{"path":"notes.txt","PATH":"/etc/passwd"}`, DefaultLimits, `keys "path" and "PATH" differ only by case`},
		{"case-fold collision reversed", newOf[readParams], `{"PATH":"/etc/passwd","path":"notes.txt"}`, DefaultLimits, `unknown field "PATH" (did you mean "path"?`},
		{"duplicate key", newOf[readParams], `{"path":"a","path":"b"}`, DefaultLimits, `duplicate key "path"`},
		{"duplicate nested key", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true,"verbose":false}}`, DefaultLimits, `duplicate key "opts.verbose"`},
		{"duplicate map key", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"labels":{"a":"1","a":"2"}}`, DefaultLimits, `duplicate key "labels.a"`},
		{"case-fold map keys", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"labels":{"k":"1","K":"2"}}`, DefaultLimits, `differ only by case`},
		{"long s map keys", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"labels":{"s":"1","ſ":"2"}}`, DefaultLimits, `differ only by case`},
		{"kelvin sign map keys", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"labels":{"K":"1","k":"2"}}`, DefaultLimits, `differ only by case`},
		{"unknown field", newOf[readParams], `{"path":"a","mode":"x"}`, DefaultLimits, `unknown field "mode"`},
		{"case-mismatch field", newOf[readParams], `{"Path":"a"}`, DefaultLimits, `unknown field "Path" (did you mean "path"? names are case-sensitive)`},
		{"kelvin sign field", newOf[struct {
			Kind string `json:"kind"`
		}], "{\"\u212aind\":\"a\"}", DefaultLimits, `unknown field`},
		{"unknown nested field", newOf[nestedParams], `{"name":"n","items":[{"id":1,"x":2}],"note":null,"opts":{"verbose":true}}`, DefaultLimits, `unknown field "items[0].x"`},
		{"unexported field", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"ignored":"x"}`, DefaultLimits, `unknown field "ignored"`},
		{"string for int", newOf[readParams], `{"path":"a","limit":"5"}`, DefaultLimits, `field limit: want an integer, got string`},
		{"float for int", newOf[readParams], `{"path":"a","limit":1.5}`, DefaultLimits, `field limit: want an integer`},
		{"integral float for int", newOf[readParams], `{"path":"a","limit":5.0}`, DefaultLimits, `field limit: want an integer`},
		{"int overflow", newOf[struct {
			N int8 `json:"n"`
		}], `{"n":300}`, DefaultLimits, `field n: want an integer`},
		{"negative for uint", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true,"depth":-1}}`, DefaultLimits, `want an integer`},
		{"number for string", newOf[readParams], `{"path":5}`, DefaultLimits, `field path: want a string, got number`},
		{"bool for string", newOf[readParams], `{"path":true}`, DefaultLimits, `field path: want a string, got bool`},
		{"object for string", newOf[readParams], `{"path":{"a":1}}`, DefaultLimits, `field path: want a string, got an object`},
		{"array for string", newOf[readParams], `{"path":["a"]}`, DefaultLimits, `field path: want a string, got an array`},
		{"string for object", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":"x"}`, DefaultLimits, `field opts: want an object, got string`},
		{"string for array", newOf[nestedParams], `{"name":"n","items":"x","note":null,"opts":{"verbose":true}}`, DefaultLimits, `field items: want an array, got string`},
		{"null for required", newOf[readParams], `{"path":null}`, DefaultLimits, `field path: must not be null`},
		{"null for optional non-pointer", newOf[readParams], `{"path":"a","limit":null}`, DefaultLimits, `field limit: must not be null`},
		{"null for slice", newOf[nestedParams], `{"name":"n","items":null,"note":null,"opts":{"verbose":true}}`, DefaultLimits, `field items: must not be null`},
		{"null for map", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"labels":null}`, DefaultLimits, `field labels: must not be null`},
		{"null top level", newOf[readParams], `null`, DefaultLimits, `field (top level): must not be null`},
		{"array top level", newOf[readParams], `[]`, DefaultLimits, `field (top level): want an object, got an array`},
		{"string top level", newOf[readParams], `"path"`, DefaultLimits, `want an object, got string`},
		{"missing required", newOf[readParams], `{"limit":3}`, DefaultLimits, `missing required field "path"`},
		{"missing required nested", newOf[nestedParams], `{"name":"n","items":[{"tag":[]}],"note":null,"opts":{"verbose":true}}`, DefaultLimits, `missing required field "items[0].id"`},
		{"missing everything", newOf[readParams], ``, DefaultLimits, `missing required field "path"`},
		{"trailing object", newOf[noParams], `{}{}`, DefaultLimits, `unexpected data after the arguments object`},
		{"trailing garbage", newOf[noParams], `{} x`, DefaultLimits, `unexpected data after the arguments object`},
		{"trailing comma", newOf[readParams], `{"path":"a",}`, DefaultLimits, `malformed JSON`},
		{"unterminated", newOf[readParams], `{"path":"a"`, DefaultLimits, `malformed JSON`},
		{"single quotes", newOf[readParams], `{'path':'a'}`, DefaultLimits, `malformed JSON`},
		{"invalid UTF-8", newOf[readParams], "{\"path\":\"\xff\xfe\"}", DefaultLimits, `not valid UTF-8`},
		{"oversized string", newOf[readParams], `{"path":"` + strings.Repeat("a", 17) + `"}`, smallLimits, `field path: string is 17 bytes; the limit is 16`},
		{"oversized escaped string", newOf[readParams], `{"path":"` + strings.Repeat(`\u00e9`, 9) + `"}`, smallLimits, `string is 18 bytes`},
		{"oversized document", newOf[readParams], `{"path":"a"}` + strings.Repeat(" ", 300), smallLimits, `arguments are 312 bytes; the limit is 256`},
		{"excessive nesting", newOf[nestedParams], deep, DefaultLimits, `nest deeper than 16 levels`},
		{"too many items", newOf[nestedParams], `{"name":"n","items":[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5}],"note":null,"opts":{"verbose":true}}`, smallLimits, `field items: more than 4 items`},
		{"too many members", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"labels":{"a":"","b":"","c":"","d":"","e":"","f":"","g":""}}`, Limits{MaxBytes: 1024, MaxString: 16, MaxItems: 6, MaxDepth: 3}, `field labels: more than 6 members`},
		{"too many top-level members", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"ratio":1}`, smallLimits, `field (top level): more than 4 members`},
		{"fixed array too long", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"flags":[true,false,true]}`, DefaultLimits, `field flags: more than 2 items`},
		{"fixed array too short", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":true},"flags":[true]}`, DefaultLimits, `field flags: want exactly 2 items, got 1`},
		{"promoted field missing", newOf[embeddedParams], `{"mode":"x"}`, DefaultLimits, `missing required field "path"`},
		{"embedded struct name is not a field", newOf[embeddedParams], `{"path":"a","Common":{"path":"b"}}`, DefaultLimits, `unknown field "Common"`},
		{"shadowing field keeps its type", newOf[shadowParams], `{"path":"a"}`, DefaultLimits, `field path: want an integer, got string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := tt.dst()
			err := DecodeStrict([]byte(tt.in), dst, tt.lim)
			if err == nil {
				t.Fatalf("DecodeStrict(%q) = nil; want an error containing %q (decoded %+v)", tt.in, tt.want, dst)
			}
			if !errors.Is(err, ErrArguments) {
				t.Errorf("DecodeStrict(%q) = %v; want it to wrap ErrArguments", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeStrict(%q) = %q; want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func newOf[T any]() any { return new(T) }

func TestDecodeStrictAccepts(t *testing.T) {
	note := "n"
	tests := []struct {
		name string
		dst  func() any
		in   string
		want any
	}{
		{"empty input", newOf[noParams], ``, &noParams{}},
		{"blank input", newOf[noParams], " \n\t", &noParams{}},
		{"empty object", newOf[noParams], `{}`, &noParams{}},
		{"optional omitted", newOf[readParams], `{"path":"notes.txt"}`, &readParams{Path: "notes.txt"}},
		{"optional given", newOf[readParams], ` {"path":"a","limit":5} `, &readParams{Path: "a", Limit: 5}},
		{"escapes", newOf[readParams], `{"path":"a\u00e9\n\"b"}`, &readParams{Path: "a\u00e9\n\"b"}},
		{"pointer null", newOf[nestedParams], `{"name":"n","items":[],"note":null,"opts":{"verbose":false}}`,
			&nestedParams{Name: "n", Items: []item{}, Opts: options{}}},
		{"pointer omitted", newOf[nestedParams], `{"name":"n","items":[],"opts":{"verbose":false}}`,
			&nestedParams{Name: "n", Items: []item{}, Opts: options{}}},
		{"nested", newOf[nestedParams],
			`{"name":"n","items":[{"id":1,"tag":["a","b"]},{"id":2}],"note":"n","opts":{"verbose":true,"depth":3},` +
				`"labels":{"k":"v","K2":"w"},"ratio":0.5,"flags":[true,false],"any":{"x":[1,null,{"y":"z"}]}}`,
			&nestedParams{Name: "n", Opts: options{Verbose: true, Depth: 3}, Items: []item{{ID: 1, Tag: []string{"a", "b"}}, {ID: 2}},
				Labels: map[string]string{"k": "v", "K2": "w"}, Ratio: 0.5, Note: &note, Flags: [2]bool{true, false},
				Any: map[string]any{"x": []any{1.0, nil, map[string]any{"y": "z"}}}}},
		{"same key in sibling objects", newOf[nestedParams], `{"name":"n","items":[{"id":1},{"id":2}],"opts":{"verbose":true}}`,
			&nestedParams{Name: "n", Items: []item{{ID: 1}, {ID: 2}}, Opts: options{Verbose: true}}},
		{"promoted field", newOf[embeddedParams], `{"path":"a","mode":"m"}`, &embeddedParams{Common: Common{Path: "a"}, Mode: "m"}},
		{"shadowing field", newOf[shadowParams], `{"path":3}`, &shadowParams{Path: 3}},
		{"limits are inclusive", newOf[readParams], `{"path":"` + strings.Repeat("a", 16) + `"}`, &readParams{Path: strings.Repeat("a", 16)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := tt.dst()
			lim := DefaultLimits
			if tt.name == "limits are inclusive" {
				lim = smallLimits
			}
			if err := DecodeStrict([]byte(tt.in), dst, lim); err != nil {
				t.Fatalf("DecodeStrict(%q) = %v; want nil", tt.in, err)
			}
			if !reflect.DeepEqual(dst, tt.want) {
				t.Errorf("DecodeStrict(%q) decoded %#v; want %#v", tt.in, dst, tt.want)
			}
		})
	}
}

func TestDecodeStrictDestination(t *testing.T) {
	var p readParams
	for _, dst := range []any{p, nil, (*readParams)(nil)} {
		err := DecodeStrict([]byte(`{"path":"a"}`), dst, DefaultLimits)
		if err == nil || errors.Is(err, ErrArguments) {
			t.Errorf("DecodeStrict into %T = %v; want a programming error, not ErrArguments", dst, err)
		}
	}
}

// TestFieldsMatchSchema keeps the decoder and the generated schema in step:
// the properties the model is shown are exactly the fields the decoder
// accepts, and the required lists agree (pointer fields aside: the schema
// asks for them, the decoder lets them be left out).
func TestFieldsMatchSchema(t *testing.T) {
	check := func(name string, typ reflect.Type, raw []byte) {
		t.Helper()
		var s struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		mustUnmarshal(t, raw, &s)
		fs := fields(typ)
		for p := range s.Properties {
			if _, ok := fs[p]; !ok {
				t.Errorf("%s: schema property %q is not a decoder field", name, p)
			}
		}
		for f, info := range fs {
			if _, ok := s.Properties[f]; !ok {
				t.Errorf("%s: decoder field %q is not in the schema", name, f)
			}
			inSchema := false
			for _, r := range s.Required {
				inSchema = inSchema || r == f
			}
			if info.required && !inSchema {
				t.Errorf("%s: %q is required by the decoder but not by the schema", name, f)
			}
			if !info.required && inSchema && info.typ.Kind() != reflect.Pointer {
				t.Errorf("%s: %q is required by the schema but not by the decoder", name, f)
			}
		}
	}
	check("readParams", reflect.TypeFor[readParams](), mustSchema[readParams](t))
	check("nestedParams", reflect.TypeFor[nestedParams](), mustSchema[nestedParams](t))
	check("embeddedParams", reflect.TypeFor[embeddedParams](), mustSchema[embeddedParams](t))
}

func BenchmarkDecodeStrict(b *testing.B) {
	type params struct {
		Path   string `json:"path"`
		Offset int    `json:"offset,omitempty"`
		Limit  int    `json:"limit,omitempty"`
	}
	raw := []byte(`{"path":"notes/small.txt","offset":3}`)
	b.ReportAllocs()
	for b.Loop() {
		var p params
		if err := DecodeStrict(raw, &p, DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}
