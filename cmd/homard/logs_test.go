package main

import (
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
