package lang

import (
	"bytes"
	"compress/flate"
	_ "embed" // the packed parts
	"io"
	"strings"
)

// The catalog's parts other than zhCommon and zhWeb are carried in the
// binary deflated: as Go maps the CLI's and setup's 617 short entries
// took 53 KB of the binary's 25 MB ceiling (a string header per key and
// per value, and the Chinese text); deflated, the same entries took 24 KB
// (measured), and packing the memory review's, chats', TUI's and mcp
// login's parts saved 4 KB more. Each part's readable source, each key
// beside its translation, is a _test.go file: zh_cli_test.go (zhCLI),
// zh_setup_test.go (zhSetup), zh_review_test.go (zhReview),
// zh_chats_test.go (zhChats), zh_tui_test.go (zhTUI) and zh_mcp_test.go
// (zhMCP). TestPackedCatalog keeps the .deflate files equal to them, and
// `go test ./internal/lang -run TestPackedCatalog -update` rewrites them.
// They are inflated on the first Chinese lookup only: English never
// reads them.
var (
	//go:embed zh_cli.deflate
	zhCLIPacked string
	//go:embed zh_setup.deflate
	zhSetupPacked string
	//go:embed zh_review.deflate
	zhReviewPacked string
	//go:embed zh_chats.deflate
	zhChatsPacked string
	//go:embed zh_tui.deflate
	zhTUIPacked string
	//go:embed zh_mcp.deflate
	zhMCPPacked string

	zhPacked = []string{zhCLIPacked, zhSetupPacked, zhReviewPacked, zhChatsPacked, zhTUIPacked, zhMCPPacked}
)

// unpack inflates packed catalog parts: key NUL translation NUL, … A part
// that does not inflate is left out (its keys print in English).
func unpack(parts []string) []map[string]string {
	var out []map[string]string
	for _, p := range parts {
		data, err := io.ReadAll(flate.NewReader(strings.NewReader(p)))
		if err != nil {
			continue
		}
		fields := bytes.Split(bytes.TrimSuffix(data, []byte{0}), []byte{0})
		m := make(map[string]string, len(fields)/2)
		for i := 0; i+1 < len(fields); i += 2 {
			m[string(fields[i])] = string(fields[i+1])
		}
		out = append(out, m)
	}
	return out
}
