package openai

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// FuzzStream feeds arbitrary bodies to the stream parser: it must never
// panic, must end, and must end in EOF (after Done) or an error event.
func FuzzStream(f *testing.F) {
	f.Add(llmtest.Join(llmtest.OpenAIStream(toolTurn)))
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-5,\"id\":\"a\"}]}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"error\":{\"message\":\"x\"}}\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\" <think>a</th\"}}],\"usage\":{\"prompt_tokens\":1}}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ink>b\",\"reasoning_content\":\"r\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"<think>\"},\"finish_reason\":\"sensitive\"}]}\n\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		s := newStream(context.Background(), io.NopCloser(strings.NewReader(body)), key)
		defer s.Close()
		for i := 0; ; i++ {
			if i > len(body)+10 {
				t.Fatal("stream does not end")
			}
			_, err := s.Next()
			if err != nil {
				return
			}
		}
	})
}

func TestToolCallsWithoutIndex(t *testing.T) {
	body := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"x\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: [DONE]\n\n"
	s := newStream(context.Background(), io.NopCloser(strings.NewReader(body)), key)
	var got []string
	for {
		ev, err := s.Next()
		if err != nil {
			break
		}
		if ev.ToolCall.ID != "" {
			got = append(got, ev.ToolCall.ID+ev.ToolCall.Name+string(ev.ToolCall.Args))
		}
	}
	if strings.Join(got, ",") != `af{},bg{"x":1}` {
		t.Errorf("calls = %v", got)
	}
}
