package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tools"
)

// artifactSource serves read_artifact from the store (tools may not import
// store). It hands over rows as they are; read_artifact checks the caller.
type artifactSource struct{ st *store.Store }

var _ tools.ArtifactSource = artifactSource{}

func (s artifactSource) Artifact(ctx context.Context, id string) (tools.Artifact, error) {
	a, err := s.st.Artifact(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return tools.Artifact{}, tools.ErrNoArtifact
	}
	if err != nil {
		return tools.Artifact{}, err
	}
	return tools.Artifact{ID: a.ID, Owner: a.Owner, Session: a.Session, Untrusted: a.Untrusted, Text: a.Text, MIME: a.MIME}, nil
}

// PruneArtifacts deletes the artifacts older than artifacts.keep and
// returns how many went.
func (r *Runtime) PruneArtifacts(ctx context.Context) (int64, error) {
	before := r.now().Add(-r.Config.Artifacts.Keep.Std())
	var n int64
	err := r.Store.Write(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.DeleteArtifactsBefore(before)
		return err
	})
	return n, err
}

// pruneEvery is how often a long-running serve deletes old artifacts.
const pruneEvery = time.Hour

// pruneLoop runs PruneArtifacts every interval until ctx ends, and the
// check of homard's records (checkRecords) with it.
func (r *Runtime) pruneLoop(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := r.PruneArtifacts(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Warn("deleting old artifacts failed", "err", err)
			case n > 0:
				log.Info("deleted old artifacts", "count", n, "keep", r.Config.Artifacts.Keep.String())
			}
			r.checkRecords(ctx, log)
		}
	}
}
