package main

import (
	"slices"
	"testing"
)

func TestPositionals(t *testing.T) {
	cases := []struct {
		use          string
		req, opt     []string
		wantVariadic bool
	}{
		{"list", nil, nil, false},
		{"show ID", []string{"ID"}, nil, false},
		{`run "TASK"`, []string{"TASK"}, nil, false},
		{"call NAME 'JSON'", []string{"NAME", "JSON"}, nil, false},
		{"set NAME --host HOST", []string{"NAME"}, nil, false},
		{"rollback ID [--hash HASH]", []string{"ID"}, nil, false},
		{"get ID [FIELD]", []string{"ID"}, []string{"FIELD"}, false},
		{"add TEXT...", []string{"TEXT"}, nil, true},
		{"grep --format=json PATTERN", []string{"PATTERN"}, nil, false},
	}
	for _, c := range cases {
		req, opt, variadic := positionals(c.use)
		if !slices.Equal(req, c.req) || !slices.Equal(opt, c.opt) || variadic != c.wantVariadic {
			t.Errorf("positionals(%q) = %q, %q, %v; want %q, %q, %v", c.use, req, opt, variadic, c.req, c.opt, c.wantVariadic)
		}
	}
}
