package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogsShowWhatTheModelGot: after a `homard run`, `homard logs` shows
// one line for the request — the main role, its size, the user message,
// the tools offered — without the message's text (log_model_inputs is
// off), and --json passes the stored line through; a home with no
// requests says so.
func TestLogsShowWhatTheModelGot(t *testing.T) {
	f, srv := newFakeModel(t)
	home, homard := hangHome(t, srv, nil)
	if out, err := homard("logs").CombinedOutput(); err != nil || !strings.Contains(string(out), "no model requests logged yet") {
		t.Fatalf("homard logs before any request: %v\n%s", err, out)
	}
	f.mode.Store("answer")
	const task = "what is the capital of Peru"
	if out, err := homard("run", task).CombinedOutput(); err != nil {
		t.Fatalf("homard run: %v\n%s", err, out)
	}
	<-f.got
	out, err := homard("logs").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "main") || !strings.Contains(string(out), "1 user") || !strings.Contains(string(out), "tools offered") {
		t.Fatalf("homard logs: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "capital of Peru") {
		t.Errorf("the message's text is shown although log_model_inputs is off:\n%s", out)
	}
	out, err = homard("logs", "--json", "-n", "1").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Role     string `json:"role"`
		Bytes    int    `json:"bytes"`
		Messages []struct {
			Role  string `json:"role"`
			Bytes int    `json:"bytes"`
			Text  string `json:"text"`
		} `json:"messages"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal(out, &line); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if line.Role != "main" || len(line.Messages) == 0 || line.Messages[len(line.Messages)-1].Bytes != len(task) || len(line.Tools) == 0 || line.Messages[len(line.Messages)-1].Text != "" {
		t.Errorf("stored line %+v; want the main role, the task's %d bytes, the tools, no text", line, len(task))
	}
	fi, err := os.Stat(filepath.Join(home, "data", "model-requests.jsonl"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the request log: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
}

// TestLogsCountEarlierMessages: a line that sums up the messages an
// earlier line listed (a long session's) is shown with the whole
// request's counts — earlier and listed together — and its earlier calls
// counted before the listed ones' names; a tool name is shown through
// termtext.
func TestLogsCountEarlierMessages(t *testing.T) {
	out := &bytes.Buffer{}
	c := &cli{stdout: out, say: sayFor(nil, func(string) string { return "" })}
	c.printRequest(`{"time":"2026-12-07T01:00:00Z","role":"main","model":"m","bytes":900,"system_bytes":10,`+
		`"earlier":{"messages":40,"bytes":800,"user":14,"assistant":13,"tool":13,"calls":13},`+
		`"messages":[{"role":"assistant","bytes":20,"calls":["read_file\u001b[2J"]},{"role":"tool","bytes":70,"answers":"c9"}],"tools":["read_file"]}`, false)
	got := out.String()
	for _, want := range []string{"42 messages (14 user, 14 assistant, 14 tool)", "calls so far: 13 earlier, read_file\\x1b[2J"} {
		if !strings.Contains(got, want) {
			t.Errorf("homard logs shows %q; want it to contain %q", got, want)
		}
	}
}
