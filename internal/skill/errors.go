package skill

import "errors"

var (
	// ErrManifest: SKILL.md or skill.json is malformed; the message names
	// the file and the field.
	ErrManifest = errors.New("invalid skill manifest")
	// ErrTree: the skill's folder holds something a skill may not (a
	// symlink, a special file, a hard-to-see name, too many or too large
	// files).
	ErrTree = errors.New("refused skill folder")
	// ErrNoSkill: no skill of that name is installed.
	ErrNoSkill = errors.New("no such skill; `homard skill list` shows the installed ones")
	// ErrExists: a skill of that name is already installed.
	ErrExists = errors.New("a skill of that name is already installed; remove it first with `homard skill rm NAME`")
	// ErrUntrusted: the skill is installed but its tree is not the one
	// the owner accepted (never accepted, or changed since).
	ErrUntrusted = errors.New("the skill needs trust; review it, then run `homard skill trust NAME`")
	// ErrArgs: run_skill's arguments do not fit the skill's parameters.
	ErrArgs = errors.New("invalid skill arguments")
	// ErrPermission: the skill declares a root or secret this homard
	// cannot grant.
	ErrPermission = errors.New("skill permission refused")
)
