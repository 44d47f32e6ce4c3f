package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// A model per role ([models.roles], issue 23 point 5): two fake
// OpenAI-compatible servers, the main model's and a second "local" one,
// each with its own request log.

const localModelKey = "sk-local-LOCALKEY0123456789"

// localModel returns an edit of config.toml that adds [models.local] at
// srv with its own key variable, and points the given roles at it.
func localModel(t *testing.T, srv *llmtest.Server, roles ...string) func(string) string {
	t.Helper()
	t.Setenv("LOCAL_MODEL_KEY", localModelKey)
	return func(doc string) string {
		for _, role := range roles {
			line := role + ` = "main"`
			if !strings.Contains(doc, "\n"+line+"\n") {
				t.Fatalf("config.toml has no line %q", line)
			}
			doc = strings.Replace(doc, "\n"+line+"\n", "\n"+role+` = "local"`+"\n", 1)
		}
		return doc + fmt.Sprintf("\n[models.local]\nprovider = \"openai\"\nbase_url = %q\nname = \"local-small\"\napi_key_env = \"LOCAL_MODEL_KEY\"\n", srv.URL+"/v1")
	}
}

// requestModel is the "model" a recorded request named.
func requestModel(rec llmtest.Recorded) string {
	s := string(rec.Body)
	_, after, _ := strings.Cut(s, `"model":"`)
	name, _, _ := strings.Cut(after, `"`)
	return name
}

func isCaptureRequest(rec llmtest.Recorded) bool {
	return strings.Contains(string(rec.Body), "long-term notes")
}

func isSummaryRequest(rec llmtest.Recorded) bool {
	return strings.Contains(string(rec.Body), "Write the new conversation summary")
}

// TestModelRoles is the check: with capture = "local" the capture
// request goes to the second model, with its own key and model name, and
// every turn request to the main one; without roles, all go to the main
// one. homard doctor names the role only when it is not main's.
func TestModelRoles(t *testing.T) {
	note := `{"text":"Keeps bees in the garden","kind":"fact"}` + "\n"
	for _, roles := range []bool{true, false} {
		t.Run(fmt.Sprintf("roles=%v", roles), func(t *testing.T) {
			local := llmtest.NewServer(captureReply(note))
			t.Cleanup(local.Close)
			var edit func(string) string
			if roles {
				edit = localModel(t, local, "capture")
			}
			r := newModeRuntime(t, "smart", edit, Options{})
			replies := answers(1, 4)
			if !roles {
				replies = append(replies, captureReply(note))
			}
			main := runServer(t, r, replies...)
			r.Config.Memory.Capture = "on"
			ownerTurns(t, r, "s", 1, 4) // the fourth turn makes the capture call

			mainReqs, localReqs := main.Requests(), local.Requests()
			turns, captures := 0, 0
			for i, rec := range mainReqs {
				if isCaptureRequest(rec) {
					captures++
					continue
				}
				turns++
				if got := rec.Header.Get("Authorization"); got != "Bearer sk-test-RUNKEY0123456789" {
					t.Errorf("main request %d Authorization = %q; want the main key", i, got)
				}
			}
			if turns != 4 {
				t.Errorf("main model got %d turn requests; want 4", turns)
			}
			if roles {
				if captures != 0 {
					t.Errorf("main model got %d capture requests; want 0 (capture is local's)", captures)
				}
				if len(localReqs) != 1 || !isCaptureRequest(localReqs[0]) {
					t.Fatalf("local model got %d requests; want the one capture request", len(localReqs))
				}
				if got := requestModel(localReqs[0]); got != "local-small" {
					t.Errorf("capture request model = %q; want local-small", got)
				}
				if got := localReqs[0].Header.Get("Authorization"); got != "Bearer "+localModelKey {
					t.Errorf("capture request Authorization = %q; want local's own key", got)
				}
			} else {
				if captures != 1 {
					t.Errorf("main model got %d capture requests; want 1", captures)
				}
				if len(localReqs) != 0 {
					t.Errorf("the unused local server got %d requests; want 0", len(localReqs))
				}
			}
			list, err := r.Owner.MemoryReview(context.Background())
			if err != nil || len(list) != 1 {
				t.Errorf("MemoryReview = %+v, %v; want the captured note buffered", list, err)
			}

			var line *Check
			for _, c := range Doctor(context.Background(), r.Paths, DoctorOptions{Offline: true}) {
				if c.Name == "model roles" {
					line = &c
				}
			}
			switch {
			case roles && (line == nil || line.Detail != "capture → local (openai local-small)"):
				t.Errorf("doctor model roles line = %+v; want capture → local (openai local-small)", line)
			case !roles && line != nil:
				t.Errorf("doctor model roles line = %+v; want none when every role is main's", line)
			}
		})
	}
}

// TestModelRolesSummary: with summary = "local", the summary of folded
// turns is written by the local model and stored; the turns stay with the
// main model.
func TestModelRolesSummary(t *testing.T) {
	const fact = "PERIWINKLE-42"
	var summaries []llmtest.Reply
	for range 6 {
		summaries = append(summaries, openAI(llmtest.Turn{Text: []string{"Notes: the locker code word is " + fact + "."}}))
	}
	local := llmtest.NewServer(summaries...)
	t.Cleanup(local.Close)
	r := newModeRuntime(t, "smart", localModel(t, local, "summary"), Options{})
	main := runServer(t, r, answers(1, 3)...)
	// Room for the prefix and about two of the turns below.
	var specs []llm.ToolSpec
	for _, s := range r.Registry.Specs() {
		specs = append(specs, llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	r.Config.Model.ContextTokens = agent.EstimateRequest(llm.Request{System: systemPrompt, Tools: specs}) + 3000
	filler := strings.Repeat("We talked about the allotment. ", 130) // about 1000 tokens
	for n := 1; n <= 3; n++ {
		if _, err := r.Run(context.Background(), channel.TurnRequest{Text: fmt.Sprintf("Turn %d: %s", n, filler)}); err != nil {
			t.Fatalf("Run %d: %v", n, err)
		}
	}
	sum, err := r.Store.Summary(context.Background(), "cli")
	if err != nil || !strings.Contains(sum.Text, fact) {
		t.Fatalf("stored summary %+v, %v; want the local model's", sum, err)
	}
	mainReqs, localReqs := main.Requests(), local.Requests()
	if len(mainReqs) != 3 {
		t.Errorf("main model got %d requests; want the 3 turns", len(mainReqs))
	}
	for i, rec := range mainReqs {
		if isSummaryRequest(rec) {
			t.Errorf("main request %d is a summary request; want it at the local model", i)
		}
	}
	if len(localReqs) == 0 {
		t.Fatal("local model got no request; want the summary requests")
	}
	for i, rec := range localReqs {
		if !isSummaryRequest(rec) || requestModel(rec) != "local-small" {
			t.Errorf("local request %d: summary %v, model %q; want summary requests for local-small", i, isSummaryRequest(rec), requestModel(rec))
		}
	}
}
