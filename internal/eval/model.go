package eval

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/homard/homard/internal/llm/llmtest"
)

// script is the scripted model of one run: request n is answered with
// step n (its templates expanded with the request's last tool result),
// and every request past the steps with the final answer. It speaks the
// OpenAI wire format through llmtest, as a real provider streams it.
type script struct {
	steps  []Step
	answer string
	vars   map[string]string // the world's template values

	mu       sync.Mutex // guards proposed
	proposed int        // tool calls sent in complete answers
}

// callID names the i-th call of the turn (from 1).
func callID(i int) string { return fmt.Sprintf("call_%d", i) }

func (sc *script) reply(n int, body []byte) llmtest.Reply {
	if n > len(sc.steps) {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{sc.answer}})}
	}
	vars := map[string]string{"last_result": lastToolResult(body)}
	for k, v := range sc.vars {
		vars[k] = v
	}
	first := 1
	for _, st := range sc.steps[:n-1] {
		first += len(st.Calls) * max(st.Repeat, 1)
	}
	st := sc.steps[n-1]
	var turn llmtest.Turn
	for r := 0; r < max(st.Repeat, 1); r++ {
		for _, c := range st.Calls {
			args := expand(c.RawArgs, vars)
			if c.RawArgs == "" {
				b, err := json.Marshal(expandAll(orEmpty(c.Args), vars))
				if err != nil {
					args = "{}"
				} else {
					args = string(b)
				}
			}
			half := len(args) / 2 // split mid-JSON, as providers send arguments
			turn.Calls = append(turn.Calls, llmtest.CallScript{ID: callID(first + len(turn.Calls)), Name: c.Tool,
				Fragments: []string{args[:half], args[half:]}})
		}
	}
	chunks := llmtest.OpenAIStream(turn)
	switch st.Stream {
	case "cut":
		// role, the first call's header, its first fragment: then gone.
		return llmtest.CutAfter(chunks, 3)
	case "malformed":
		return llmtest.MalformedAfter(chunks, 2)
	case "stops":
		// No finish reason and no [DONE]: a clean end in the middle.
		return llmtest.Reply{Chunks: chunks[:len(chunks)-2]}
	}
	sc.mu.Lock()
	sc.proposed += len(turn.Calls)
	sc.mu.Unlock()
	return llmtest.Reply{Chunks: chunks}
}

// proposals returns how many calls the model sent in complete answers.
func (sc *script) proposals() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.proposed
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// chatRequest is what eval reads of an OpenAI chat request: each
// message's role and its content as sent.
type chatRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// lastToolResult returns the content of the last tool message of an OpenAI
// chat request; "" when there is none.
func lastToolResult(body []byte) string {
	var req chatRequest
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "tool" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		out := ""
		for _, p := range parts {
			out += p.Text
		}
		return out
	}
	return ""
}
