package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Artifact is a tool result kept whole because it was too long to hand to
// the model at once. Its text is redacted by the caller before it is
// inserted; rows are never updated.
type Artifact struct {
	ID      string
	Owner   string
	Session string
	// ToolRun is the run that produced it; empty when there was none.
	ToolRun   string
	Tool      string
	Untrusted bool
	CreatedAt time.Time
	Text      string
	// MIME is a binary artifact's media type ("image/png"), with its
	// bytes in Data and a file name to offer in Name (migration 0029);
	// "" for a text artifact, whose content is Text.
	MIME string
	Name string
	Data []byte
}

// InsertArtifact records a new artifact. The id must be new and the owner
// and session set; the text is stored as given (redact it first).
func (tx *Tx) InsertArtifact(a Artifact) error {
	if a.ID == "" || a.Owner == "" || a.Session == "" {
		return fmt.Errorf("insert artifact: id, owner and session must not be empty")
	}
	if (a.MIME == "") != (a.Data == nil) {
		return fmt.Errorf("insert artifact %s: a binary artifact needs both a media type and data, a text one neither", a.ID)
	}
	_, err := tx.exec(`INSERT INTO artifacts (id, owner, session, tool_run, tool, untrusted, created_at, text, mime, name, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Owner, a.Session, nullString(a.ToolRun), a.Tool, a.Untrusted, nanos(a.CreatedAt), tx.s.rawText(a.Text), a.MIME, a.Name, a.Data)
	if err != nil {
		return fmt.Errorf("insert artifact %s: %w", a.ID, err)
	}
	return nil
}

// Artifact returns one artifact or ErrNotFound. It does not check who asks:
// callers serving a person or a model must compare the owner themselves.
func (s *Store) Artifact(ctx context.Context, id string) (Artifact, error) {
	var a Artifact
	var run, tool, text sql.NullString
	var untrusted sql.NullBool
	var created sql.NullInt64
	err := s.readRow(ctx, `SELECT id, owner, session, tool_run, tool, untrusted, created_at, text, mime, name, data
		FROM artifacts WHERE id = ?`, id).
		Scan(&a.ID, &a.Owner, &a.Session, &run, &tool, &untrusted, &created, &text, &a.MIME, &a.Name, &a.Data)
	if err = rowErr(err, "get artifact", id); err != nil {
		return Artifact{}, err
	}
	a.ToolRun, a.Tool, a.Untrusted, a.Text = run.String, tool.String, untrusted.Bool, text.String
	a.CreatedAt = fromNanos(created)
	return a, nil
}

// DeleteArtifactsBefore deletes the artifacts made before t (and any
// without a time) and returns how many went. A later read_artifact of one
// gets the same "no such artifact" as an id that never existed.
func (tx *Tx) DeleteArtifactsBefore(t time.Time) (int64, error) {
	res, err := tx.exec(`DELETE FROM artifacts WHERE created_at IS NULL OR created_at < ?`, nanos(t))
	if err != nil {
		return 0, fmt.Errorf("delete old artifacts: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete old artifacts: %w", err)
	}
	return n, nil
}

// ArtifactStats returns how many artifacts are kept, their total text in
// bytes and when the oldest was made (zero when there are none).
func (s *Store) ArtifactStats(ctx context.Context) (count, textBytes int64, oldest time.Time, err error) {
	var first sql.NullInt64
	err = s.readRow(ctx, `SELECT count(*), coalesce(sum(octet_length(text) + coalesce(length(data), 0)), 0), min(created_at) FROM artifacts`).
		Scan(&count, &textBytes, &first)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("artifact stats: %w", err)
	}
	return count, textBytes, fromNanos(first), nil
}
