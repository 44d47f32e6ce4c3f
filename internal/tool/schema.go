package tool

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFor generates the JSON schema of a params struct from its json tags
// and `jsonschema:"description"` tags. Unknown fields are closed off
// (additionalProperties: false, which jsonschema-go sets on every struct) so
// the model sees the same rule the strict decoder enforces; for the same
// reason a slice that is not behind a pointer is "array", not
// ["null", "array"] as jsonschema-go has it, since DecodeStrict rejects null
// there.
func SchemaFor[P any]() (json.RawMessage, error) {
	s, err := jsonschema.For[P](nil)
	if err != nil {
		return nil, fmt.Errorf("infer schema: %w", err)
	}
	nonNullSlices(reflect.TypeFor[P](), s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	out, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return out, nil
}

// nonNullSlices walks the Go type alongside its schema and narrows the
// schema of each slice not behind a pointer to "array".
func nonNullSlices(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	pointer := false
	for t.Kind() == reflect.Pointer {
		t, pointer = t.Elem(), true
	}
	switch t.Kind() {
	case reflect.Slice:
		if !pointer && slices.Equal(s.Types, []string{"null", "array"}) {
			s.Type, s.Types = "array", nil
		}
		nonNullSlices(t.Elem(), s.Items)
	case reflect.Array:
		nonNullSlices(t.Elem(), s.Items)
	case reflect.Map:
		nonNullSlices(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for name, f := range fields(t) {
			nonNullSlices(f.typ, s.Properties[name])
		}
	}
}
