package anthropic

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// FuzzStream feeds arbitrary bodies to the stream parser: it must never
// panic and must end.
func FuzzStream(f *testing.F) {
	f.Add(llmtest.Join(llmtest.AnthropicStream(toolTurn)))
	f.Add("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n")
	f.Add("data: {\"type\":\"error\"}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		s := newStream(context.Background(), io.NopCloser(strings.NewReader(body)), key)
		defer s.Close()
		for i := 0; ; i++ {
			if i > len(body)+10 {
				t.Fatal("stream does not end")
			}
			if _, err := s.Next(); err != nil {
				return
			}
		}
	})
}
