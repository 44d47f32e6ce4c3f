package llm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// SSEEvent is one Server-Sent Event.
type SSEEvent struct {
	// Event is the "event:" field; empty when the server sent none.
	Event string
	// Data is the "data:" lines joined with "\n".
	Data string
}

// MaxSSELine bounds one line of a stream, so a hostile or broken server
// cannot make us buffer without end.
const MaxSSELine = 4 << 20

// SSEReader reads Server-Sent Events (the subset providers use): "data:"
// and "event:" fields, ":" comments, other fields ignored, LF or CRLF line
// ends, several data lines joined with "\n", a blank line ending an event.
// It does not interpret "[DONE]"; callers do.
type SSEReader struct {
	sc *bufio.Scanner
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxSSELine) // grows as lines need
	sc.Split(scanLines)
	return &SSEReader{sc: sc}
}

// ErrSSELineTooLong is returned for a line longer than MaxSSELine.
var ErrSSELineTooLong = errors.New("sse: line too long")

// Next returns the next event with a data or event field. At the end of the
// input it returns io.EOF; an event not ended by a blank line is dropped
// (as the SSE specification says), so a cut stream shows up as missing
// events, which callers detect by the absence of their end marker.
func (r *SSEReader) Next() (SSEEvent, error) {
	var ev SSEEvent
	var data strings.Builder
	hasData := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if hasData || ev.Event != "" {
				ev.Data = data.String()
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. ": OPENROUTER PROCESSING"
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "event":
			ev.Event = value
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return SSEEvent{}, ErrSSELineTooLong
		}
		return SSEEvent{}, fmt.Errorf("sse: %w", err)
	}
	return SSEEvent{}, io.EOF
}

// scanLines splits on "\n", "\r\n" or a lone "\r", as SSE allows all three.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// '\r': need the next byte to know whether it is "\r\n".
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
