package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestTaskAddCeiling: --ceiling as a person types it. A bad value is a
// usage error (exit 2) naming --ceiling and nothing is stored; a good one
// is sealed in the body and shown by add, show and --json; without it the
// ceiling is the lowest covering --tools; one below the tools is added
// with a warning on stderr.
func TestTaskAddCeiling(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	_, homard := taskHome(t, srv)
	for _, bad := range []string{"everything", "READ", "write:a.example", "network:*.com", "network:https://a.example", ""} {
		code, out, stderr := homard("", "task", "add", "w", "--every", "1h", "--ceiling", bad, "Check the weather")
		if code != exitUsage || !strings.Contains(stderr, "--ceiling") || out != "" {
			t.Errorf("task add --ceiling %q = exit %d, stdout %q, stderr %q; want 2 naming --ceiling", bad, code, out, stderr)
		}
	}
	if list := decodeArray[taskJSON](t, "task list", mustRun(t, homard, "", "task", "list", "--json")); len(list) != 0 {
		t.Fatalf("refused adds stored %d tasks", len(list))
	}
	for _, tc := range []struct {
		args []string
		want string
		warn string
	}{
		{[]string{"--tools", "read_file,current_time"}, "read", ""},
		{[]string{"--tools", "read_file,write_file"}, "write", ""},
		{[]string{"--tools", "read_file,http_get"}, "network", ""},
		{[]string{"--tools", "http_get", "--ceiling", "network:status.example.com,*.weather.example"}, "network:*.weather.example,status.example.com", ""},
		{[]string{"--tools", "read_file,write_file", "--ceiling", "read"}, "read", "write_file (write)"},
	} {
		code, out, stderr := homard("", append(append([]string{"task", "add", "w", "--every", "1h"}, tc.args...), "--json", "Check the weather")...)
		if code != 0 {
			t.Fatalf("task add %v: exit %d: %s", tc.args, code, stderr)
		}
		got := decodeStrict[taskJSON](t, "task add", []byte(out))
		var body struct {
			Ceiling string `json:"ceiling"`
		}
		if err := json.Unmarshal(got.Body, &body); err != nil || body.Ceiling != tc.want || got.Ceiling != tc.want {
			t.Errorf("task add %v: ceiling %q, body ceiling %q (%v); want %q in both", tc.args, got.Ceiling, body.Ceiling, err, tc.want)
		}
		if tc.warn == "" && stderr != "" || tc.warn != "" && !(strings.Contains(stderr, "warning:") && strings.Contains(stderr, tc.warn)) {
			t.Errorf("task add %v: stderr %q; want a warning naming %q: %v", tc.args, stderr, tc.warn, tc.warn != "")
		}
		if show := mustRun(t, homard, "", "task", "show", got.ID); !strings.Contains(show, "ceiling   "+tc.want+"\n") || !strings.Contains(show, `"ceiling": "`+tc.want+`"`) {
			t.Errorf("task show %s = %q; want the ceiling line and the ceiling in the body", got.ID, show)
		}
	}
	if out := mustRun(t, homard, "", "task", "add", "x", "--every", "1h", "--tools", "read_file", "Check the weather"); !strings.Contains(out, "ceiling   read\n") {
		t.Errorf("task add = %q; want a ceiling line", out)
	}
}
