package tools

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/homard/homard/internal/workspace"
)

// The previews approval cards show (tool.PlanSpec.Preview). Each is built
// in Prepare from the values that go into the Plan's Body and from the
// workspace as it is then; none copies text the model wrote for people.

// contentDiff is a write's preview: a unified diff of the file as it is
// now (old; exists false for a new file) against what the Plan writes.
// Binary content on either side is described, not shown.
func contentDiff(name string, old []byte, exists bool, new []byte) string {
	from := name
	if !exists {
		from = "/dev/null"
	}
	header := "--- " + from + "\n+++ " + name + "\n"
	if isBinary(new) || (exists && isBinary(old)) {
		desc := func(b []byte) string {
			return fmt.Sprintf("binary, %d bytes, sha256 %x", len(b), sha256.Sum256(b))
		}
		var out strings.Builder
		out.WriteString(header)
		if exists {
			out.WriteString("-" + desc(old) + "\n")
		}
		out.WriteString("+" + desc(new) + "\n")
		return out.String()
	}
	if exists && string(old) == string(new) {
		return header + "(no change: the file already holds exactly this content)\n"
	}
	if !exists && len(new) == 0 {
		return header + "(an empty file)\n"
	}
	oldLabel, newLabel := name, name
	if !exists {
		oldLabel = "/dev/null"
	}
	return udiff.Unified(oldLabel, newLabel, string(old), string(new))
}

// currentContent reads the file a write would replace, for its diff.
// exists is false when there is none; note says why the diff is against
// nothing when the file exists but cannot be shown.
func currentContent(ws *workspace.Workspace, p workspace.Path) (data []byte, exists bool, note string) {
	if _, err := ws.Lstat(p); err != nil {
		return nil, false, ""
	}
	data, err := ws.ReadFile(p)
	if err != nil {
		return nil, false, fmt.Sprintf("(the current file cannot be read for a diff: %v; shown as new content)\n", err)
	}
	return data, true, ""
}

// argvPreview lists a command's argv one argument per line, each quoted
// as a Go string so spaces, quotes and control characters are
// unambiguous.
func argvPreview(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		fmt.Fprintf(&b, "  [%d] %s\n", i, strconv.Quote(a))
	}
	return b.String()
}
