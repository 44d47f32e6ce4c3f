package llmtest

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"

	"github.com/homard/homard/internal/llm"
)

// pieces are what RandomRequest builds text from: plain words, characters
// JSON encoders escape (quotes, HTML, controls, U+2028), CJK, and bytes
// that are not UTF-8.
var pieces = []string{"hello", " ", "world", `"`, `\`, "<b>", "&amp;", "\n", "\t", "\x00", "\x1b[31m",
	"\u2028", "你好", "é", "\xff\xfe", "{}", `{"a":1}`, "🦞"}

func randomText(rng *rand.Rand, maxPieces int) string {
	s := ""
	for range rng.IntN(maxPieces + 1) {
		s += pieces[rng.IntN(len(pieces))]
	}
	return s
}

// RandomRequest returns a request of n messages in any order of roles
// (runs of one role, assistant messages with and without text and tool
// calls, tool results, arguments that are JSON objects and that are not),
// with a random system prompt, model, tools and answer cap: the inputs a
// wire encoder's test compares two encodings on.
func RandomRequest(rng *rand.Rand, n int) llm.Request {
	req := llm.Request{Model: randomText(rng, 2), MaxTokens: rng.IntN(3) * 1000, NoToolCalls: rng.IntN(4) == 0}
	if rng.IntN(3) > 0 {
		req.System = randomText(rng, 8)
	}
	for i := range rng.IntN(4) {
		spec := llm.ToolSpec{Name: "tool" + strconv.Itoa(i), Description: randomText(rng, 4)}
		if rng.IntN(2) == 0 {
			spec.Schema = json.RawMessage(`{"type": "object", "properties": {"x": {"type": "string"}}}`)
		}
		req.Tools = append(req.Tools, spec)
	}
	roles := []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool}
	for range n {
		m := llm.Message{Role: roles[rng.IntN(len(roles))], Content: randomText(rng, 6)}
		switch m.Role {
		case llm.RoleTool:
			m.ToolCallID = "call_" + strconv.Itoa(rng.IntN(100))
		case llm.RoleAssistant:
			for range rng.IntN(3) {
				args := json.RawMessage(`{"path":` + strconv.Quote(randomText(rng, 3)) + `}`)
				if rng.IntN(4) == 0 {
					args = json.RawMessage(randomText(rng, 3)) // what a model may send
				}
				m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: "call_" + strconv.Itoa(rng.IntN(100)), Name: "read_file", Args: args})
			}
		}
		req.Messages = append(req.Messages, m)
	}
	return req
}
