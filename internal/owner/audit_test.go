package owner

import (
	"bytes"
	"testing"
	"time"

	"github.com/homard/homard/internal/audit"
)

// The anchor is the head of the verified chain (none for an empty log);
// an export --since starts where it says and reaches that anchor.
func TestAuditAnchorAndExport(t *testing.T) {
	e := newEnv(t, nil)
	if a, err := e.o.AuditAnchor(t.Context()); err != nil || a != (audit.Anchor{}) {
		t.Fatalf("AuditAnchor(empty) = %v, %v; want none", a, err)
	}
	for i := range 3 {
		e.now = t0.Add(time.Duration(i) * time.Hour)
		if err := e.o.Audit(t.Context(), "memory_forget", "owner.memory", "forgot one", map[string]string{"id": "m1"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	head, err := e.o.AuditAnchor(t.Context())
	if err != nil || head.Seq != 3 {
		t.Fatalf("AuditAnchor = %v, %v; want record 3", head, err)
	}
	var b bytes.Buffer
	rep, err := e.o.AuditExport(t.Context(), &b, t0.Add(time.Hour))
	if err != nil || rep.Records != 2 || rep.First.Seq != 2 || rep.Head != head {
		t.Fatalf("AuditExport(since record 2) = %+v, %v; want records 2-3 up to %v", rep, err, head)
	}
	if got, err := audit.VerifyFile(&b, head); err != nil || !got.Anchored {
		t.Errorf("VerifyFile(export, anchor) = %+v, %v; want it intact and anchored", got, err)
	}

}
