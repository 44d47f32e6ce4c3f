// Package changeset is homard's one gate for every write into a workspace
// root: whatever writes — write_file and edit_file, a command's or a
// skill's change set, apply_changes, a rollback — proposes a change set,
// the gate grades it against the root as it will be (workspace.Grade: the
// protected set, repository shapes, the files the owner's host tools run,
// sensitive files, deletions, size) and then applies it, holds it for the
// owner, or reports why it cannot.
//
// Contract:
//   - Nothing outside internal/workspace and this package changes a root:
//     the only ways in are Gate.Settle, Gate.WriteFiles, Gate.ApplyHeld
//     and Gate.Rollback, and internal/archtest fails on any other package
//     calling workspace's writers.
//   - The grade is judged on the tree that results, whoever wrote the
//     earlier steps: a repository assembled over several writes, a file the
//     repository config names as a hook, a bare repository's hooks.
//   - What may apply unasked is bounded by Limit: ordinary changes
//     (medium) in every mode, high ones in yolo, critical ones only after
//     the owner approved exactly them once. No grant, rule or mode lifts
//     it: the grant decided the call, the gate decides its effects.
//   - A change set that is not applied is held (HoldDir/<id>.tar with its
//     metadata) until apply_changes, which always asks the owner, applies
//     it or it is discarded; a held set whose stream changed is refused.
package changeset
