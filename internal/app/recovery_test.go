package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/workspace"
)

// TestChangesCheck: doctor's line about the change sets the start found
// half-applied says what was rolled back, what could not be, and a
// recovery that failed.
func TestChangesCheck(t *testing.T) {
	for _, c := range []struct {
		name     string
		rec      workspace.Recovery
		err      error
		ok, info bool
		want     []string
	}{
		{"nothing", workspace.Recovery{Busy: []string{"b"}}, nil, true, false, []string{"no change set was left half-applied"}},
		{"rolled back", workspace.Recovery{RolledBack: []string{"cp1", "cp2"}, Removed: 1}, nil, false, true,
			[]string{"rolled back 2 change set(s)", "cp1, cp2", "removed 1 change set(s)"}},
		{"removed only", workspace.Recovery{Removed: 2}, nil, false, true, []string{"removed 2 change set(s) a stopped command prepared but never started"}},
		{"conflict", workspace.Recovery{RolledBack: []string{"cp1"}, Conflicts: []string{`"a.txt" was changed after the command wrote it`}}, nil, false, true,
			[]string{"could not be fully rolled back", `"a.txt" was changed`, "homard checkpoint list"}},
		{"error", workspace.Recovery{}, errors.New("read dir: permission denied"), false, false,
			[]string{"recovering half-applied change sets: read dir: permission denied"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := changesCheck(c.rec, c.err)
			if got.Name != "changes" || got.OK != c.ok || got.Info != c.info {
				t.Errorf("changesCheck(%+v, %v) = %+v; want ok %v info %v", c.rec, c.err, got, c.ok, c.info)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Detail, w) {
					t.Errorf("changesCheck(%+v, %v).Detail = %q; want it to say %q", c.rec, c.err, got.Detail, w)
				}
			}
		})
	}
}
