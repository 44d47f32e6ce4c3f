package tools

import (
	"encoding/json"
	"github.com/homard/homard/internal/changeset"
	"strings"
	"testing"

	"github.com/homard/homard/internal/tool"
)

func TestCurrentTime(t *testing.T) {
	e := newEnv(t)
	for _, raw := range []string{``, `{}`} {
		res := e.call(t, "current_time", raw)
		want := "2025-01-02T03:04:05+01:00 (Thursday; time zone CET, UTC+01:00)"
		if res.IsError || res.Text != want || res.Untrusted {
			t.Errorf("current_time(%q) = %+v; want %q", raw, res, want)
		}
	}
	e.wantDecodeError(t, "current_time", `{"zone":"UTC"}`)
}

func TestFileToolsRegistry(t *testing.T) {
	e := newEnv(t)
	reg, err := tool.NewRegistry(FileTools(changeset.New(e.ws, changeset.Options{}), nil)...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range reg.Specs() {
		names = append(names, s.Name)
		if s.Description == "" || s.Risk == 0 {
			t.Errorf("%s: description %q, risk %v; want both set", s.Name, s.Description, s.Risk)
		}
		var schema struct {
			Type                 string         `json:"type"`
			Properties           map[string]any `json:"properties"`
			AdditionalProperties any            `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Schema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: schema %s (%v); want an object schema", s.Name, s.Schema, err)
		}
	}
	want := "current_time edit_file glob grep list_dir read_file write_file"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools = %q; want %q", got, want)
	}
	rf, _ := reg.Lookup("read_file")
	var schema struct {
		Required   []string                     `json:"required"`
		Properties map[string]map[string]string `json:"properties"`
	}
	json.Unmarshal(rf.Spec().Schema, &schema)
	if len(schema.Required) != 1 || schema.Required[0] != "path" || schema.Properties["offset"]["description"] == "" {
		t.Errorf("read_file schema = %s; want path required and described fields", rf.Spec().Schema)
	}
}
