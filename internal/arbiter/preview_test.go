package arbiter_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/policy"
)

// TestPendingCardCarriesThePreview: a write waiting for the owner carries
// its diff in the Outcome and in the stored approval; the approval still
// binds the Plan's hash (the preview is not part of it), and a secret in
// the file the diff is taken against is redacted from the preview.
func TestPendingCardCarriesThePreview(t *testing.T) {
	f := newFixture(t, policy.ModeSafe, nil)
	const pat = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	if err := os.WriteFile(filepath.Join(f.root, "a.md"), []byte("token "+pat+"\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const args = `{"path":"a.md","content":"new\n"}`
	out := f.decide(t, "write_file", args)
	if out.Decision != arbiter.Pending {
		t.Fatalf("outcome %+v; want pending", out)
	}
	for _, want := range []string{"--- a.md\n+++ a.md\n", "\n-old\n", "\n+new\n"} {
		if !strings.Contains(out.Preview, want) {
			t.Errorf("Outcome.Preview lacks %q:\n%s", want, out.Preview)
		}
	}
	if strings.Contains(out.Preview, pat) {
		t.Errorf("Outcome.Preview holds the secret:\n%s", out.Preview)
	}
	a, err := f.appr.Get(context.Background(), out.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Preview != out.Preview {
		t.Errorf("stored preview %q; want the outcome's %q", a.Preview, out.Preview)
	}
	sum := sha256.Sum256(a.Plan)
	if a.PlanHash != out.PlanHash || hex.EncodeToString(sum[:]) != a.PlanHash {
		t.Errorf("approval binds %s (plan sha256 %x); outcome hash %s", a.PlanHash, sum, out.PlanHash)
	}
	// The file changes: the same call has the same hash and shares the
	// card, so approving it runs exactly the approved content.
	if err := os.WriteFile(filepath.Join(f.root, "a.md"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again := f.decide(t, "write_file", args)
	if again.ApprovalID != out.ApprovalID || again.PlanHash != out.PlanHash {
		t.Errorf("same call after the file changed: approval %s hash %s; want %s %s", again.ApprovalID, again.PlanHash, out.ApprovalID, out.PlanHash)
	}
	if _, err := f.appr.Approve(context.Background(), out.ApprovalID, "me", "once"); err != nil {
		t.Fatal(err)
	}
	if ran := f.decide(t, "write_file", args); ran.Decision != arbiter.Ran || ran.Preview != "" {
		t.Fatalf("approved write: %+v; want ran, with no preview", ran)
	}
	if b, _ := os.ReadFile(filepath.Join(f.root, "a.md")); string(b) != "new\n" {
		t.Errorf("file holds %q; want the approved content", b)
	}
}
