package tool

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFor generates the JSON schema of a params struct from its json tags
// and `jsonschema:"description"` tags. Unknown fields are closed off
// (additionalProperties: false) so the model sees the same rule the strict
// decoder enforces.
func SchemaFor[P any]() (json.RawMessage, error) {
	s, err := jsonschema.For[P](nil)
	if err != nil {
		return nil, fmt.Errorf("infer schema: %w", err)
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	out, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return out, nil
}
