package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/policy"
)

// TestSmartCodingSessionGrant is issue 22's "smart mode for coding": in
// smart mode the model writes a file, runs `make` (a command that runs
// code, graded: bwrap's overlay, no network) and the owner approves it for
// the session; after an edit the same command runs again without a card.
// The grant decides the call, never its effects: a run of the same
// command whose Makefile now plants a git hook is HELD (critical) for
// apply_changes, whose card is critical, exactly as without a grant.
// Twins: another argv is not covered (asks again); always is refused;
// TestSmartCodingHostStaysOnceOnly runs the same command ungraded.
func TestSmartCodingSessionGrant(t *testing.T) {
	r := newGateRuntime(t, "smart")
	ctx := t.Context()
	root := r.Config.Workspace.Roots[0].Path
	do := func(tool, args string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: tool, Args: args, Session: "s"})
	}
	// A write the owner approves once: the model's edits.
	write := func(rel, content string) {
		t.Helper()
		args := fmt.Sprintf(`{"path":%q,"content":%q}`, rel, content)
		out := do("write_file", args)
		wantDecision(t, out, "pending", "mode.smart")
		if _, err := r.Owner.Approve(ctx, out.ApprovalID, "once"); err != nil {
			t.Fatal(err)
		}
		wantApplied(t, r, do("write_file", args), rel)
	}
	makeAll := `{"program":"make","args":["all"]}`
	write("src.txt", "v1\n")
	write("Makefile", "all:\n\tcp src.txt out.txt\n")

	out := do("run_command", makeAll)
	wantDecision(t, out, "pending", "mode.smart.runs-code")
	card := r.card(ctx, "run_command", out)
	if card.OnceOnly || !card.Allows(channel.Session) || card.Allows(channel.Always) {
		t.Fatalf("graded make card: OnceOnly %v, session %v, always %v; want session but not always",
			card.OnceOnly, card.Allows(channel.Session), card.Allows(channel.Always))
	}
	if !strings.Contains(card.Covers, "make all") || !strings.Contains(card.Covers, "no network") ||
		!strings.Contains(card.Covers, "anything above medium is held for you") || !strings.Contains(out.Plan, "a session approval covers: make all") {
		t.Errorf("card Covers = %q, plan %q; want the command, no network and what is still held", card.Covers, out.Plan)
	}
	var labels []string
	for _, b := range chats.CardButtons(card) {
		labels = append(labels, b.Label)
	}
	if strings.Join(labels, ",") != "Approve once,This session,Deny" {
		t.Errorf("chat buttons %q; want once, session and deny", labels)
	}
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "always"); !errors.Is(err, approval.ErrScopeNotAllowed) {
		t.Fatalf("approve make always: %v; want ErrScopeNotAllowed", err)
	}
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "session"); err != nil {
		t.Fatal(err)
	}
	out = do("run_command", makeAll)
	wantDecision(t, out, "ran", "approval.once")
	wantApplied(t, r, out, "out.txt")

	// The edit, then the same command: no card, the grant decides.
	write("src.txt", "v2\n")
	out = do("run_command", makeAll)
	wantDecision(t, out, "ran", "grant.")
	wantApplied(t, r, out, "out.txt")
	if b, _ := os.ReadFile(filepath.Join(root, "out.txt")); string(b) != "v2\n" {
		t.Errorf("out.txt = %q after the covered run; want v2", b)
	}

	// Another argv is not covered: it asks again.
	wantDecision(t, do("run_command", `{"program":"make","args":["install"]}`), "pending", "mode.smart.runs-code")
	wantDecision(t, do("run_command", `{"program":"make","args":["-B","all"]}`), "pending", "mode.smart.runs-code")

	// The same command, now planting a hook: it runs under the grant, and
	// its change set is held, critical, the hook not on the disk.
	write("Makefile", "all:\n\tcp src.txt out2.txt\n\tmkdir -p .husky/_ && printf '#!/bin/sh\\n' > .husky/_/pre-commit\n")
	out = do("run_command", makeAll)
	wantDecision(t, out, "ran", "grant.")
	text := resultText(out)
	if !strings.Contains(text, "NOT applied") || !strings.Contains(text, "critical") {
		t.Fatalf("the hook-planting run under the grant: %q; want its changes held, critical", text)
	}
	for _, rel := range []string{".husky/_/pre-commit", "out2.txt"} {
		if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
			t.Errorf("%s reached the disk under a session grant", rel)
		}
	}
	id := regexp.MustCompile(`cs_[0-9a-f]{16}`).FindString(text)
	if id == "" {
		t.Fatalf("no held change set named in %q", text)
	}
	out = do("apply_changes", `{"id":"`+id+`"}`)
	if out.Decision != arbiter.Pending || out.Risk != policy.RiskCritical.String() {
		t.Errorf("apply_changes of the held set: %s %s (risk %s); want a critical card", out.Decision, out.Rule, out.Risk)
	}
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "session"); !errors.Is(err, approval.ErrScopeNotAllowed) {
		t.Errorf("approve the held hook for the session: %v; want ErrScopeNotAllowed", err)
	}
}

// TestSmartCodingHostStaysOnceOnly: the same command on the host backend
// (no overlay, nothing graded, the machine's network) stays once-only:
// its card offers once and deny, and session is refused.
func TestSmartCodingHostStaysOnceOnly(t *testing.T) {
	r := newTestRuntime(t, "smart")
	r.Config.Sandbox.Backend = "host"
	writeWorkspaceFile(t, r, "Makefile", "all:\n\ttrue\n")
	out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"make","args":["all"]}`, Session: "s"})
	wantDecision(t, out, "pending", "mode.smart.runs-code")
	if !strings.Contains(out.Plan, "only a one-time approval can run it") {
		t.Errorf("host plan %q does not say it is once only", out.Plan)
	}
	card := r.card(t.Context(), "run_command", out)
	if !card.OnceOnly || card.Allows(channel.Session) || strings.Contains(card.Covers, "no network") {
		t.Errorf("host make card: OnceOnly %v, session %v, Covers %q; want once only, no claim of a copy without network", card.OnceOnly, card.Allows(channel.Session), card.Covers)
	}
	if _, err := r.Owner.Approve(t.Context(), out.ApprovalID, "session"); !errors.Is(err, approval.ErrScopeNotAllowed) {
		t.Fatalf("approve make on the host for the session: %v; want ErrScopeNotAllowed", err)
	}
}
