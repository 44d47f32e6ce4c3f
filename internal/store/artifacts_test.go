package store

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
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
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Artifact = %+v\nwant %+v", got, want)
	}

	// A binary artifact (a screenshot) keeps its type, name and bytes,
	// NUL included; one with a type and no bytes is refused.
	png := Artifact{ID: "art_png", Owner: "alice", Session: "s1", Tool: "browser_screenshot", CreatedAt: t0,
		MIME: "image/png", Name: "screenshot.png", Data: []byte("\x89PNG\r\n\x1a\n\x00rest")}
	write(t, s, func(tx *Tx) error { return tx.InsertArtifact(png) })
	if got, err := s.Artifact(ctx, "art_png"); err != nil || !reflect.DeepEqual(got, png) {
		t.Errorf("Artifact(art_png) = %+v, %v\nwant %+v", got, err, png)
	}
	if err := s.Write(ctx, func(tx *Tx) error {
		return tx.InsertArtifact(Artifact{ID: "art_half", Owner: "alice", Session: "s1", MIME: "image/png"})
	}); err == nil {
		t.Error("a binary artifact without bytes was stored")
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

func TestDeleteArtifactsBefore(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	write(t, s, func(tx *Tx) error {
		for i, at := range []time.Time{t0.Add(-48 * time.Hour), t0.Add(-time.Hour), t0, {}} {
			a := Artifact{ID: fmt.Sprint("art_", i), Owner: "alice", Session: "s1", CreatedAt: at, Text: strings.Repeat("é", i+1)}
			if err := tx.InsertArtifact(a); err != nil {
				return err
			}
		}
		return nil
	})
	n, size, oldest, err := s.ArtifactStats(ctx)
	if err != nil || n != 4 || size != 2*(1+2+3+4) || !oldest.Equal(t0.Add(-48*time.Hour)) {
		t.Fatalf("ArtifactStats = %d, %d, %v, %v; want 4, 20 bytes, the oldest time", n, size, oldest, err)
	}
	var gone int64
	write(t, s, func(tx *Tx) error {
		var err error
		gone, err = tx.DeleteArtifactsBefore(t0.Add(-30 * time.Minute))
		return err
	})
	// The two older ones and the one without a time go; t0's stays.
	if gone != 3 {
		t.Errorf("DeleteArtifactsBefore removed %d; want 3", gone)
	}
	for id, want := range map[string]bool{"art_0": false, "art_1": false, "art_2": true, "art_3": false} {
		if _, err := s.Artifact(ctx, id); (err == nil) != want {
			t.Errorf("Artifact(%s) after pruning: err %v; want kept=%v", id, err, want)
		}
	}
}
