package app

import (
	"context"
	"strings"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/owner"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/totp"
)

// TestChatsCodeCard: with permissions.totp = "medium", a write's card in
// the owner's chat cannot be approved by a button (it carries no code):
// the press is refused in place with where to approve, the approval stays
// pending and the card open; Deny still answers it and the turn goes on.
// The twin, the same card approved by its button without a code, is
// TestChatsApprovalCard.
func TestChatsCodeCard(t *testing.T) {
	rig := newChatRig(t,
		openAI(toolCall("c1", "write_file", `{"path":"notes/a.txt","content":"hello\n"}`)),
		openAI(llmtest.Turn{Text: []string{"not written"}}),
	)
	r := rig.r
	r.Owner = owner.New(owner.Deps{Owner: r.Config.Owner, Store: r.Store, Approvals: r.Approvals, Now: r.now,
		TOTP: &totp.Service{Store: r.Store, Key: r.Vault.DerivedKey, Now: r.now}, CodeFrom: policy.RiskMedium})
	pairOwner(t, r, "100")
	rig.push(dm("1", "100", "write the note"))
	card := sentCard(t, rig.fake, "100")
	id, _, _, _ := parseButton(card.Out.Buttons[0].Data)
	rig.push(press("p1", "100", "100", card.ID, card.Out.Buttons[0].Data, true))
	waitFor(t, "ack of the approve press", func() bool { _, ok := rig.fake.ackFor("cb-p1"); return ok })
	if n, _ := rig.fake.ackFor("cb-p1"); !strings.Contains(n, "authenticator") || !strings.Contains(n, "homard approval approve "+id+" --code CODE") {
		t.Errorf("approve press ack %q; want where to approve with a code", n)
	}
	if a, _ := r.Owner.Approval(context.Background(), id); a.Status != approval.Pending {
		t.Fatalf("after the press the approval is %s; want pending", a.Status)
	}
	if _, edits, _, _, _ := rig.fake.snapshot(); len(edits) != 0 {
		t.Errorf("edits = %+v; want the card left open", edits)
	}
	deny := card.Out.Buttons[len(card.Out.Buttons)-1].Data
	rig.push(press("p2", "100", "100", card.ID, deny, true))
	waitFor(t, "the reply", func() bool { return containsText(rig.fake.sentTexts("100"), "not written") })
	if n, _ := rig.fake.ackFor("cb-p2"); n != "Denied" {
		t.Errorf("deny press ack %q; want Denied", n)
	}
}
