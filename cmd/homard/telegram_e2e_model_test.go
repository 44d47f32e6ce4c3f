package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// tgModel is an OpenAI-compatible model whose answer depends on the
// request: after a tool result it says "finished"; otherwise the first
// trigger found in the last user message picks a scripted turn, and with
// none it echoes that message. Every request body is kept.
type tgModel struct {
	*httptest.Server

	mu       sync.Mutex // guards triggers, order, requests, nextCall
	triggers map[string]llmtest.Turn
	order    []string
	requests []string
	nextCall int
}

func newTgModel(t *testing.T) *tgModel {
	m := &tgModel{triggers: map[string]llmtest.Turn{}}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

// on makes a last user message containing trigger get turn.
func (m *tgModel) on(trigger string, turn llmtest.Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.triggers[trigger]; !ok {
		m.order = append(m.order, trigger)
	}
	m.triggers[trigger] = turn
}

// call is a turn that makes one tool call with args.
func (m *tgModel) call(name, args string) llmtest.Turn {
	m.mu.Lock()
	m.nextCall++
	id := "call_" + strconv.Itoa(m.nextCall)
	m.mu.Unlock()
	return llmtest.Turn{Calls: []llmtest.CallScript{{ID: id, Name: name, Fragments: []string{args}}}}
}

// Requests returns the request bodies so far.
func (m *tgModel) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...)
}

// RequestsWith returns the request bodies that contain s.
func (m *tgModel) RequestsWith(s string) []string {
	var out []string
	for _, b := range m.Requests() {
		if strings.Contains(b, s) {
			out = append(out, b)
		}
	}
	return out
}

type tgMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m tgMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (m *tgModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []tgMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	m.requests = append(m.requests, string(body))
	turn := llmtest.Turn{Text: []string{"(empty request)"}}
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		switch {
		case last.Role == "tool":
			turn = llmtest.Turn{Text: []string{"finished"}}
		default:
			text := last.text()
			turn = llmtest.Turn{Text: []string{"echo: " + text}}
			for _, trig := range m.order {
				if strings.Contains(text, trig) {
					turn = m.triggers[trig]
					break
				}
			}
		}
	}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range llmtest.OpenAIStream(turn) {
		io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
}

// llmTextTurn is a turn that answers text.
func llmTextTurn(text string) llmtest.Turn { return llmtest.Turn{Text: []string{text}} }
