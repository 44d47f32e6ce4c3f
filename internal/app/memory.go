package app

import (
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

// MemoryCandidate is a note proposed by automatic capture.
type MemoryCandidate = memory.Candidate

// ErrMemoryCandidate: no candidate waiting with that id.
var ErrMemoryCandidate = memory.ErrCandidate
