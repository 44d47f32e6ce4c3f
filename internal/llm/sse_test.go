package llm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, in string) ([]SSEEvent, error) {
	t.Helper()
	r := NewSSEReader(strings.NewReader(in))
	var out []SSEEvent
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []SSEEvent
	}{
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []SSEEvent{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"anthropic", "event: ping\ndata: {\"type\": \"ping\"}\n\n", []SSEEvent{{Event: "ping", Data: `{"type": "ping"}`}}},
		{"crlf", "data: x\r\n\r\ndata: y\r\n\r\n", []SSEEvent{{Data: "x"}, {Data: "y"}}},
		{"lone cr", "data: x\r\rdata: y\r\r", []SSEEvent{{Data: "x"}, {Data: "y"}}},
		{"comments", ": OPENROUTER PROCESSING\n\n: keep-alive\ndata: x\n\n", []SSEEvent{{Data: "x"}}},
		{"multi-line", "data: a\ndata: b\ndata:c\n\n", []SSEEvent{{Data: "a\nb\nc"}}},
		{"no space", "data:x\n\n", []SSEEvent{{Data: "x"}}},
		{"two spaces keep one", "data:  x\n\n", []SSEEvent{{Data: " x"}}},
		{"unknown fields", "id: 7\nretry: 10\ndata: x\n\n", []SSEEvent{{Data: "x"}}},
		{"cut event dropped", "data: x\n\ndata: {\"half", []SSEEvent{{Data: "x"}}},
		{"empty data", "data\n\n", []SSEEvent{{Data: ""}}},
		{"blank lines only", "\n\n\n", nil},
	}
	for _, tt := range tests {
		got, err := readAll(t, tt.in)
		if err != nil {
			t.Errorf("%s: error %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: read %q = %q; want %q", tt.name, tt.in, got, tt.want)
		}
		// Byte-at-a-time reads must give the same result.
		r := NewSSEReader(iotest.OneByteReader(strings.NewReader(tt.in)))
		var slow []SSEEvent
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			slow = append(slow, ev)
		}
		if !reflect.DeepEqual(slow, tt.want) {
			t.Errorf("%s: one byte at a time = %q; want %q", tt.name, slow, tt.want)
		}
	}
}

func TestSSELineTooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", MaxSSELine+1) + "\n\n"
	_, err := readAll(t, in)
	if !errors.Is(err, ErrSSELineTooLong) {
		t.Errorf("error = %v; want ErrSSELineTooLong", err)
	}
}

// FuzzSSE checks that the reader never panics and that any payload written
// as data lines (with LF or CRLF) reads back unchanged.
func FuzzSSE(f *testing.F) {
	f.Add("data: x\n\n", "a\nb", false)
	f.Add("event: e\r\ndata: [DONE]\r\n\r\n", "[DONE]", true)
	f.Add(":\n\ndata", "", false)
	f.Add("\r", " lead", true)
	f.Fuzz(func(t *testing.T, raw, payload string, crlf bool) {
		_, _ = readAll(t, raw) // must not panic

		if strings.ContainsRune(payload, '\r') || len(payload) > 1<<16 {
			return
		}
		eol := "\n"
		if crlf {
			eol = "\r\n"
		}
		var b strings.Builder
		for _, line := range strings.Split(payload, "\n") {
			b.WriteString("data: " + line + eol)
		}
		b.WriteString(eol)
		got, err := readAll(t, b.String())
		if err != nil || len(got) != 1 || got[0].Data != payload {
			t.Fatalf("read back %q = %q, %v; want %q", b.String(), got, err, payload)
		}
	})
}
