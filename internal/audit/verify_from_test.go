package audit

import (
	"errors"
	"testing"

	"github.com/homard/homard/internal/store"
)

// TestVerifyFrom checks the chain from a record verified before: what was
// appended since verifies, and a change to the anchor, a missing anchor or
// records lost from the end are breaks Verify alone cannot always see.
func TestVerifyFrom(t *testing.T) {
	st, _ := openTest(t)
	recs := appendN(t, st, 6)
	at := func(i int) Anchor { return Anchor{Seq: recs[i-1].Seq, Hash: recs[i-1].Hash} }

	for _, tc := range []struct {
		name     string
		from     Anchor
		wantHead Anchor
		wantN    int
		brokenAt int64 // 0: no break
	}{
		{"genesis", Anchor{}, at(6), 6, 0},
		{"middle", at(3), at(6), 3, 0},
		{"head", at(6), at(6), 0, 0},
		{"anchor hash differs", Anchor{Seq: 3, Hash: recs[4].Hash}, Anchor{}, 0, 3},
		{"anchor beyond the end", Anchor{Seq: 9, Hash: recs[5].Hash}, Anchor{}, 0, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, n, err := VerifyFrom(t.Context(), st, tc.from)
			if tc.brokenAt == 0 {
				if err != nil || head != tc.wantHead || n != tc.wantN {
					t.Fatalf("VerifyFrom(%d) = %v, %d, %v; want %v, %d, nil", tc.from.Seq, head, n, err, tc.wantHead, tc.wantN)
				}
				return
			}
			var be *BrokenError
			if !errors.As(err, &be) || be.Seq != tc.brokenAt {
				t.Fatalf("VerifyFrom(%d) = %v, %d, %v; want a break at %d", tc.from.Seq, head, n, err, tc.brokenAt)
			}
		})
	}
}

// TestVerifyFromSeesEditAfterAnchor: a record edited after the anchor is
// found (through verify with the rows altered in flight, as the store's
// triggers forbid an UPDATE).
func TestVerifyFromSeesEditAfterAnchor(t *testing.T) {
	st, _ := openTest(t)
	recs := appendN(t, st, 5)
	a := Anchor{Seq: recs[1].Seq, Hash: recs[1].Hash}
	for _, tc := range []struct {
		name string
		edit func(*store.AuditRow) bool
		want int64
	}{
		{"edit after", func(r *store.AuditRow) bool { r.Reason += "!"; return true }, 3},
		{"edit anchor", func(r *store.AuditRow) bool {
			if r.Seq == 2 {
				r.Reason += "!"
			}
			return true
		}, 2},
		{"anchor deleted", func(r *store.AuditRow) bool { return r.Seq != 2 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := verify(a, func(yield func(store.AuditRow) error) error {
				return st.AuditFrom(t.Context(), a.Seq, func(r store.AuditRow) error {
					if r.Seq >= 3 || tc.name != "edit after" {
						if !tc.edit(&r) {
							return nil
						}
					}
					return yield(r)
				})
			})
			var be *BrokenError
			if !errors.As(err, &be) || be.Seq != tc.want {
				t.Fatalf("verify from record 2 with %s = %v; want a break at %d", tc.name, err, tc.want)
			}
		})
	}
}
