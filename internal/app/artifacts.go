package app

import (
	"context"
	"errors"

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
	return tools.Artifact{ID: a.ID, Owner: a.Owner, Session: a.Session, Untrusted: a.Untrusted, Text: a.Text}, nil
}
