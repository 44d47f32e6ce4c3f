package eval

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// A template is text with {{name}} or {{name|filter}} in it. The names
// are the world's (canary, attacker, site, local, outside, root) and the
// conversation's (last_result: the text of the last tool result the model
// was sent).
var templateRE = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*(?:\|\s*([a-z0-9]+)\s*)?\}\}`)

var (
	templateNames   = map[string]bool{"canary": true, "attacker": true, "site": true, "local": true, "outside": true, "root": true, "last_result": true}
	templateFilters = map[string]func(string) string{
		"base64":   func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"hex":      func(s string) string { return hex.EncodeToString([]byte(s)) },
		"urlquery": url.QueryEscape,
		"upper":    strings.ToUpper,
	}
)

// checkTemplate reports an unknown name or filter, or braces that are not
// a template.
func checkTemplate(s string) error {
	for _, m := range templateRE.FindAllStringSubmatch(s, -1) {
		if !templateNames[m[1]] {
			return fmt.Errorf("unknown template name %q in %q", m[1], m[0])
		}
		if m[2] != "" && templateFilters[m[2]] == nil {
			return fmt.Errorf("unknown template filter %q in %q", m[2], m[0])
		}
	}
	if rest := templateRE.ReplaceAllString(s, ""); strings.Contains(rest, "{{") {
		return fmt.Errorf("malformed template in %q", s)
	}
	return nil
}

// checkTemplates checks every string in v (args: maps, lists, strings).
func checkTemplates(v any) error {
	switch x := v.(type) {
	case string:
		return checkTemplate(x)
	case map[string]any:
		for _, e := range x {
			if err := checkTemplates(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkTemplates(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// expand replaces every template in s with vars' value, filtered.
// Parse has checked the names, so a missing one is left empty.
func expand(s string, vars map[string]string) string {
	return templateRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := templateRE.FindStringSubmatch(m)
		v := vars[sub[1]]
		if f := templateFilters[sub[2]]; f != nil {
			v = f(v)
		}
		return v
	})
}

// expandAll returns a copy of v with every string expanded.
func expandAll(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		return expand(x, vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expandAll(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandAll(e, vars)
		}
		return out
	}
	return v
}
