package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestAuditScripts runs testdata/audit/*.txtar: the audit trail exported,
// verified as a file without a home, edited, cut and anchored.
func TestAuditScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/audit"))
}

// readenv NAME FILE sets NAME to FILE's content without its final line
// break: what a shell's "$(cat FILE)" gives.
func readenv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: readenv NAME FILE")
	}
	ts.Setenv(args[0], strings.TrimRight(ts.ReadFile(args[1]), "\n"))
}

// replace FILE OLD NEW replaces the first OLD in FILE with NEW, and fails
// when FILE has no OLD: a hand edit of one place.
func replace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	s := ts.ReadFile(args[0])
	if !strings.Contains(s, args[1]) {
		ts.Fatalf("replace: %s has no %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Replace(s, args[1], args[2], 1)), 0o600))
}

// headlines IN N OUT writes IN's first N lines to OUT.
func headlines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: headlines IN N OUT")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	lines := strings.SplitAfter(ts.ReadFile(args[0]), "\n")
	if n > len(lines) {
		ts.Fatalf("headlines: %s has fewer than %d lines", args[0], n)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(strings.Join(lines[:n], "")), 0o600))
}
