package policy

import (
	"fmt"
	"strings"
	"testing"
)

// fetch makes the Input a medium-risk http_get, send a medium-risk
// outbound message; private marks the session as holding private data.
func fetch(i *Input) {
	i.Tool, i.Action, i.Risk, i.ReadOnly, i.Targets = "http_get", ActionFetch, RiskMedium, false, []string{"https://example.com"}
}

func send(i *Input) {
	i.Tool, i.Action, i.Risk, i.ReadOnly, i.Targets = "send_message", ActionSend, RiskMedium, false, nil
}

func private(i *Input) { i.Private = true }

func readOnlyLow(i *Input) { i.ReadOnly, i.Risk = true, RiskLow }

func TestDecidePrivateEgress(t *testing.T) {
	const taint = "taint.private-egress"
	web := allowRule("web", "http_get", "")
	checkDecide(t, []decideCase{
		// Autopilot: the rule this exists for.
		{"autopilot fetch, private", in(fetch, mode(ModeAutopilot), private), Ask, taint},
		{"autopilot send, private", in(send, mode(ModeAutopilot), private), Ask, taint},
		{"autopilot fetch, public session", in(fetch, mode(ModeAutopilot)), Allow, "mode.autopilot"},
		{"autopilot send, public session", in(send, mode(ModeAutopilot)), Allow, "mode.autopilot"},
		{"autopilot low-risk fetch, private", in(fetch, risk(RiskLow), mode(ModeAutopilot), private), Ask, taint},
		{"autopilot read-only low-risk fetch, private", in(fetch, readOnlyLow, mode(ModeAutopilot), private), Ask, taint},
		{"autopilot high-risk fetch, private", in(fetch, risk(RiskHigh), mode(ModeAutopilot), private), Ask, taint},
		{"autopilot fetch, private, allow rule", in(fetch, mode(ModeAutopilot), private, rules(web)), Allow, "rule.web"},
		{"autopilot high-risk fetch, private, allow rule", in(fetch, risk(RiskHigh), mode(ModeAutopilot), private, rules(web)), Allow, "rule.web"},
		{"autopilot fetch, private, allow rule for another tool", in(fetch, mode(ModeAutopilot), private, rules(allowRule("w", "web_search", ""))), Ask, taint},
		{"autopilot fetch, private, ask rule", in(fetch, mode(ModeAutopilot), private, rules(askRule("a", "http_get", ""))), Ask, "rule.a"},
		{"autopilot fetch, private, deny rule", in(fetch, mode(ModeAutopilot), private, rules(denyRule("d", "http_get", ""))), Deny, "rule.d"},
		{"autopilot critical fetch, private", in(fetch, risk(RiskCritical), mode(ModeAutopilot), private, rules(web)), Ask, "risk.critical"},
		// Private data only matters on the way out.
		{"autopilot read, private", in(mode(ModeAutopilot), private), Allow, "mode.autopilot.read"},
		{"autopilot write, private", in(write, mode(ModeAutopilot), private), Allow, "mode.autopilot"},
		{"autopilot exec, private", in(func(i *Input) { i.Tool, i.Action, i.Risk, i.ReadOnly = "run_command", ActionExec, RiskMedium, false },
			mode(ModeAutopilot), private), Allow, "mode.autopilot"},

		// Safe and smart ask anyway, under their own rule ids.
		{"safe fetch, private", in(fetch, mode(ModeSafe), private), Ask, "mode.safe"},
		{"safe fetch, private, allow rule", in(fetch, mode(ModeSafe), private, rules(web)), Ask, "mode.safe"},
		{"safe read-only low-risk fetch, private", in(fetch, readOnlyLow, mode(ModeSafe), private), Ask, "mode.safe"},
		{"safe read-only low-risk fetch, public", in(fetch, readOnlyLow, mode(ModeSafe)), Allow, "mode.safe.read"},
		{"smart fetch, private", in(fetch, mode(ModeSmart), private), Ask, "mode.smart"},
		{"smart send, private", in(send, mode(ModeSmart), private), Ask, "mode.smart"},
		{"smart fetch, private, allow rule", in(fetch, mode(ModeSmart), private, rules(web)), Allow, "rule.web"},
		{"smart read-only low-risk fetch, private", in(fetch, readOnlyLow, mode(ModeSmart), private), Ask, "mode.smart"},
		{"smart read-only low-risk fetch, private, allow rule", in(fetch, readOnlyLow, mode(ModeSmart), private, rules(web)), Allow, "rule.web"},

		// Yolo: the owner chose to be asked only for critical actions.
		{"yolo fetch, private", in(fetch, mode(ModeYolo), private), Allow, "mode.yolo"},
		{"yolo send, private", in(send, mode(ModeYolo), private), Allow, "mode.yolo"},
		{"yolo critical fetch, private", in(fetch, risk(RiskCritical), mode(ModeYolo), private), Ask, "risk.critical"},
		{"yolo fetch, private, ask rule", in(fetch, mode(ModeYolo), private, rules(askRule("a", "http_get", ""))), Ask, "rule.a"},

		// A guest is not the owner who chose the mode: a listed read-only
		// fetch from a private session asks in every mode.
		{"guest listed read-only fetch, private, yolo", in(fetch, readOnlyLow, trust(TrustGuest), guests("http_get"), mode(ModeYolo), private), Ask, taint},
		{"guest listed read-only fetch, public", in(fetch, readOnlyLow, trust(TrustGuest), guests("http_get"), mode(ModeYolo)), Allow, "trust.guest-tools"},
		{"guest listed medium fetch, private", in(fetch, trust(TrustGuest), guests("http_get"), mode(ModeAutopilot), private), Deny, "trust.guest-readonly"},
	})
}

// TestPrivateNeverLoosens: for every mode, trust, action, risk, read-only
// flag and rule, a private session is decided at least as strictly as the
// same call in a public one, and differently only for outbound actions.
func TestPrivateNeverLoosens(t *testing.T) {
	strictness := map[Verdict]int{Allow: 0, Ask: 1, Deny: 2}
	ruleSets := [][]Rule{nil, {allowRule("r", "t", "")}, {askRule("r", "t", "")}, {denyRule("r", "t", "")}}
	actions := []Action{ActionRead, ActionWrite, ActionExec, ActionFetch, ActionSend}
	for _, m := range Modes {
		for _, tr := range []Trust{TrustOwner, TrustGuest} {
			for _, a := range actions {
				for r := RiskLow; r <= RiskCritical; r++ {
					for _, ro := range []bool{true, false} {
						for _, rs := range ruleSets {
							base := Input{Tool: "t", Action: a, Risk: r, ReadOnly: ro, Trust: tr, Mode: m, Rules: rs, Guest: []string{"t"}}
							priv := base
							priv.Private = true
							pub, got := Decide(base), Decide(priv)
							name := fmt.Sprintf("%s/%s/%s/%s/read-only=%v/rules=%v", m, tr, a, r, ro, rs)
							if strictness[got.Verdict] < strictness[pub.Verdict] {
								t.Errorf("%s: private %v is looser than public %v", name, got, pub)
							}
							if a != ActionFetch && a != ActionSend && got != pub {
								t.Errorf("%s: private %v differs from public %v for a non-outbound action", name, got, pub)
							}
						}
					}
				}
			}
		}
	}
}

// TestDecidePrivateValue: with per-value taint the ask names the text's
// source under its own rule; it keeps every place the session mark has
// (allow rules for the host lift it, deny and ask rules come first, safe
// and smart ask under their own rule), and a request carrying nothing
// private (Private false) is the twin that runs in autopilot.
func TestDecidePrivateValue(t *testing.T) {
	carries := func(i *Input) { i.Private, i.PrivateText = true, "the file notes/bank.txt, base64-encoded" }
	checkDecide(t, []decideCase{
		{"autopilot fetch carrying the note", in(fetch, mode(ModeAutopilot), carries), Ask, "taint.private-value"},
		{"autopilot send carrying the note", in(send, mode(ModeAutopilot), carries), Ask, "taint.private-value"},
		{"guest listed read-only fetch carrying the note", in(fetch, readOnlyLow, trust(TrustGuest), guests("http_get"), mode(ModeYolo), carries), Ask, "taint.private-value"},
		{"autopilot fetch carrying the note, allow rule", in(fetch, mode(ModeAutopilot), carries, rules(allowRule("web", "http_get", ""))), Allow, "rule.web"},
		{"autopilot fetch carrying the note, deny rule", in(fetch, mode(ModeAutopilot), carries, rules(denyRule("d", "http_get", ""))), Deny, "rule.d"},
		{"smart fetch carrying the note", in(fetch, mode(ModeSmart), carries), Ask, "mode.smart"},
		{"autopilot fetch carrying nothing private", in(fetch, mode(ModeAutopilot)), Allow, "mode.autopilot"},
	})
	d := Decide(Input{Tool: "http_get", Action: ActionFetch, Risk: RiskMedium, Trust: TrustOwner, Mode: ModeAutopilot,
		Private: true, PrivateText: "the file notes/bank.txt, base64-encoded"})
	if want := "carries text read from the file notes/bank.txt, base64-encoded"; !strings.Contains(d.Reason, want) {
		t.Errorf("reason %q does not say %q", d.Reason, want)
	}
}
