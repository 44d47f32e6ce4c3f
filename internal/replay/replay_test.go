package replay

import (
	"reflect"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// call makes a recorded call from a Plan as tool.NewPlan writes it.
func call(t *testing.T, run string, spec tool.PlanSpec, private bool) Call {
	t.Helper()
	spec.Body = map[string]string{"x": "y"}
	p, err := tool.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	return Call{Run: run, At: time.Unix(1, 0), Trust: policy.TrustOwner, Private: private, Plan: p.Canonical(), Display: p.Display()}
}

func runs(r Result) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, c.Run+" "+string(c.Before.Verdict)+">"+string(c.After.Verdict))
	}
	return out
}

// TestReplayStricterAndLooser: a recorded history decided under smart
// and then under a stricter (safe) and a looser (autopilot, an allow rule)
// policy lists exactly the calls whose verdict changes, and counts the
// rest; a read stays a read, a critical call asks under every policy, and
// a fetch after private data still asks in autopilot.
func TestReplayStricterAndLooser(t *testing.T) {
	history := []Call{
		call(t, "run_1", tool.PlanSpec{Tool: "read_file", Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true, Targets: []string{"notes/a.md"}}, false),
		call(t, "run_2", tool.PlanSpec{Tool: "write_file", Action: policy.ActionWrite, Risk: policy.RiskMedium, Targets: []string{"notes/a.md"}}, false),
		call(t, "run_3", tool.PlanSpec{Tool: "http_get", Action: policy.ActionFetch, Risk: policy.RiskMedium, Targets: []string{"https://example.com"}}, false),
		call(t, "run_4", tool.PlanSpec{Tool: "http_get", Action: policy.ActionFetch, Risk: policy.RiskMedium, Targets: []string{"https://example.com"}}, true),
		call(t, "run_5", tool.PlanSpec{Tool: "write_file", Action: policy.ActionWrite, Risk: policy.RiskCritical, Targets: []string{"src/main.go"}}, false),
		call(t, "run_6", tool.PlanSpec{Tool: "run_command", Action: policy.ActionExec, Risk: policy.RiskLow, Class: policy.ClassRead, ReadOnly: true,
			Command: []string{"/usr/bin/ls"}, Targets: []string{"."}}, false),
		{Run: "run_7", Plan: []byte(`{"not":"a plan"}`)},
	}
	smart := Policy{Mode: policy.ModeSmart, PrivateEgress: "ask"}
	safe := Policy{Mode: policy.ModeSafe, PrivateEgress: "ask"}
	autopilot := Policy{Mode: policy.ModeAutopilot, PrivateEgress: "ask"}
	allowNotes := Policy{Mode: policy.ModeSmart, PrivateEgress: "ask",
		Rules: []policy.Rule{{ID: "notes", Tool: "write_file", Path: "notes/**", Effect: policy.Allow}}}

	stricter := Replay(history, smart, safe)
	if got := runs(stricter); len(got) != 0 || stricter.Replayed != 6 || stricter.Skipped != 1 {
		t.Errorf("smart → safe: changes %q, %d replayed, %d skipped; want none (smart already asks for each), 6, 1", got, stricter.Replayed, stricter.Skipped)
	}
	looser := Replay(history, smart, autopilot)
	if got, want := runs(looser), []string{"run_2 ask>allow", "run_3 ask>allow"}; !reflect.DeepEqual(got, want) {
		t.Errorf("smart → autopilot: %q; want %q (the private fetch and the critical write still ask)", got, want)
	}
	if c := looser.Changes[0]; c.Tool != "write_file" || c.After.Rule != "mode.autopilot" {
		t.Errorf("change %+v; want write_file now allowed by mode.autopilot", c)
	}
	rule := Replay(history, smart, allowNotes)
	if got, want := runs(rule), []string{"run_2 ask>allow"}; !reflect.DeepEqual(got, want) {
		t.Errorf("smart → an allow rule for notes/**: %q; want %q", got, want)
	}
	back := Replay(history, autopilot, safe)
	if got, want := runs(back), []string{"run_2 allow>ask", "run_3 allow>ask"}; !reflect.DeepEqual(got, want) {
		t.Errorf("autopilot → safe: %q; want %q", got, want)
	}
	if got := runs(Replay(history, autopilot, Policy{Mode: policy.ModeAutopilot, PrivateEgress: "allow"})); !reflect.DeepEqual(got, []string{"run_4 ask>allow"}) {
		t.Errorf("private_egress ask → allow: %q; want the private fetch to run", got)
	}
}
