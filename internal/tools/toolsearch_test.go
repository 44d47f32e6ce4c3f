package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/tool"
)

func searchCatalog() []tool.Spec {
	specs := []tool.Spec{
		{Name: "mcp__fs__write_file", Description: "Write text to a file.", Schema: json.RawMessage(`{"type":"object"}`)},
		{Name: "mcp__fs__read_file", Description: "Read a file's text.", Schema: json.RawMessage(`{"type":"object"}`)},
		{Name: "mcp__cal__events", Description: "List calendar events; can write a note to an event.", Schema: json.RawMessage(`{"type":"object"}`)},
		{Name: "mcp__mail__send", Description: "Send an email.", Schema: json.RawMessage(`{"type":"object"}`)},
	}
	for i := range 12 {
		specs = append(specs, tool.Spec{Name: fmt.Sprintf("mcp__db__lookup_%02d", i), Description: "Look up a record.", Schema: json.RawMessage(`{}`)})
	}
	return specs
}

// TestSearchTools: names weigh more than descriptions, ties go by name,
// nothing that does not match is returned, and at most limit are.
func TestSearchTools(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"write a file", []string{"mcp__fs__write_file", "mcp__fs__read_file", "mcp__cal__events"}},
		{"WRITE", []string{"mcp__fs__write_file", "mcp__cal__events"}},
		{"email", []string{"mcp__mail__send"}},
		{"mail", []string{"mcp__mail__send"}},
		{"calendar", []string{"mcp__cal__events"}},
		{"quantum", nil},
		{"record", []string{"mcp__db__lookup_00", "mcp__db__lookup_01", "mcp__db__lookup_02", "mcp__db__lookup_03", "mcp__db__lookup_04", "mcp__db__lookup_05", "mcp__db__lookup_06", "mcp__db__lookup_07"}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range SearchTools(searchCatalog(), tt.query, 8) {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("SearchTools(%q) = %v; want %v", tt.query, got, tt.want)
		}
	}
}

// TestToolSearchResult: the result lists name, description and schema of
// each match as untrusted text; a query without words is an argument
// error.
func TestToolSearchResult(t *testing.T) {
	ts := NewToolSearch(searchCatalog())
	params, err := ts.Decode([]byte(`{"query":"send email"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ts.Prepare(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Untrusted || !strings.Contains(res.Text, "name: mcp__mail__send\ndescription: Send an email.\ninput_schema: {\"type\":\"object\"}") {
		t.Errorf("tool_search result (untrusted %t):\n%s\nwant mail's name, description and schema, untrusted", res.Untrusted, res.Text)
	}
	params, _ = ts.Decode([]byte(`{"query":" -- "}`))
	var bad *tool.ArgError
	if _, err := ts.Prepare(context.Background(), params); !errors.As(err, &bad) {
		t.Errorf("tool_search with no words: %v; want an argument error", err)
	}
}

// TestDecodeCallTool: the name and the arguments' own bytes; anything
// else is an argument error.
func TestDecodeCallTool(t *testing.T) {
	tests := []struct {
		raw, name, args string
		ok              bool
	}{
		{`{"name":"mcp__a__b","arguments":{"n":1.50,"s":"x"}}`, "mcp__a__b", `{"n":1.50,"s":"x"}`, true},
		{`{"name":"mcp__a__b"}`, "mcp__a__b", `{}`, true},
		{`{"name":"mcp__a__b","arguments":null}`, "", "", false},
		{`{"name":"mcp__a__b","arguments":["x"]}`, "", "", false},
		{`{"name":"mcp__a__b","arguments":"x"}`, "", "", false},
		{`{"arguments":{}}`, "", "", false},
		{`{"name":"a","name":"b"}`, "", "", false},
		{`{"name":"a","extra":1}`, "", "", false},
	}
	for _, tt := range tests {
		name, args, err := DecodeCallTool([]byte(tt.raw))
		if (err == nil) != tt.ok || name != tt.name || string(args) != tt.args {
			t.Errorf("DecodeCallTool(%s) = %q, %s, %v; want %q, %s, ok %t", tt.raw, name, args, err, tt.name, tt.args, tt.ok)
		}
		if err != nil && !errors.Is(err, tool.ErrArguments) {
			t.Errorf("DecodeCallTool(%s): %v; want an argument error", tt.raw, err)
		}
	}
}
