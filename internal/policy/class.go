package policy

// Class says what a command may do, as the catalog reads its argv. It only
// ever adds asking: the sandbox, not the class, keeps a command inside its
// limits (read-class commands see read-only mounts, the others an overlay).
type Class int

// Command classes, from harmless to anything. The zero value is not a
// command: Decide then uses ReadOnly and Risk alone (every other tool).
const (
	ClassNone     Class = iota // not a command
	ClassRead                  // reads files, writes only its output
	ClassWrite                 // changes the files its argv names (or an archive's contents)
	ClassRunsCode              // runs code: an unknown program, a build, a script, find -exec
)

func (c Class) String() string {
	switch c {
	case ClassNone:
		return "none"
	case ClassRead:
		return "read"
	case ClassWrite:
		return "write"
	case ClassRunsCode:
		return "runs code"
	}
	return "class(?)"
}

// Role is what an operand or an option value stands for.
type Role string

// Roles of operands and option values.
const (
	RoleOther     Role = "other"      // text, a number, a revision, a mode
	RolePattern   Role = "pattern"    // a search pattern or expression
	RolePathRead  Role = "path-read"  // a path the program reads
	RolePathWrite Role = "path-write" // a path the program creates, changes or deletes
)

// ItemKind says what one parsed element of an argv is.
type ItemKind string

// Item kinds.
const (
	ItemSub     ItemKind = "sub" // a subcommand ("git log", "go test")
	ItemOption  ItemKind = "opt" // an option in its canonical spelling, with its value
	ItemOperand ItemKind = "arg" // an operand
	ItemEnd     ItemKind = "end" // "--": what follows is operands only
)

// Item is one element of a parsed argv: a subcommand, an option (spelled
// canonically: "-p" for "--parents", "--mode" for "--mo"; a short cluster
// becomes one Item per letter) or an operand with its role.
type Item struct {
	Kind     ItemKind `json:"kind"`
	Name     string   `json:"name,omitempty"`      // canonical option name or subcommand
	Value    string   `json:"value,omitempty"`     // option value or operand as written
	HasValue bool     `json:"has_value,omitempty"` // the option took a value (it may be "")
	Role     Role     `json:"role,omitempty"`      // of the operand or the option's value
	// Slot, set only in a Template, makes a path operand stand for "any
	// clean relative path strictly inside Slot" ("." is the working
	// folder) instead of the literal Value.
	Slot string `json:"slot,omitempty"`
}

// effect is the class of one option, subcommand or program in the catalog;
// it extends Class with the two kinds of refusal.
type effect uint8

const (
	effRead effect = iota
	effWrite
	effRuns
	effNetwork // refused: reaches the network, and the sandbox has none
	effRefused // refused: runs a shell, inline code or another program unchecked
)

func (e effect) class() Class {
	switch e {
	case effRead:
		return ClassRead
	case effWrite:
		return ClassWrite
	}
	return ClassRunsCode
}
