package policy

import (
	"fmt"
	"strings"
	"testing"
)

func ceiling(s string) func(*Input) {
	return func(i *Input) {
		c, err := ParseCeiling(s)
		if err != nil {
			panic(err)
		}
		i.Ceiling = c
	}
}

func TestReachOf(t *testing.T) {
	tests := []struct {
		act      Action
		readOnly bool
		class    Class
		want     Reach
	}{
		{ActionRead, true, ClassNone, ReachRead}, // read_file, current_time
		{ActionRead, false, ClassNone, ReachWrite},
		{ActionWrite, false, ClassNone, ReachWrite}, // write_file, apply_changes
		{ActionExec, true, ClassRead, ReachRead},    // run_command "git status"
		{ActionExec, true, ClassWrite, ReachWrite},  // a write-class command never counts as a read
		{ActionExec, true, ClassRunsCode, ReachWrite},
		{ActionExec, false, ClassRunsCode, ReachWrite},
		{ActionFetch, false, ClassNone, ReachNetwork}, // http_get, web_search
		{ActionFetch, true, ClassNone, ReachNetwork},  // read-only says nothing about egress
		{ActionSend, true, ClassNone, ReachSend},      // an MCP tool listed read-only still sends
		{ActionSend, false, ClassNone, ReachSend},
		{Action("teleport"), true, ClassNone, ReachSend}, // unknown: fail closed
		{Action(""), true, ClassNone, ReachSend},
	}
	for _, tt := range tests {
		if got := ReachOf(tt.act, tt.readOnly, tt.class); got != tt.want {
			t.Errorf("ReachOf(%q, %v, %v) = %v; want %v", tt.act, tt.readOnly, tt.class, got, tt.want)
		}
	}
}

func TestParseCeiling(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"read", "read"},
		{"write", "write"},
		{"network", "network"},
		{"send", "send"},
		{"network:api.weather.example", "network:api.weather.example"},
		{"network:b.example,*.example.org,b.example", "network:*.example.org,b.example"},
		{"network:192.168.1.20", "network:192.168.1.20"},
	} {
		c, err := ParseCeiling(tt.in)
		if err != nil || c.String() != tt.want {
			t.Errorf("ParseCeiling(%q) = %q, %v; want %q", tt.in, c, err, tt.want)
			continue
		}
		if back, err := ParseCeiling(c.String()); err != nil || back.String() != c.String() {
			t.Errorf("ParseCeiling(%q) = %q, %v; want it back", c, back, err)
		}
	}
	for _, bad := range []string{"READ", "exec", "none", "write:a.example", "send:a.example", "network:", "network:a.example,",
		"network:https://a.example", "network:a.example:443", "network:*.com", "network:A.example", "network:a.example/x", "read "} {
		if c, err := ParseCeiling(bad); err == nil {
			t.Errorf("ParseCeiling(%q) = %q; want an error", bad, c)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, tt := range []struct {
		in   []Reach
		want string
	}{
		{nil, "read"},
		{[]Reach{ReachRead, ReachRead}, "read"},
		{[]Reach{ReachRead, ReachWrite}, "write"},
		{[]Reach{ReachNetwork, ReachWrite}, "network"},
		{[]Reach{ReachSend, ReachRead}, "send"},
	} {
		if got := Covers(tt.in...).String(); got != tt.want {
			t.Errorf("Covers(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestDecideCeiling: a call above the task's ceiling is denied by
// ceiling.exceeded in every mode, before any allow rule, grant-free ask
// or critical ask; a call at or under it is decided as without one.
func TestDecideCeiling(t *testing.T) {
	const exceeded = "ceiling.exceeded"
	web := Rule{ID: "web", Tool: "http_get", Host: "api.weather.example", Effect: Allow}
	weather := func(i *Input) { fetch(i); i.Targets = []string{"https://api.weather.example"} }
	evil := func(i *Input) { fetch(i); i.Targets = []string{"https://evil.example:8443"} }
	critical := func(i *Input) {
		i.Tool, i.Action, i.Risk, i.ReadOnly = "apply_changes", ActionWrite, RiskCritical, false
	}
	checkDecide(t, []decideCase{
		{"read under read", in(ceiling("read")), Allow, "mode.safe.read"},
		{"write under read, safe", in(write, ceiling("read")), Deny, exceeded},
		{"write under read, yolo", in(write, mode(ModeYolo), ceiling("read")), Deny, exceeded},
		{"write under read, allow rule", in(write, mode(ModeSmart), ceiling("read"), rules(allowRule("w", "write_file", ""))), Deny, exceeded},
		{"critical write under read", in(critical, mode(ModeYolo), ceiling("read")), Deny, exceeded},
		{"write under write, autopilot", in(write, mode(ModeAutopilot), ceiling("write")), Allow, "mode.autopilot"},
		{"write under write, safe asks", in(write, ceiling("write")), Ask, "mode.safe"},
		{"critical under write asks", in(critical, mode(ModeYolo), ceiling("write")), Ask, "risk.critical"},
		{"read-only command under read", in(func(i *Input) {
			i.Tool, i.Action, i.Risk, i.ReadOnly, i.Class = "run_command", ActionExec, RiskLow, true, ClassRead
		}, ceiling("read")), Allow, "mode.safe.read"},
		{"write command under read", in(func(i *Input) {
			i.Tool, i.Action, i.Risk, i.ReadOnly, i.Class = "run_command", ActionExec, RiskMedium, true, ClassWrite
		}, mode(ModeYolo), ceiling("read")), Deny, exceeded},
		{"fetch under write", in(fetch, mode(ModeYolo), ceiling("write")), Deny, exceeded},
		{"fetch under write, host allow rule", in(weather, mode(ModeSmart), ceiling("write"), rules(web)), Deny, exceeded},
		{"fetch under network", in(fetch, mode(ModeAutopilot), ceiling("network")), Allow, "mode.autopilot"},
		{"fetch of a named host", in(weather, mode(ModeAutopilot), ceiling("network:api.weather.example")), Allow, "mode.autopilot"},
		{"fetch under a host pattern", in(weather, mode(ModeAutopilot), ceiling("network:*.weather.example")), Allow, "mode.autopilot"},
		{"fetch of another host", in(evil, mode(ModeYolo), ceiling("network:api.weather.example")), Deny, exceeded},
		{"fetch of another host, allow rule for it", in(evil, mode(ModeSmart), ceiling("network:api.weather.example"),
			rules(Rule{ID: "evil", Tool: "http_get", Host: "evil.example", Effect: Allow})), Deny, exceeded},
		{"fetch of the pattern's own name", in(func(i *Input) { fetch(i); i.Targets = []string{"https://weather.example"} },
			mode(ModeYolo), ceiling("network:*.weather.example")), Deny, exceeded},
		{"fetch with one target off the list", in(func(i *Input) {
			fetch(i)
			i.Targets = []string{"https://api.weather.example", "https://evil.example"}
		}, mode(ModeYolo), ceiling("network:api.weather.example")), Deny, exceeded},
		{"fetch naming no host", in(fetch, targets(), mode(ModeYolo), ceiling("network:api.weather.example")), Deny, exceeded},
		{"fetch of an unreadable target", in(fetch, targets("api.weather.example"), mode(ModeYolo), ceiling("network:api.weather.example")), Deny, exceeded},
		{"write under network with hosts", in(write, mode(ModeAutopilot), ceiling("network:api.weather.example")), Allow, "mode.autopilot"},
		{"send under network", in(send, mode(ModeYolo), ceiling("network")), Deny, exceeded},
		{"send under send", in(send, mode(ModeYolo), ceiling("send")), Allow, "mode.yolo"},
		{"fetch of any host under send", in(evil, mode(ModeYolo), ceiling("send")), Allow, "mode.yolo"},
		{"unknown action under send", in(func(i *Input) { i.Action = "teleport"; i.ReadOnly = false }, mode(ModeYolo), ceiling("send")), Allow, "mode.yolo"},
		{"unknown action under network", in(func(i *Input) { i.Action = "teleport" }, mode(ModeYolo), ceiling("network")), Deny, exceeded},
		// The hard refusals before it keep their own ids.
		{"unknown caller under read", in(write, trust(TrustUnknown), ceiling("read")), Deny, "trust.unknown"},
	})
	d := Decide(in(write, mode(ModeYolo), ceiling("read")))
	if want := "this call writes files or runs a command; the task's ceiling is read"; d.Reason != want {
		t.Errorf("reason = %q; want %q", d.Reason, want)
	}
	d = Decide(in(evil, mode(ModeYolo), ceiling("network:api.weather.example")))
	if !strings.Contains(d.Reason, "evil.example") || !strings.Contains(d.Reason, "network:api.weather.example") {
		t.Errorf("reason = %q; want it to name the host and the ceiling", d.Reason)
	}
}

// TestCeilingNeverLoosens: for every mode, action, risk, read-only flag,
// class, rule set and ceiling, a call decided under a ceiling is decided
// exactly as without one when its class is at or under the ceiling, and
// is denied by ceiling.exceeded when it is above; the zero ceiling
// changes nothing.
func TestCeilingNeverLoosens(t *testing.T) {
	ruleSets := [][]Rule{nil, {allowRule("r", "t", "")}, {askRule("r", "t", "")}, {denyRule("r", "t", "")}}
	actions := []Action{ActionRead, ActionWrite, ActionExec, ActionFetch, ActionSend}
	ceilings := []Ceiling{{}, {Reach: ReachRead}, {Reach: ReachWrite}, {Reach: ReachNetwork}, {Reach: ReachSend}}
	for _, m := range Modes {
		for _, a := range actions {
			for r := RiskLow; r <= RiskCritical; r++ {
				for _, ro := range []bool{true, false} {
					for _, cl := range []Class{ClassNone, ClassRead, ClassWrite, ClassRunsCode} {
						for _, rs := range ruleSets {
							for _, c := range ceilings {
								base := Input{Tool: "t", Action: a, Risk: r, ReadOnly: ro, Class: cl, Trust: TrustOwner, Mode: m, Rules: rs,
									Targets: []string{"https://example.com"}}
								under := base
								under.Ceiling = c
								free, got := Decide(base), Decide(under)
								name := fmt.Sprintf("%s/%s/%s/read-only=%v/%v/rules=%v/ceiling=%q", m, a, r, ro, cl, rs, c)
								above := !c.IsZero() && ReachOf(a, ro, cl) > c.Reach
								switch {
								case above && (got.Verdict != Deny || got.Rule != RuleCeilingExceeded):
									t.Errorf("%s: %v; want deny (ceiling.exceeded)", name, got)
								case !above && got != free:
									t.Errorf("%s: %v; want %v, as without a ceiling", name, got, free)
								}
							}
						}
					}
				}
			}
		}
	}
}
