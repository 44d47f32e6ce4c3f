package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCompileSchemaRefuses: a schema homard cannot check completely and
// safely is refused with a reason; each has a twin that compiles.
func TestCompileSchemaRefuses(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		want         string // a substring of the error; "" compiles
	}{
		{"object", `{"type":"object","properties":{"text":{"type":"string"}}}`, ""},
		{"null", `null`, "not a JSON object"},
		{"true", `true`, "not a JSON object"},
		{"array", `[]`, "not a JSON object"},
		{"draft 2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`, "draft 2020-12 and draft-07"},
		{"draft 2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, ""},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/a"}}}`, ""},
		{"ref to itself", `{"$ref":"#"}`, "refers back to itself"},
		{"ref to itself through allOf", `{"type":"object","allOf":[{"$ref":"#"}]}`, "refers back to itself"},
		{"ref to itself through not", `{"type":"object","not":{"$ref":"#"}}`, "refers back to itself"},
		{"cycle of definitions", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, "refers back to itself"},
		{"cycle through if", `{"$defs":{"a":{"if":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`, "refers back to itself"},
		// The twins: a reference that descends into the value ends.
		{"recursion through properties", `{"type":"object","properties":{"a":{"$ref":"#"}}}`, ""},
		{"tree", `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`, ""},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, `homard follows only "#"`},
		{"deep pointer", `{"type":"object","properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, `homard follows only "#"`},
		{"anchor", `{"type":"object","properties":{"a":{"$anchor":"x"},"b":{"$ref":"#x"}}}`, `homard follows only "#"`},
		{"missing definition", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`, "names no definition"},
		{"dynamic ref", `{"type":"object","properties":{"a":{"$dynamicRef":"#x"}}}`, "$dynamicRef"},
		{"nested id", `{"type":"object","properties":{"a":{"$id":"https://example.com/a"}}}`, "$id"},
		{"root id", `{"$id":"https://example.com/s","type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`, ""},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, "cannot be resolved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CompileSchema(json.RawMessage(c.schema))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CompileSchema(%s) = %v; want it compiled", c.schema, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CompileSchema(%s) = %v; want an error with %q", c.schema, err, c.want)
			}
		})
	}
}

// TestSchemaCheck: only declared names, whatever additionalProperties
// says, and values valid against the schema; each refusal has a twin
// that passes.
func TestSchemaCheck(t *testing.T) {
	const echo = `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","minimum":1}},"required":["text"]}`
	for _, c := range []struct {
		name, schema, args string
		want               string // a substring of the error; "" passes
	}{
		{"declared", echo, `{"text":"hi","n":2}`, ""},
		{"undeclared", echo, `{"text":"hi","cc":"x@example.com"}`, `argument "cc" is not declared in the tool's input schema`},
		{"undeclared names the declared", echo, `{"text":"hi","a":1,"b":2}`, `arguments "a", "b" are not declared in the tool's input schema, and homard sends a server only declared arguments; it takes only "n", "text"`},
		{"additionalProperties true", `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":true}`, `{"text":"hi","cc":"x"}`, `argument "cc" is not declared`},
		{"additionalProperties true, declared only", `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":true}`, `{"text":"hi"}`, ""},
		{"wrong type", echo, `{"text":3}`, `/properties/text: type: 3 has type "integer", want "string"`},
		{"missing required", echo, `{"n":2}`, `required: missing properties: ["text"]`},
		{"below minimum", echo, `{"text":"hi","n":0}`, `/properties/n: minimum`},
		{"empty arguments", `{"type":"object"}`, ``, ""},
		{"no properties", `{"type":"object"}`, `{}`, ""},
		{"no properties, an argument", `{"type":"object"}`, `{"a":1}`, `it takes no arguments: call it with {}`},
		{"empty properties, an argument", `{"type":"object","properties":{},"additionalProperties":{}}`, `{"a":1}`, ""},
		{"explicitly open", `{"type":"object","additionalProperties":true}`, `{"a":1,"b":"x"}`, ""},
		{"open map of strings", `{"type":"object","additionalProperties":{"type":"string"}}`, `{"a":"x"}`, ""},
		{"open map of strings, a number", `{"type":"object","additionalProperties":{"type":"string"}}`, `{"a":1}`, `want "string"`},
		{"closed", `{"type":"object","additionalProperties":false}`, `{"a":1}`, `it takes no arguments`},
		{"patternProperties only", `{"type":"object","patternProperties":{"^x":{}},"additionalProperties":true}`, `{"x1":1}`, `argument "x1" is not declared`},
		{"patternProperties only, empty", `{"type":"object","patternProperties":{"^x":{}}}`, `{}`, ""},
		{"declared in allOf", `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}}}]}`, `{"a":"x"}`, ""},
		{"declared in allOf, another", `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}}}]}`, `{"b":"x"}`, `argument "b" is not declared`},
		{"declared in a definition", `{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`, `{"a":1}`, ""},
		{"definition's type", `{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`, `{"a":"x"}`, `want "integer"`},
		{"definition, undeclared", `{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"a":{"type":"integer"}}}}}`, `{"a":1,"b":2}`, `argument "b" is not declared`},
		{"draft-07 ignores a $ref's siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/A","properties":{"z":{}},"definitions":{"A":{"type":"object","properties":{"a":{}}}}}`, `{"z":1}`, `argument "z" is not declared`},
		{"draft-07 follows the $ref", `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/A","properties":{"z":{}},"definitions":{"A":{"type":"object","properties":{"a":{}}}}}`, `{"a":1}`, ""},
		{"a name under not is not declared", `{"type":"object","properties":{"a":{}},"not":{"properties":{"b":{}},"required":["b"]}}`, `{"b":1}`, `argument "b" is not declared`},
		{"nested values are checked", `{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"enum":["x","y"]}}}}}`, `{"o":{"k":"z"}}`, `enum`},
		{"nested values, valid", `{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"enum":["x","y"]}}}}}`, `{"o":{"k":"y"}}`, ""},
		{"recursive tree", `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`, `{"root":{"name":"a","children":[{"name":"b","children":[{"name":3}]}]}}`, `want "string"`},
		{"not an object", echo, `["x"]`, "must be a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := CompileSchema(json.RawMessage(c.schema))
			if err != nil {
				t.Fatalf("CompileSchema(%s): %v", c.schema, err)
			}
			err = s.Check(json.RawMessage(c.args))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check(%s) against %s = %v; want it accepted", c.args, c.schema, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Check(%s) against %s = %v; want an error with %q", c.args, c.schema, err, c.want)
			}
		})
	}
}

// TestSchemaCheckIsBounded: a refusal stays short however long the
// value the library quotes, or however many names are undeclared.
func TestSchemaCheckIsBounded(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"k":{"enum":["x"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	long, _ := json.Marshal(map[string]string{"k": strings.Repeat("y", 100_000)})
	err = s.Check(long)
	if err == nil || len(err.Error()) > maxCheckReason+200 || !strings.HasSuffix(err.Error(), " …") {
		t.Errorf("Check of a 100 kB value: %d bytes of error; want one cut near %d bytes", len(err.Error()), maxCheckReason)
	}
	many := map[string]int{}
	for i := range 500 {
		many[strings.Repeat("n", 1+i%200)+string(rune('a'+i%26))] = i
	}
	b, _ := json.Marshal(many)
	err = s.Check(b)
	if err == nil || len(err.Error()) > 2000 || !strings.Contains(err.Error(), "more") {
		t.Errorf("Check of 500 undeclared names = %d bytes; want a short error naming a few and counting the rest", len(err.Error()))
	}
}

// TestListingRefusesUncheckableSchema: a tool whose schema cannot be
// checked is refused in the listing, saying why; its twin is offered.
func TestListingRefusesUncheckableSchema(t *testing.T) {
	l := buildListing("srv", nil, []*sdk.Tool{
		{Name: "loop", InputSchema: json.RawMessage(`{"type":"object","allOf":[{"$ref":"#"}]}`)},
		{Name: "remote", InputSchema: json.RawMessage(`{"$ref":"https://example.com/s.json"}`)},
		{Name: "none"},
		{Name: "ok", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#"}}}`)},
	}, "")
	var offered []string
	for _, tl := range l.Offered() {
		offered = append(offered, tl.Name)
	}
	if !slices.Equal(offered, []string{"ok"}) {
		t.Errorf("offered %v; want only ok", offered)
	}
	for _, tl := range l.Tools {
		if tl.Name != "ok" && !strings.HasPrefix(tl.Refused, "homard cannot check arguments against its input schema: ") {
			t.Errorf("%s refused %q; want it refused for its schema", tl.Name, tl.Refused)
		}
	}
}

// FuzzSchemaCheck: whatever the schema and the arguments, compiling and
// checking return (no panic, no endless recursion), and arguments that
// pass use only declared names unless the schema is open.
func FuzzSchemaCheck(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":"hi"}`},
		{`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"a":{"a":{}}}`},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `{}`},
		{`{"type":"object","additionalProperties":true}`, `{"x":1}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/A","definitions":{"A":{"properties":{"a":{}}}}}`, `{"a":1,"b":2}`},
		{`{"type":"object","patternProperties":{"^x":{}},"dependentSchemas":{"x":{"$ref":"#"}}}`, `{"x":1}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		s, err := CompileSchema(json.RawMessage(schema))
		if err != nil {
			return
		}
		if s.Check(json.RawMessage(args)) != nil || s.open {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) != nil {
			return // "" is {}
		}
		for name := range obj {
			if !slices.Contains(s.declared, name) {
				t.Fatalf("Check(%s) against %s passed with %q, which it does not declare (%v)", args, schema, name, s.declared)
			}
		}
	})
}
