package tool

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

type describedParams struct {
	Path    string   `json:"path" jsonschema:"file path relative to the workspace root"`
	Lines   int      `json:"lines,omitempty" jsonschema:"how many lines to read"`
	Tags    []string `json:"tags,omitzero"`
	Force   bool     `json:"force"`
	Ratio   float64  `json:"ratio,omitempty"`
	Options options  `json:"options"`
}

// schemaDoc is the part of a JSON schema these tests read.
type schemaDoc struct {
	Type                 string               `json:"type"`
	Properties           map[string]schemaDoc `json:"properties"`
	Required             []string             `json:"required"`
	AdditionalProperties any                  `json:"additionalProperties"`
	Description          string               `json:"description"`
	Items                *schemaDoc           `json:"items"`
	Types                []string             `json:"-"`
}

func (s *schemaDoc) UnmarshalJSON(b []byte) error {
	if string(b) == "true" || string(b) == "false" { // a boolean schema
		*s = schemaDoc{}
		return nil
	}
	type plain schemaDoc
	var aux struct {
		plain
		Type any `json:"type"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*s = schemaDoc(aux.plain)
	switch v := aux.Type.(type) {
	case string:
		s.Type, s.Types = v, []string{v}
	case []any:
		for _, t := range v {
			if ts, ok := t.(string); ok {
				s.Types = append(s.Types, ts)
				if ts != "null" {
					s.Type = ts
				}
			}
		}
	}
	return nil
}

func mustSchema[P any](t *testing.T) json.RawMessage {
	t.Helper()
	raw, err := SchemaFor[P]()
	if err != nil {
		t.Fatalf("SchemaFor[%T]: %v", *new(P), err)
	}
	return raw
}

func mustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("unmarshal %s: %v", raw, err)
	}
}

func TestSchemaFor(t *testing.T) {
	var s schemaDoc
	mustUnmarshal(t, mustSchema[describedParams](t), &s)
	if s.Type != "object" {
		t.Errorf("type = %q; want object", s.Type)
	}
	if s.AdditionalProperties != false {
		t.Errorf("additionalProperties = %v; want false (the strict decoder rejects unknown fields)", s.AdditionalProperties)
	}
	req := slices.Clone(s.Required)
	slices.Sort(req)
	if want := []string{"force", "options", "path"}; !slices.Equal(req, want) {
		t.Errorf("required = %v; want %v", req, want)
	}
	wantTypes := map[string]string{"path": "string", "lines": "integer", "tags": "array", "force": "boolean", "ratio": "number", "options": "object"}
	if len(s.Properties) != len(wantTypes) {
		t.Errorf("properties = %v; want exactly %v", s.Properties, wantTypes)
	}
	for name, typ := range wantTypes {
		if got := s.Properties[name].Type; got != typ {
			t.Errorf("properties.%s.type = %q; want %q", name, got, typ)
		}
	}
	if got := s.Properties["path"].Description; got != "file path relative to the workspace root" {
		t.Errorf("properties.path.description = %q", got)
	}
	if items := s.Properties["tags"].Items; items == nil || items.Type != "string" {
		t.Errorf("properties.tags.items = %+v; want type string", items)
	}
	nested := s.Properties["options"]
	if nested.AdditionalProperties != false {
		t.Errorf("nested object additionalProperties = %v; want false", nested.AdditionalProperties)
	}
	if !slices.Equal(nested.Required, []string{"verbose"}) {
		t.Errorf("nested required = %v; want [verbose]", nested.Required)
	}
}

func TestSchemaForNestedSliceOfStructs(t *testing.T) {
	var s schemaDoc
	mustUnmarshal(t, mustSchema[nestedParams](t), &s)
	it := s.Properties["items"].Items
	if it == nil || it.Type != "object" || it.AdditionalProperties != false {
		t.Fatalf("items.items = %+v; want a closed object", it)
	}
	if !slices.Equal(it.Required, []string{"id"}) {
		t.Errorf("items.items.required = %v; want [id]", it.Required)
	}
	// DecodeStrict rejects null for a slice and accepts it for a pointer;
	// the schema must say the same.
	for name, want := range map[string][]string{
		"items": {"array"},
		"note":  {"null", "string"},
		"flags": {"array"},
	} {
		if got := s.Properties[name].Types; !slices.Equal(got, want) {
			t.Errorf("properties.%s.type = %v; want %v", name, got, want)
		}
	}
	if got := it.Properties["tag"].Types; !slices.Equal(got, []string{"array"}) {
		t.Errorf("items.items.properties.tag.type = %v; want [array]", got)
	}
	if got := s.Properties["labels"].AdditionalProperties; !reflect.DeepEqual(got, map[string]any{"type": "string"}) {
		t.Errorf("properties.labels.additionalProperties = %#v; want {type: string}", got)
	}
}

func TestSchemaForPointerToSliceAllowsNull(t *testing.T) {
	var s schemaDoc
	mustUnmarshal(t, mustSchema[struct {
		P *[]string           `json:"p"`
		M map[string][]int    `json:"m"`
		A [2][]string         `json:"a"`
		N []map[string][]bool `json:"n"`
	}](t), &s)
	if got := s.Properties["p"].Types; !slices.Equal(got, []string{"null", "array"}) {
		t.Errorf("*[]string type = %v; want [null array]", got)
	}
	if got := s.Properties["a"].Items.Types; !slices.Equal(got, []string{"array"}) {
		t.Errorf("[2][]string items type = %v; want [array]", got)
	}
	raw := mustSchema[struct {
		M map[string][]int    `json:"m"`
		N []map[string][]bool `json:"n"`
	}](t)
	var m map[string]any
	mustUnmarshal(t, raw, &m)
	mv := m["properties"].(map[string]any)["m"].(map[string]any)["additionalProperties"].(map[string]any)["type"]
	if mv != "array" {
		t.Errorf("map[string][]int value type = %#v; want array", mv)
	}
	nv := m["properties"].(map[string]any)["n"].(map[string]any)["items"].(map[string]any)["additionalProperties"].(map[string]any)["type"]
	if nv != "array" {
		t.Errorf("[]map[string][]bool value type = %#v; want array", nv)
	}
}

// TestSchemaForNoParams: a tool without parameters still gets an object
// schema with an (empty) properties member, which some model APIs require.
func TestSchemaForNoParams(t *testing.T) {
	raw := mustSchema[noParams](t)
	var m map[string]any
	mustUnmarshal(t, raw, &m)
	props, ok := m["properties"].(map[string]any)
	if !ok || len(props) != 0 {
		t.Errorf("properties = %#v; want {}", m["properties"])
	}
	if m["additionalProperties"] != false {
		t.Errorf("additionalProperties = %#v; want false", m["additionalProperties"])
	}
	if m["type"] != "object" {
		t.Errorf("type = %#v; want object", m["type"])
	}
}

func TestSchemaForIsStable(t *testing.T) {
	a, b := mustSchema[describedParams](t), mustSchema[describedParams](t)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("SchemaFor is not deterministic:\n%s\n%s", a, b)
	}
}

func TestSchemaForRejectsUnsupportedTypes(t *testing.T) {
	if _, err := SchemaFor[struct {
		F func() `json:"f"`
	}](); err == nil {
		t.Error("SchemaFor of a func field succeeded; want an error")
	}
}
