package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/homard/homard/internal/channel"
)

// TestTurnWithToolsOff: a turn with NoTools (the owner's /tools off) sends
// the model no tool at all, and a call the model makes anyway is refused
// with limit.tools-off and does not run; the twin, the same turn with
// tools, runs the call.
func TestTurnWithToolsOff(t *testing.T) {
	for _, off := range []bool{true, false} {
		r := newTestRuntime(t, "autopilot")
		r.Config.Memory.Capture = "off"
		writeWorkspaceFile(t, r, "notes/a.md", "alpha\n")
		srv := runServer(t, r, script(proposal{"read_file", `{"path":"notes/a.md"}`})...)
		var outs []channel.ToolEvent
		_, err := r.Run(context.Background(), channel.TurnRequest{Text: "summarise this relayed message", NoTools: off,
			OnTool: func(ev channel.ToolEvent) {
				if ev.Status != channel.Proposed {
					outs = append(outs, ev)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		var first map[string]json.RawMessage
		if err := json.Unmarshal(srv.Requests()[0].Body, &first); err != nil {
			t.Fatal(err)
		}
		_, hasTools := first["tools"]
		if off {
			if hasTools {
				t.Error("tools off: the request still offers tools")
			}
			if len(outs) != 1 || outs[0].Status != channel.Denied || outs[0].Rule != "limit.tools-off" {
				t.Errorf("tools off: %+v; want the call denied by limit.tools-off", outs)
			}
			continue
		}
		if !hasTools || len(outs) != 1 || outs[0].Status != channel.Ran {
			t.Errorf("tools on: offered %v, outcomes %+v; want the call to run", hasTools, outs)
		}
	}
}

// TestTurnMaxCalls: MaxCalls (the owner's /budget N) lowers a turn's
// tool-call budget: with 1, the second call is refused by the budget;
// the twin without it runs both.
func TestTurnMaxCalls(t *testing.T) {
	for _, max := range []int{1, 0} {
		r := newTestRuntime(t, "autopilot")
		r.Config.Memory.Capture = "off"
		writeWorkspaceFile(t, r, "notes/a.md", "alpha\n")
		read := proposal{"read_file", `{"path":"notes/a.md"}`}
		runServer(t, r, script(read, read)...)
		res, err := r.Run(context.Background(), channel.TurnRequest{Text: "read it twice", MaxCalls: max})
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if max == 1 {
			want = 1
		}
		if res.Calls != want || (max == 1) != (res.MaxCalls == 1) {
			t.Errorf("MaxCalls %d: %d calls of %d; want %d", max, res.Calls, res.MaxCalls, want)
		}
	}
}
