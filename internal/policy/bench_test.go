package policy

import "testing"

// BenchmarkDecide measures one decision with a realistic rule list.
func BenchmarkDecide(b *testing.B) {
	in := Input{
		Tool: "write_file", Action: ActionWrite, Risk: RiskMedium,
		Targets: []string{"notes/2026/11/todo.md"}, Trust: TrustOwner, Mode: ModeSmart,
		Rules: []Rule{
			{ID: "no-secrets", Tool: "read_file", Path: "secrets/**", Effect: Deny},
			{ID: "no-git", Tool: "write_file", Path: "**/.git/**", Effect: Deny},
			{ID: "notes", Tool: "write_file", Path: "notes/**", Effect: Allow},
		},
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(in); d.Verdict != Allow {
			b.Fatalf("Decide = %v", d)
		}
	}
}
