package store

import (
	"errors"
	"strings"
	"testing"
)

func TestArtifactRoundTrip(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	text := strings.Repeat("猫のしっぽ ", 2000) + "\xff end" // multibyte and an invalid byte survive as stored
	want := Artifact{ID: "art_1", Owner: "alice", Session: "s1", ToolRun: "run_1", Tool: "read_file",
		Untrusted: true, CreatedAt: t0, Text: text}
	write(t, s, func(tx *Tx) error { return tx.InsertArtifact(want) })
	got, err := s.Artifact(ctx, "art_1")
	if err != nil {
		t.Fatalf("Artifact: %v", err)
	}
	if got != want {
		t.Errorf("Artifact = %+v\nwant %+v", got, want)
	}

	// No run, trusted: tool_run is NULL and reads back empty.
	write(t, s, func(tx *Tx) error {
		return tx.InsertArtifact(Artifact{ID: "art_2", Owner: "alice", Session: "s1", Text: "x"})
	})
	if got, err := s.Artifact(ctx, "art_2"); err != nil || got.ToolRun != "" || got.Untrusted {
		t.Errorf("Artifact(art_2) = %+v, %v; want no run, trusted", got, err)
	}

	if _, err := s.Artifact(ctx, "art_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Artifact(unknown) = %v; want ErrNotFound", err)
	}
	err = s.Write(ctx, func(tx *Tx) error { return tx.InsertArtifact(want) })
	if err == nil {
		t.Error("InsertArtifact with a duplicate id succeeded; want an error")
	}
	err = s.Write(ctx, func(tx *Tx) error { return tx.InsertArtifact(Artifact{ID: "art_3", Session: "s1"}) })
	if err == nil {
		t.Error("InsertArtifact without an owner succeeded; want an error")
	}
}
