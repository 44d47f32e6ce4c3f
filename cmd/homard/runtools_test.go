package main

import (
	"strings"
	"testing"
	"time"

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
			if n := strings.Count(out.String(), "homard: tool ") - strings.Count(out.String(), " starts: "); n != len(tt.decision) {
				t.Errorf("%d settled tool lines; want one per call:\n%s", n, out.String())
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

// TestToolLogTalks: a call shows a line as soon as it is proposed (a long
// command does not look like a hang) and its settled line says how long it
// took; a multi-line plan shows its first line only, never an escaped
// newline.
func TestToolLogTalks(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var out strings.Builder
	l := &toolLog{w: &out, now: func() time.Time { return clock }}
	l.event(channel.ToolEvent{ID: "c1", Name: "run_command", Args: `{"argv":["sleep","60"]}`, Status: channel.Proposed, Step: 1})
	if want := "homard: tool run_command starts: {\"argv\":[\"sleep\",\"60\"]}\n"; out.String() != want {
		t.Fatalf("after the proposal, stderr = %q; want %q", out.String(), want)
	}
	clock = clock.Add(61500 * time.Millisecond)
	l.event(channel.ToolEvent{ID: "c1", Name: "run_command", Status: channel.Ran, Step: 1, Rule: "mode.yolo",
		Plan: "run sleep 60\n  in: .\n  timeout: 60s"})
	end := strings.TrimPrefix(out.String(), "homard: tool run_command starts: {\"argv\":[\"sleep\",\"60\"]}\n")
	if want := "homard: tool run_command: run sleep 60 … — allowed by mode.yolo → ran (1m2s)\n"; end != want {
		t.Errorf("settled line = %q; want %q", end, want)
	}
	if strings.Contains(out.String(), `\x0a`) {
		t.Errorf("a plan's newline is shown escaped:\n%s", out.String())
	}
	if len(l.calls) != 1 || l.calls[0].ElapsedMS != 61500 {
		t.Errorf("--json's elapsed_ms = %+v; want 61500", l.calls)
	}
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{1234567 * time.Microsecond, "1.2s"}, {42 * time.Millisecond, "42ms"}, {61500 * time.Millisecond, "1m2s"}} {
		if got := elapsed(tt.d); got != tt.want {
			t.Errorf("elapsed(%v) = %q; want %q", tt.d, got, tt.want)
		}
	}
}
