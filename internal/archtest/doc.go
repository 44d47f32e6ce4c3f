// Package archtest holds the architecture test: it reads `go list -json` of
// the module and fails on any internal import the package table of
// docs/ARCHITECTURE.md does not allow, on forbidden third-party imports
// (the SQLite driver outside store, Bubble Tea outside channel/tui, …), on
// production code importing testing, and on any package without a doc
// comment; and (writers_test.go) on any package outside workspace and
// changeset calling the workspace methods that write into a root. It has
// no production code.
package archtest
