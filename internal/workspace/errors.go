package workspace

import "errors"

// Sentinel errors. Every refusal wraps one of them with the offending path,
// so callers check with errors.Is and people read a specific reason.
var (
	// ErrEmptyPath: the path is the empty string.
	ErrEmptyPath = errors.New("path is empty; give a file path relative to the workspace")
	// ErrNUL: the path contains a NUL byte.
	ErrNUL = errors.New("path contains a NUL byte; remove it")
	// ErrControl: the path contains a control character other than NUL
	// (newline, tab, escape...), which could disguise it on an approval card.
	ErrControl = errors.New("path contains a control character; file names with control characters are not accepted")
	// ErrTooLong: the path is longer than the system allows.
	ErrTooLong = errors.New("path is too long")
	// ErrDotDot: the path has a ".." element, refused even when it would
	// stay inside the workspace.
	ErrDotDot = errors.New(`path contains a ".." element; ".." is never accepted, even when it would stay inside the workspace: write the path without it`)
	// ErrEncoded: the path contains a percent-encoded dot, slash, backslash
	// or NUL. Paths are literal; nothing decodes them.
	ErrEncoded = errors.New("path contains a percent-encoded character (%2e, %2f, %5c or %00); paths are literal, not URL-encoded: send the plain characters")
	// ErrOutside: an absolute path that is not under any workspace root.
	ErrOutside = errors.New("path is outside the workspace; use a path relative to the workspace or an absolute path under one of its roots")
	// ErrEscape: a symlink in the path leads outside its root.
	ErrEscape = errors.New("path goes through a symlink that leads outside the workspace root; use the real path inside the workspace")
	// ErrUnknownRoot: a Path names a root the workspace does not have.
	ErrUnknownRoot = errors.New("unknown workspace root")
	// ErrProtected: the path is protected. Git metadata (any ".git"
	// element) is never written; homard's own files (Options.Protected,
	// checkpoints) are neither written nor read, and are left out of
	// directory listings.
	ErrProtected = errors.New("path is protected")
	// ErrSensitive: the path, with symlinks resolved, is a file that holds
	// credentials (DefaultSensitive, Options.Sensitive) and the owner has
	// not allowed it (Options.AllowSensitive). Neither read nor written.
	ErrSensitive = errors.New("file is sensitive")
	// ErrReadOnly: the path is in a read-only root (Root.ReadOnly); tools
	// may read it but nothing is ever written there.
	ErrReadOnly = errors.New("root is read-only")
	// ErrSymlink: the file to write is itself a symlink.
	ErrSymlink = errors.New("the file is a symlink and is not written through; write to the file it points to instead")
	// ErrTooLarge: a file or content is over Options.MaxFileBytes.
	ErrTooLarge = errors.New("file is too large")
	// ErrNotRegular: the path is a directory, device, socket or pipe where a
	// regular file was expected.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotDir: the path is not a directory where one was expected.
	ErrNotDir = errors.New("not a directory")
	// ErrCheckpointNotFound: no checkpoint has the given id.
	ErrCheckpointNotFound = errors.New("no checkpoint with this id; list the checkpoints to find one")
	// ErrHashMismatch: Rollback was given a hash that does not match the
	// checkpoint's saved content.
	ErrHashMismatch = errors.New("hash does not match the checkpoint's saved content; copy the hash shown by the rollback preview (at least 8 hex digits)")
	// ErrCheckpointCorrupt: the checkpoint's stored content no longer has
	// the recorded hash.
	ErrCheckpointCorrupt = errors.New("checkpoint content does not match its recorded hash; it was changed on disk and cannot be restored")
)

// Sentinel errors of change sets (changes*.go).
var (
	// ErrBadChangeStream: the change-set stream is not in the format the
	// sandbox writes; nothing of it is applied.
	ErrBadChangeStream = errors.New("malformed change-set stream")
	// ErrChangeSetTooLarge: the change set is over the reader's limits.
	ErrChangeSetTooLarge = errors.New("change set is too large")
	// ErrConflict: a file the change set replaces or deletes was changed
	// in the real folder after the command started; nothing was applied.
	ErrConflict = errors.New("files changed in the folder while the command ran; nothing was applied: look at them and run the command again")
	// ErrNotApproved: the change set grades above what was approved, or
	// differs from the one that was approved; nothing was applied.
	ErrNotApproved = errors.New("the change set needs approval: it grades above what was approved or is not the one shown")
	// ErrNoRoom: the old content the change set replaces does not fit in
	// the checkpoint store next to the pinned checkpoints.
	ErrNoRoom = errors.New("not enough checkpoint room to keep the old content; accept or roll back earlier command changes, or raise workspace.max_checkpoint_bytes")
)
