package tool

import (
	"fmt"
	"slices"
	"strings"
)

// Registry holds the tools one runtime offers, in a fixed order so the tool
// definitions sent to a model are byte-identical from turn to turn.
type Registry struct {
	byName map[string]Tool
	order  []string
}

// NewRegistry builds a registry; duplicate or malformed names are an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]Tool)}
	for _, t := range tools {
		name := t.Spec().Name
		if !validName(name) {
			return nil, fmt.Errorf("registry: invalid tool name %q (want lowercase letters, digits and _)", name)
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("registry: tool %q registered twice", name)
		}
		r.byName[name] = t
		r.order = append(r.order, name)
	}
	slices.Sort(r.order)
	return r, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}) < 0
}

// Lookup finds a tool by exact name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Specs returns every tool's Spec sorted by name.
func (r *Registry) Specs() []Spec {
	out := make([]Spec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byName[n].Spec())
	}
	return out
}
