package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/store/storetest"
)

// Scenario tests: whole turns through Runtime.Run with everything real but
// the model — config, SQLite, the os.Root workspace, the tools, the arbiter,
// the audit chain and the OpenAI or Anthropic wire client — the model being
// a loopback llmtest server that replays a script byte for byte.

// newModeRuntime opens a fresh home in mode, with its config changed by
// edit (nil for none) before it is opened with o.
func newModeRuntime(t *testing.T, mode string, edit func(string) string, o Options) *Runtime {
	t.Helper()
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Mode: mode}); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b, err := os.ReadFile(paths.ConfigFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(paths.ConfigFile, []byte(edit(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(context.Background(), paths, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// auditSince returns the audit records after seq.
func auditSince(t *testing.T, r *Runtime, seq int64) []AuditRecord {
	t.Helper()
	recs, err := r.Owner.AuditAfter(context.Background(), seq, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// storedTurns reads the turns table of session straight from the database
// file (read-only): the store has no reader for it yet, and a scenario
// must see what is on disk, not what Run returned.
func storedTurns(t *testing.T, r *Runtime, session string) (stopped []string) {
	t.Helper()
	db := rawDB(t, r)
	rows, err := db.Query(`SELECT stopped FROM turns WHERE session_id = ? ORDER BY turn`, session)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stopped = append(stopped, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return stopped
}

// checkStoredPairs checks the stored conversation of session: roles in the
// order given, and every assistant tool call answered, in order, by the
// tool messages that follow it.
func checkStoredPairs(t *testing.T, r *Runtime, session string, wantRoles string) {
	t.Helper()
	stored, err := r.Store.Messages(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	roles := make([]string, len(stored))
	for i, m := range stored {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, ","); got != wantRoles {
		t.Fatalf("stored roles = %s; want %s", got, wantRoles)
	}
	for i, m := range stored {
		if m.ToolCalls == nil {
			if m.Role == "tool" && (i == 0 || stored[i-1].Role != "tool" && stored[i-1].ToolCalls == nil) {
				t.Errorf("stored message %d is a tool result with no call before it", i)
			}
			continue
		}
		var calls []storedCall
		if err := json.Unmarshal(m.ToolCalls, &calls); err != nil || len(calls) == 0 {
			t.Fatalf("stored message %d tool_calls %s: %v", i, m.ToolCalls, err)
		}
		for j, c := range calls {
			k := i + 1 + j
			if k >= len(stored) || stored[k].Role != "tool" || stored[k].ToolCallID != c.ID {
				t.Fatalf("stored call %s (message %d) is not followed by its result at %d", c.ID, i, k)
			}
		}
	}
}

func TestScenarioReadWriteAnswer(t *testing.T) {
	for _, mode := range []string{"autopilot", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			r := newModeRuntime(t, mode, nil, Options{})
			writeWorkspaceFile(t, r, "notes.txt", "buy oolong\ncall the plumber\n")
			const summary = "# Summary\n\n- tea: oolong\n- plumber: call\n"
			srv := runServer(t, r,
				openAI(toolCall("call_r", "read_file", `{"path":"notes.txt"}`)),
				openAI(toolCall("call_w", "write_file", `{"path":"summary.md","content":`+mustQuote(summary)+`}`)),
				openAI(llmtest.Turn{Text: []string{"I wrote ", "summary.md."}}),
			)
			res, err := r.Run(context.Background(), channel.TurnRequest{Text: "Summarise notes.txt into summary.md"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Text != "I wrote summary.md." || res.Stopped != "" || len(res.Pending) != 0 {
				t.Fatalf("Run = %+v; want the answer, nothing pending or stopped", res)
			}
			b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "summary.md"))
			if err != nil || string(b) != summary {
				t.Fatalf("summary.md = %q, %v; want %q", b, err, summary)
			}
			recs := auditSince(t, r, 0)
			if len(recs) != 2 || recs[0].Tool != "read_file" || recs[0].Decision != "ran" ||
				recs[1].Tool != "write_file" || recs[1].Decision != "ran" || recs[1].PlanHash == "" {
				t.Fatalf("audit = %+v; want read_file ran then write_file ran with a plan hash", recs)
			}
			if n, err := r.Owner.AuditVerify(context.Background()); err != nil || n != 2 {
				t.Fatalf("AuditVerify = %d, %v; want 2 intact records", n, err)
			}
			// The model saw the file's content before it wrote.
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests; want 3", len(reqs))
			}
			second := requestMessages(t, reqs[1])
			if got, _ := second[len(second)-1].Content.(string); !strings.Contains(got, "buy oolong") {
				t.Fatalf("second request's last message = %q; want the notes", got)
			}
			checkStoredPairs(t, r, "cli", "user,assistant,tool,assistant,tool,assistant")
			stored, _ := r.Store.Messages(context.Background(), "cli")
			if stored[0].Content != "Summarise notes.txt into summary.md" || stored[5].Content != "I wrote summary.md." ||
				!strings.Contains(stored[2].Content, "call the plumber") || !strings.Contains(stored[4].Content, "decision: ran") {
				t.Fatalf("stored contents = %+v", stored)
			}
			if s := storedTurns(t, r, "cli"); len(s) != 1 || s[0] != "" {
				t.Fatalf("stored turns stopped = %q; want one turn, not stopped", s)
			}
		})
	}
}

func mustQuote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestScenarioModelThatNeverStops: a model that calls a tool in every
// answer, and even in the answer it was asked to give without tools, is
// stopped by the call budget; the last request forbids tool calls and the
// stored turn says why it stopped.
func TestScenarioModelThatNeverStops(t *testing.T) {
	r := newModeRuntime(t, "yolo", nil, Options{})
	writeWorkspaceFile(t, r, "notes.txt", "again\n")
	const budget = 24 // agent.Budget's default MaxCalls; Run sets no budget
	var replies []llmtest.Reply
	for i := range budget + 5 {
		turn := toolCall(fmt.Sprintf("call_%d", i), "read_file", `{"path":"notes.txt"}`)
		if i == budget {
			turn.Text = []string{"Out of budget; ", "here is what I have."}
		}
		replies = append(replies, openAI(turn))
	}
	srv := runServer(t, r, replies...)
	res, err := r.Run(context.Background(), channel.TurnRequest{Text: "read notes.txt forever"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(res.Stopped, "budget") || res.Text != "Out of budget; here is what I have." {
		t.Fatalf("Run = %+v; want stopped on the budget with the final text", res)
	}
	reqs := srv.Requests()
	if len(reqs) != budget+1 {
		t.Fatalf("%d model requests; want %d (the calls, then one final answer)", len(reqs), budget+1)
	}
	var last struct {
		ToolChoice any `json:"tool_choice"`
	}
	if err := json.Unmarshal(reqs[budget].Body, &last); err != nil || last.ToolChoice != "none" {
		t.Fatalf("final request tool_choice = %v (%v); want \"none\"", last.ToolChoice, err)
	}
	for i, rq := range reqs[:budget] {
		var body struct {
			ToolChoice any `json:"tool_choice"`
		}
		if json.Unmarshal(rq.Body, &body) != nil || body.ToolChoice == "none" {
			t.Fatalf("request %d forbids tools; only the final one may", i)
		}
	}
	// Every call the model made is audited: the budget's worth ran, the
	// one in the final answer was refused and did not run.
	recs := auditSince(t, r, 0)
	if len(recs) != budget+1 {
		t.Fatalf("%d audit records; want %d (%d calls + the refused one in the final answer)", len(recs), budget+1, budget)
	}
	for _, rec := range recs[:budget] {
		if rec.Decision != "ran" {
			t.Fatalf("audit record %d: %s by %s; want ran", rec.Seq, rec.Decision, rec.Rule)
		}
	}
	if last := recs[budget]; last.Decision != "denied" || last.Rule != "loop.final-answer" || last.RunID != "" {
		t.Fatalf("last audit record = %s by %s (run %q); want denied by loop.final-answer, never run", last.Decision, last.Rule, last.RunID)
	}
	want := "user" + strings.Repeat(",assistant,tool", budget) + ",assistant"
	checkStoredPairs(t, r, "cli", want)
	stored, _ := r.Store.Messages(context.Background(), "cli")
	if final := stored[len(stored)-1]; final.ToolCalls != nil || final.Content != res.Text {
		t.Fatalf("stored final message = %+v; want the text and no tool calls", final)
	}
	if s := storedTurns(t, r, "cli"); len(s) != 1 || s[0] != res.Stopped {
		t.Fatalf("stored turns stopped = %q; want [%q]", s, res.Stopped)
	}
}
