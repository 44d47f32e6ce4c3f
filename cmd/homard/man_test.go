package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"

	"github.com/homard/homard/internal/app"
)

// manDir is where TestManPages writes the man pages; scripts/man sets it.
// Empty: a temporary folder, for the test alone.
var manDir = flag.String("man", "", "write homard's man pages into `DIR` (scripts/man)")

// TestManPages generates homard's man pages from the command tree with
// cobra's doc package: homard.1 and one page per command
// (homard-config-migrate.1, …). The generator is a test, not a command:
// the release binary carries none of it (cobra/doc and go-md2man would add
// about 280 KB, measured). scripts/man runs it with -man DIR; plain
// `go test` checks the pages every time.
func TestManPages(t *testing.T) {
	dir := *manDir
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cli{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	root := c.rootCmd()
	root.DisableAutoGenTag = true // no "Auto generated" history with today's date
	header := &doc.GenManHeader{Section: "1", Source: "homard " + app.Build().Version, Manual: "homard manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		t.Fatalf("generate the man pages: %v", err)
	}

	page := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("man page: %v", err)
		}
		return string(b)
	}
	top := page("homard.1")
	if !strings.Contains(top, "\n.TH \"HOMARD\" \"1\"") {
		t.Errorf("homard.1 has no .TH HOMARD 1 header:\n%.300s", top)
	}
	for _, sub := range root.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		if !strings.Contains(top, "homard-"+sub.Name()) {
			t.Errorf("homard.1 does not refer to homard-%s", sub.Name())
		}
		page("homard-" + sub.Name() + ".1")
	}
	if p := page("homard-config-migrate.1"); !strings.Contains(p, "dry-run") || !strings.Contains(p, "config_version") {
		t.Errorf("homard-config-migrate.1 lacks its flags or its description:\n%s", p)
	}
	page("homard-completion-bash.1")
	n, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	t.Logf("%d man pages in %s", len(n), dir)
}
