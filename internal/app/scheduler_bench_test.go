package app

import (
	"context"
	"testing"
)

// BenchmarkTaskAdd is `homard task add` after its flags, in the runtime:
// the body built and checked against the config (mode ceiling, tools,
// delivery, the schedule's closest gap over a year, daylight-saving
// changes included), its canonical form, the row and its audit record in
// one transaction, and the answer shown (hash, seal-if-approved, next
// runs). "every" and "cron" differ in the gap check: a cron expression in
// a zone is walked slot by slot.
func BenchmarkTaskAdd(b *testing.B) {
	for _, c := range []struct {
		name string
		spec TaskSpec
	}{
		{"every", TaskSpec{Every: "6h"}},
		{"cron", TaskSpec{Cron: "30 7 * * 1-5", TZ: "Europe/Paris"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newTestRuntime(b, "smart")
			ctx := context.Background()
			spec := c.spec
			spec.Name, spec.Prompt, spec.Tools = "digest", "Summarise the new files in inbox/ for me.", []string{"read_file", "list_dir"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Tasks.Add(ctx, spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
