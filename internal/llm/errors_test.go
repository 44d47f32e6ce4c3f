package llm

import (
	"errors"
	"strings"
	"testing"
)

func TestNewAPIError(t *testing.T) {
	tests := []struct {
		status int
		body   string
		kind   error
		msg    string
	}{
		{401, `{"error":{"message":"Incorrect API key provided: sk-XYZ.","type":"invalid_request_error"}}`, ErrAuth, "Incorrect API key provided: [redacted]."},
		{403, `{"type":"error","error":{"type":"permission_error","message":"no"}}`, ErrAuth, "no"},
		{404, `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, ErrModelNotFound, "model: x"},
		{429, `{"error":"slow down"}`, ErrRateLimited, "slow down"},
		{503, `<html>bad gateway</html>`, ErrServer, "<html>bad gateway</html>"},
		{529, ``, ErrServer, ""},
		{422, `{}`, ErrBadRequest, "{}"},
	}
	for _, tt := range tests {
		e := NewAPIError("p", tt.status, []byte(tt.body), "sk-XYZ")
		if !errors.Is(e, tt.kind) || e.Message != tt.msg {
			t.Errorf("NewAPIError(%d, %s) = %v, %q; want %v, %q", tt.status, tt.body, e.Kind, e.Message, tt.kind, tt.msg)
		}
	}
	long := NewAPIError("p", 500, []byte(strings.Repeat("é", 400)), "")
	if len(long.Message) > 310 || !strings.HasSuffix(long.Message, "…") || !strings.Contains(long.Error(), "HTTP 500") {
		t.Errorf("long message = %q", long.Message)
	}
}

func TestCollectStopsAtError(t *testing.T) {
	s := &sliceStream{events: []Event{{Kind: EventText, Text: "a"}, {Kind: EventError, Err: ErrBrokenStream}}}
	got, err := Collect(s)
	if !errors.Is(err, ErrBrokenStream) || got.Text != "a" || !s.closed {
		t.Errorf("Collect = %+v, %v (closed %v)", got, err, s.closed)
	}
}

type sliceStream struct {
	events []Event
	closed bool
}

func (s *sliceStream) Next() (Event, error) {
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, ev.Err
}

func (s *sliceStream) Close() error { s.closed = true; return nil }
