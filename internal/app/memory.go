package app

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/memory"
)

// Memory types and errors for the CLI, which may not import memory.
type (
	// MemoryUnit is one remembered unit.
	MemoryUnit = memory.Unit
	// MemoryProblem is a section of memory.md that cannot be read.
	MemoryProblem = memory.Problem
)

var (
	// ErrMemorySecret: the text holds a secret and was not remembered.
	ErrMemorySecret = memory.ErrSecret
	// ErrMemoryText: the text is empty or too long.
	ErrMemoryText = memory.ErrText
)

// MemoryPath is the owner's memory.md.
func (r *Runtime) MemoryPath() (string, error) { return r.Memory.Path(r.Config.Owner) }

// MemoryList returns every unit of the owner's memory (expired ones
// included) and the sections that could not be read.
func (r *Runtime) MemoryList(ctx context.Context) ([]memory.Unit, []memory.Problem, error) {
	return r.Memory.List(ctx, r.Config.Owner)
}

// MemorySearch is recall as the owner runs it from the command line.
func (r *Runtime) MemorySearch(ctx context.Context, query string, limit int) ([]memory.Unit, error) {
	return r.Memory.Recall(ctx, r.Config.Owner, query, limit)
}

// MemoryAdd remembers text for the owner, typed by the owner (source
// "owner"). kind "" means fact; ttl 0 means never expires.
func (r *Runtime) MemoryAdd(ctx context.Context, text, kind string, ttl time.Duration) (memory.Unit, error) {
	k, err := memory.ParseKind(kind)
	if err != nil {
		return memory.Unit{}, fmt.Errorf("%w: --kind: %w", ErrBadRequest, err)
	}
	if ttl < 0 {
		return memory.Unit{}, fmt.Errorf("%w: --ttl must not be negative", ErrBadRequest)
	}
	u, err := r.Memory.Remember(ctx, r.Config.Owner, memory.Note{Text: text, Kind: k, TTL: ttl, Source: "owner"})
	if err != nil {
		return u, err
	}
	return u, r.auditOwner(ctx, "memory.add", "owner.memory", "the owner added to memory", map[string]string{"id": u.ID, "kind": string(u.Kind)}, nil)
}

// MemoryForget removes one unit of the owner's memory.
func (r *Runtime) MemoryForget(ctx context.Context, id string) (memory.Unit, error) {
	u, err := r.Memory.Forget(ctx, r.Config.Owner, id)
	if err != nil {
		return u, err
	}
	return u, r.auditOwner(ctx, "memory.forget", "owner.memory", "the owner removed a memory", map[string]string{"id": u.ID}, nil)
}

// MemoryRebuild re-indexes the owner's memory from memory.md.
func (r *Runtime) MemoryRebuild(ctx context.Context) (memory.Status, error) {
	return r.Memory.Rebuild(ctx, r.Config.Owner)
}

// MemoryNow is the runtime's clock, for showing expiry.
func (r *Runtime) MemoryNow() time.Time { return r.now() }

// MemoryCandidate is a note proposed by automatic capture.
type MemoryCandidate = memory.Candidate

// ErrMemoryCandidate: no candidate waiting with that id.
var ErrMemoryCandidate = memory.ErrCandidate

// MemoryReview lists the candidates waiting for the owner: those that
// contradict a remembered preference first, then the buffered ones.
func (r *Runtime) MemoryReview(ctx context.Context) ([]memory.Candidate, error) {
	return r.Memory.Candidates(ctx, r.Config.Owner)
}

// MemoryAccept remembers a waiting candidate; replace, when set, is a
// unit forgotten in the same write.
func (r *Runtime) MemoryAccept(ctx context.Context, id, replace string) (memory.Candidate, error) {
	return r.Memory.Accept(ctx, r.Config.Owner, id, replace)
}

// MemoryDismiss drops a waiting candidate for good.
func (r *Runtime) MemoryDismiss(ctx context.Context, id string) (memory.Candidate, error) {
	return r.Memory.Dismiss(ctx, r.Config.Owner, id)
}
