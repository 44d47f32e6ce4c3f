package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a tool's input schema compiled to check a call's arguments
// before homard plans the call. The caller compiles the schema it pinned
// (the listing the owner trusted), never one the server sends later. A
// Schema is immutable and safe for concurrent use.
//
// Check is stricter than the schema in one way: an argument is accepted
// only under a name the schema declares in "properties" (of the schema
// itself or of a subschema that applies to the whole object: $ref, allOf,
// anyOf, oneOf, if/then/else, dependentSchemas), even where
// additionalProperties leaves other names open or says nothing. The owner
// trusted the names the schema shows; a name it does not show is an
// argument nobody reviewed. A schema that declares no name accepts only
// {} — unless it has no patternProperties and opens every name in so
// many words, with additionalProperties present and not false: such a
// tool takes a free-form map by design (its values are still checked
// against additionalProperties). patternProperties alone declares no
// name: a pattern is not a name the owner could read. Everything else
// fails closed: a schema homard cannot check completely is refused
// (CompileSchema's errors), so its tool is not offered. Keywords the
// library does not know, and "format", constrain nothing (they are
// annotations). What checking costs is bounded by the arguments' own
// limits (tool.DefaultLimits) and the schema's size, not otherwise: a
// schema built to branch on every level (anyOf through $ref) can make a
// check slow, as it could make the server's own; it is the owner-trusted
// schema, shown at trust time.
type Schema struct {
	resolved *jsonschema.Resolved
	declared []string // the declared names, sorted
	open     bool     // no name declared and additionalProperties open
}

// Bounds on what Check reports, so a refusal stays short for the model.
const (
	maxNamesShown  = 20   // declared names listed in a refusal
	maxCheckReason = 1024 // bytes of the schema library's message
)

// Versions of JSON Schema the library validates ($schema); a schema
// naming another draft is refused rather than checked under the wrong
// rules.
var schemaVersions = []string{
	"",
	"https://json-schema.org/draft/2020-12/schema",
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema#",
}

// CompileSchema compiles a tool's input schema (Tool.InputSchema). It
// refuses what it cannot check completely and safely: a schema that is
// not a JSON object, a $schema draft other than 2020-12 or draft-07, a
// $ref that is not "#" or "#/$defs/NAME" (or "#/definitions/NAME"), a
// $dynamicRef, an $id below the root, and a cycle of references that
// never descends into the arguments ({"$ref":"#"}), on which the
// library would recurse until the process dies.
func CompileSchema(raw json.RawMessage) (s *Schema, err error) {
	// The schema is the server's: the library must not take homard down
	// with it. A panic is a schema homard cannot check.
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("the schema library failed on it: %v", p)
		}
	}()
	raw = bytes.TrimSpace(raw)
	var top map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &top) != nil {
		return nil, errors.New("it is not a JSON object")
	}
	root := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, root); err != nil {
		return nil, fmt.Errorf("it is not a JSON schema: %v", err)
	}
	if !slices.Contains(schemaVersions, root.Schema) {
		return nil, fmt.Errorf("it uses $schema %q; homard checks draft 2020-12 and draft-07 schemas", root.Schema)
	}
	g := &refGraph{root: root, draft7: strings.Contains(root.Schema, "draft-07"), target: map[*jsonschema.Schema]*jsonschema.Schema{}}
	if err := g.check(); err != nil {
		return nil, err
	}
	resolved, err := root.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("it cannot be resolved: %v", err)
	}
	out := &Schema{resolved: resolved, declared: g.declared()}
	if len(out.declared) == 0 && len(root.PatternProperties) == 0 {
		ap, ok := top["additionalProperties"]
		out.open = ok && string(bytes.TrimSpace(ap)) != "false"
	}
	return out, nil
}

// Check reports whether args (a JSON object) may be sent to the tool: every
// name declared (see Schema) and the whole valid against the schema. Its
// error is written for the model: which argument, and what was expected.
func (s *Schema) Check(args json.RawMessage) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("homard could not check the arguments against the tool's input schema (%v); the call is refused", p)
		}
	}()
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("the arguments are not JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return errors.New("the arguments must be a JSON object")
	}
	if !s.open {
		var extra []string
		for name := range obj {
			if _, found := slices.BinarySearch(s.declared, name); !found {
				extra = append(extra, name)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return s.undeclared(extra)
		}
	}
	if err := s.resolved.Validate(v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		if len(msg) > maxCheckReason {
			msg = capText(msg, maxCheckReason) + " …"
		}
		return fmt.Errorf("the arguments do not match the tool's input schema: %s", msg)
	}
	return nil
}

// undeclared is Check's refusal of names the schema does not declare.
func (s *Schema) undeclared(extra []string) error {
	what := "argument " + quoteNames(extra, maxNamesShown) + " is"
	if len(extra) > 1 {
		what = "arguments " + quoteNames(extra, maxNamesShown) + " are"
	}
	takes := "it takes no arguments: call it with {}"
	if len(s.declared) > 0 {
		takes = "it takes only " + quoteNames(s.declared, maxNamesShown) + ": call it again without the others"
	}
	return fmt.Errorf("%s not declared in the tool's input schema, and homard sends a server only declared arguments; %s", what, takes)
}

// quoteNames lists names quoted, at most n of them.
func quoteNames(names []string, n int) string {
	var b strings.Builder
	for i, name := range names {
		if i == n {
			fmt.Fprintf(&b, " and %d more", len(names)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(fmt.Sprintf("%q", capText(name, 64)))
	}
	return b.String()
}

// refGraph checks a schema's references before the library sees them.
// Only references to the root or to one of its $defs (definitions) are
// allowed, so every target is known here; the in-place subschemas (those
// applied to the same value: $ref, allOf, anyOf, oneOf, not, if, then,
// else, dependentSchemas) must then form no cycle, since following one
// never reaches a smaller value and the library's recursion would not end.
type refGraph struct {
	root   *jsonschema.Schema
	draft7 bool // a $ref's siblings are ignored (draft-07 §8.3)
	// target maps each schema with a $ref to the schema it names.
	target map[*jsonschema.Schema]*jsonschema.Schema
}

func (g *refGraph) check() error {
	var err error
	walkSchema(g.root, func(s *jsonschema.Schema) bool {
		switch {
		case s.DynamicRef != "":
			err = fmt.Errorf("it uses $dynamicRef %q, which homard does not follow", s.DynamicRef)
		case s.ID != "" && s != g.root:
			err = fmt.Errorf("it sets $id %q below the root, which homard does not follow", s.ID)
		case s.Ref != "":
			var t *jsonschema.Schema
			if t, err = g.lookup(s.Ref); err == nil {
				g.target[s] = t
			}
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	// Depth-first search for a cycle of in-place edges.
	const (
		seen = 1 + iota
		done
	)
	state := map[*jsonschema.Schema]int{}
	var visit func(s *jsonschema.Schema) error
	visit = func(s *jsonschema.Schema) error {
		switch state[s] {
		case seen:
			return errors.New("its $ref refers back to itself without descending into the arguments (a cycle such as {\"$ref\":\"#\"}), which homard cannot check")
		case done:
			return nil
		}
		state[s] = seen
		for _, c := range g.inPlace(s, true) {
			if err := visit(c); err != nil {
				return err
			}
		}
		state[s] = done
		return nil
	}
	walkSchema(g.root, func(s *jsonschema.Schema) bool {
		err = visit(s)
		return err == nil
	})
	return err
}

// lookup returns the schema a $ref names: "#" or "#/$defs/NAME" or
// "#/definitions/NAME" of the root, the forms a tool's schema needs.
func (g *refGraph) lookup(ref string) (*jsonschema.Schema, error) {
	bad := func() (*jsonschema.Schema, error) {
		return nil, fmt.Errorf("it uses $ref %q; homard follows only \"#\", \"#/$defs/NAME\" and \"#/definitions/NAME\"", ref)
	}
	u, err := url.Parse(ref)
	if err != nil || !strings.HasPrefix(ref, "#") {
		return bad()
	}
	if u.Fragment == "" {
		return g.root, nil
	}
	var defs map[string]*jsonschema.Schema
	name, ok := strings.CutPrefix(u.Fragment, "/$defs/")
	if ok {
		defs = g.root.Defs
	} else if name, ok = strings.CutPrefix(u.Fragment, "/definitions/"); ok {
		defs = g.root.Definitions
	}
	if !ok || strings.Contains(name, "/") {
		return bad()
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	t := defs[name]
	if t == nil {
		return nil, fmt.Errorf("its $ref %q names no definition", ref)
	}
	return t, nil
}

// inPlace returns the subschemas applied to the same value as s: its $ref
// target and, unless draft-07 ignores them beside a $ref, its applicators.
// withNot includes not (a cycle through it recurses like any other; the
// names under it are not declared, they are excluded).
func (g *refGraph) inPlace(s *jsonschema.Schema, withNot bool) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	if t := g.target[s]; t != nil {
		out = append(out, t)
		if g.draft7 {
			return out
		}
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	out = append(out, s.If, s.Then, s.Else)
	if withNot {
		out = append(out, s.Not)
	}
	for _, m := range []map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
		for _, k := range sortedKeys(m) {
			out = append(out, m[k])
		}
	}
	return slices.DeleteFunc(out, func(c *jsonschema.Schema) bool { return c == nil })
}

// declared returns the names in "properties" of the root and of every
// subschema applied in place to the whole arguments object, sorted.
func (g *refGraph) declared() []string {
	var names []string
	seen := map[*jsonschema.Schema]bool{}
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if seen[s] {
			return
		}
		seen[s] = true
		if !(g.draft7 && g.target[s] != nil) {
			for name := range s.Properties {
				names = append(names, name)
			}
		}
		for _, c := range g.inPlace(s, false) {
			visit(c)
		}
	}
	visit(g.root)
	slices.Sort(names)
	return slices.Compact(names)
}

// walkSchema calls f on s and every schema below it, depth first, until f
// returns false. It reaches every child, whatever keyword holds it: the
// fields of jsonschema.Schema that hold schemas, found by their types.
func walkSchema(s *jsonschema.Schema, f func(*jsonschema.Schema) bool) bool {
	if s == nil {
		return true
	}
	if !f(s) {
		return false
	}
	v := reflect.ValueOf(s).Elem()
	for _, idx := range schemaFields() {
		fv := v.FieldByIndex(idx)
		switch c := fv.Interface().(type) {
		case *jsonschema.Schema:
			if !walkSchema(c, f) {
				return false
			}
		case []*jsonschema.Schema:
			for _, e := range c {
				if !walkSchema(e, f) {
					return false
				}
			}
		case map[string]*jsonschema.Schema:
			for _, k := range sortedKeys(c) {
				if !walkSchema(c[k], f) {
					return false
				}
			}
		}
	}
	return true
}

// schemaFields lists the indexes of jsonschema.Schema's fields that hold
// schemas (*Schema, []*Schema, map[string]*Schema).
var schemaFields = sync.OnceValue(func() [][]int {
	var out [][]int
	for _, f := range reflect.VisibleFields(reflect.TypeFor[jsonschema.Schema]()) {
		switch f.Type {
		case reflect.TypeFor[*jsonschema.Schema](), reflect.TypeFor[[]*jsonschema.Schema](), reflect.TypeFor[map[string]*jsonschema.Schema]():
			out = append(out, f.Index)
		}
	}
	return out
})

func sortedKeys(m map[string]*jsonschema.Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
