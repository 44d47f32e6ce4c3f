package main

import (
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
)

// TestToolLog: each sequence of tool events of one call settles into one
// decision and one line; a new model step is marked; what the model or a
// tool wrote is shown inert and capped.
func TestToolLog(t *testing.T) {
	ev := func(id string, st channel.Status, step int, f func(*channel.ToolEvent)) channel.ToolEvent {
		e := channel.ToolEvent{ID: id, Name: "write_file", Args: `{"path":"a.md"}`, Status: st, Step: step}
		if st != channel.Proposed {
			e.Plan = "write a.md (6 bytes)"
		}
		if f != nil {
			f(&e)
		}
		return e
	}
	rule := func(r string) func(*channel.ToolEvent) { return func(e *channel.ToolEvent) { e.Rule = r } }
	tests := []struct {
		name     string
		events   []channel.ToolEvent
		decision []string
		lines    []string // substrings of the printed lines, in order
		not      []string // must not be printed
	}{
		{"allowed, ran", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil), ev("c1", channel.Ran, 1, rule("mode.yolo"))},
			[]string{"allowed"}, []string{"homard: tool write_file: write a.md (6 bytes) — allowed by mode.yolo → ran"}, nil},
		{"asked, approved, ran", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Pending, 1, func(e *channel.ToolEvent) { e.ApprovalID = "ap_1"; e.Rule = "mode.smart.ask" }),
			ev("c1", channel.Ran, 1, rule("approval.once"))},
			[]string{"approved"}, []string{"— asked → approved → ran"}, []string{"waiting"}},
		{"asked, denied", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Pending, 1, func(e *channel.ToolEvent) { e.ApprovalID = "ap_1" }),
			ev("c1", channel.Denied, 1, nil)},
			[]string{"denied"}, []string{"— asked → denied"}, nil},
		{"left pending, then the next call", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Pending, 1, func(e *channel.ToolEvent) { e.ApprovalID = "ap_1" }),
			ev("c2", channel.Proposed, 2, nil), ev("c2", channel.Ran, 2, rule("mode.smart.read"))},
			[]string{"pending", "allowed"}, []string{"asked → waiting for approval ap_1", "homard: — step 2 —", "allowed by mode.smart.read → ran"}, nil},
		{"refused by a hard limit", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Denied, 1, func(e *channel.ToolEvent) { e.Rule = "limit.path"; e.Reason = "outside the workspace" })},
			[]string{"refused"}, []string{"— refused by limit.path: outside the workspace"}, nil},
		{"refused by a budget, never proposed", []channel.ToolEvent{
			ev("c1", channel.Denied, 3, func(e *channel.ToolEvent) { e.Plan = ""; e.Rule = "budget.calls"; e.Reason = "not run: spent" })},
			[]string{"refused"}, []string{`homard: tool write_file: {"path":"a.md"} — refused by budget.calls: not run: spent`}, nil},
		{"invalid arguments", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Failed, 1, func(e *channel.ToolEvent) { e.Plan = ""; e.Rule = "decode.strict"; e.Reason = "unknown field pth" })},
			[]string{"invalid"}, []string{"— invalid: unknown field pth"}, nil},
		{"ran and failed", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Failed, 1, func(e *channel.ToolEvent) { e.Rule = "mode.yolo"; e.Reason = "disk full" })},
			[]string{"allowed"}, []string{"— allowed by mode.yolo → error: disk full"}, nil},
		{"hostile text is inert and capped", []channel.ToolEvent{ev("c1", channel.Proposed, 1, nil),
			ev("c1", channel.Ran, 1, func(e *channel.ToolEvent) { e.Plan = "write \x1b[2Ja.md\n" + strings.Repeat("x", 300) })},
			[]string{"allowed"}, []string{`write \x1b[2Ja.md`, "…"}, []string{"\x1b", strings.Repeat("x", 120)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			l := &toolLog{w: &out}
			for _, e := range tt.events {
				l.event(e)
			}
			l.flush()
			var got []string
			for _, c := range l.calls {
				got = append(got, c.Decision)
			}
			if strings.Join(got, ",") != strings.Join(tt.decision, ",") {
				t.Errorf("decisions = %v; want %v", got, tt.decision)
			}
			if n := strings.Count(out.String(), "homard: tool "); n != len(tt.decision) {
				t.Errorf("%d tool lines; want one per call:\n%s", n, out.String())
			}
			rest := out.String()
			for _, want := range tt.lines {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", want, out.String())
				}
				rest = rest[i+len(want):]
			}
			for _, bad := range tt.not {
				if strings.Contains(out.String(), bad) {
					t.Errorf("output holds %q:\n%s", bad, out.String())
				}
			}
		})
	}
}
