package app

import (
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// TestChatsGuestTokenBudget: a guest's turn whose model call reports more
// tokens than [agent] guest_max_tokens (default 20000) is cut after that
// call: its tool call is not run, no second model call is made, and the
// reply in the group says the token budget stopped it. The twin: the
// owner's turn with the same usage is not cut (max_tokens is 0, no limit)
// and runs its call and a second model call.
func TestChatsGuestTokenBudget(t *testing.T) {
	big := &llm.Usage{Input: 15000, Output: 6000}
	heavy := func() llmtest.Turn {
		tc := toolCall("c1", "list_dir", `{"path":"."}`)
		tc.Text = []string{"Let me look. "}
		tc.Usage = big
		return tc
	}
	rig := newChatRig(t,
		openAI(heavy()),
		openAI(heavy()),
		openAI(llmtest.Turn{Text: []string{"owner answer"}, Usage: big}),
	)
	if rig.r.Config.Agent.GuestMaxTokens != 20000 || rig.r.Config.Agent.MaxTokens != 0 {
		t.Fatalf("agent config = %+v; want the defaults (guest 20000 tokens, owner no limit)", rig.r.Config.Agent)
	}
	rig.r.Config.Channels.Of("telegram").Groups = []string{"-5"}
	pairOwner(t, rig.r, "100")

	rig.push(groupMsg("1", "-5", "300", "@homard_bot list the files", true))
	waitFor(t, "the guest reply", func() bool { return len(rig.fake.sentTexts("-5")) > 0 })
	guest := strings.Join(rig.fake.sentTexts("-5"), "\n")
	if !strings.HasPrefix(guest, "Let me look.") || !strings.Contains(guest, "token budget of this turn is spent") ||
		!strings.Contains(guest, "agent.guest_max_tokens") {
		t.Errorf("guest reply = %q; want the text so far and a note naming agent.guest_max_tokens", guest)
	}
	if n := len(rig.srv.Requests()); n != 1 {
		t.Errorf("model requests after the guest turn = %d; want 1 (cut after the first call)", n)
	}

	rig.push(dm("2", "100", "list the files"))
	waitFor(t, "the owner reply", func() bool { return containsText(rig.fake.sentTexts("100"), "owner answer") })
	rig.stop()
	owner := strings.Join(rig.fake.sentTexts("100"), "\n")
	if strings.Contains(owner, "stopped this turn early") {
		t.Errorf("owner reply = %q; want it not cut (no owner token limit)", owner)
	}
	if n := len(rig.srv.Requests()); n != 3 {
		t.Errorf("model requests = %d; want 3 (the owner's turn made two)", n)
	}
	rules := auditRules(t, rig.r)
	if countOf(rules, policy.RuleBudgetTokens) != 1 {
		t.Errorf("audit rules = %q; want the guest's call refused once as %s", rules, policy.RuleBudgetTokens)
	}
}

// TestTurnBudget: the owner's turn keeps [agent]'s budget and no token
// limit unless max_tokens is set; any other turn gets the guest budget,
// never without a token limit.
func TestTurnBudget(t *testing.T) {
	base := struct{ calls, units, reserve int }{24, 48, 8}
	for _, tc := range []struct {
		name          string
		trust         policy.Trust
		maxTokens     int
		guestTokens   int
		guestCalls    int
		wantCalls     int
		wantTokens    int
		wantSettingIs string
	}{
		{"owner, no limit", policy.TrustOwner, 0, 20000, 4, 24, 0, ""},
		{"owner, max_tokens set", policy.TrustOwner, 50000, 20000, 4, 24, 50000, ""},
		{"guest", policy.TrustGuest, 0, 20000, 4, 4, 20000, "agent.guest_max_tokens"},
		{"guest ignores the owner's max_tokens", policy.TrustGuest, 90000, 5000, 2, 2, 5000, "agent.guest_max_tokens"},
		{"unknown gets the guest budget", policy.TrustUnknown, 0, 20000, 4, 4, 20000, "agent.guest_max_tokens"},
		{"guest calls never above max_calls", policy.TrustGuest, 0, 20000, 99, 24, 20000, "agent.guest_max_tokens"},
		{"guest with an unvalidated zero still limited", policy.TrustGuest, 0, 0, 0, 4, 20000, "agent.guest_max_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := config.Agent{MaxCalls: base.calls, MaxUnits: base.units, ReserveUnits: base.reserve,
				MaxTokens: tc.maxTokens, GuestMaxTokens: tc.guestTokens, GuestMaxCalls: tc.guestCalls}
			b := turnBudget(a, tc.trust)
			if b.MaxCalls != tc.wantCalls || b.MaxTokens != tc.wantTokens || b.TokensSetting != tc.wantSettingIs || b.MaxUnits != base.units {
				t.Errorf("turnBudget(%+v, %s) = %+v; want %d calls, %d units, %d tokens named %q",
					a, tc.trust, b, tc.wantCalls, base.units, tc.wantTokens, tc.wantSettingIs)
			}
		})
	}
}
