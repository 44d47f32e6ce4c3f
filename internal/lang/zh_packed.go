package lang

import (
	"bytes"
	"compress/flate"
	_ "embed" // the packed parts
	"encoding/binary"
	"io"
	"strings"
)

// The catalog's parts other than zhCommon and zhWeb are carried in the
// binary deflated: as Go maps the CLI's and setup's 617 short entries
// took 53 KB of the binary's 25 MB ceiling (a string header per key and
// per value, and the Chinese text); deflated, the same entries took
// 24 KB (measured), and packing the memory review's, chats', TUI's and
// mcp login's parts saved 4 KB more. Each part's readable source, each
// key beside its translation, is a _test.go file: zh_cli_test.go
// (zhCLI), zh_setup_test.go (zhSetup), zh_review_test.go (zhReview),
// zh_chats_test.go (zhChats), zh_tui_test.go (zhTUI) and zh_mcp_test.go
// (zhMCP). TestPackedCatalog keeps the .deflate files equal to them, and
// `go test ./internal/lang -run TestPackedCatalog -update` rewrites them.
// They are inflated on the first Chinese lookup only: English never
// reads them.
//
// The parts whose keys only Go code uses (zhHashed) carry each key as
// its 64-bit FNV-1a hash rather than its text: the key is already in the
// binary, as the literal its caller passes to the printer, and its text
// a second time (deflated) cost 8 KB of the binary (measured). A
// message that is not a key finds a translation only if its hash equals
// a key's (about 1 in 2^54 for this catalog), and TestKeyHashesDistinct
// holds every key's hash distinct. The parts the web UI's scripts share (zhChats' card labels,
// zhTUI's) keep their keys: lang.Catalog serves those to the browser.
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

	// zhPacked are parts packed key NUL translation NUL, …
	zhPacked = []string{zhChatsPacked, zhTUIPacked}
	// zhHashed are parts packed hash (8 bytes, big-endian) translation NUL, …
	zhHashed = []string{zhCLIPacked, zhSetupPacked, zhReviewPacked, zhMCPPacked}
)

// keyHash is the 64-bit FNV-1a hash of a key, as zhHashed carries it.
func keyHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// inflate is a deflated part's bytes; ok is false when it does not inflate.
func inflate(p string) ([]byte, bool) {
	data, err := io.ReadAll(flate.NewReader(strings.NewReader(p)))
	return data, err == nil
}

// unpack inflates keyed parts: key NUL translation NUL, … A part that
// does not inflate is left out (its keys print in English).
func unpack(parts []string) []map[string]string {
	var out []map[string]string
	for _, p := range parts {
		data, ok := inflate(p)
		if !ok {
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

// unpackHashed inflates hashed parts into one map: key hash (8 bytes)
// translation NUL, … A part that does not inflate is left out, and one
// cut short keeps the entries before the cut.
func unpackHashed(parts []string) map[uint64]string {
	out := map[uint64]string{}
	for _, p := range parts {
		data, ok := inflate(p)
		if !ok {
			continue
		}
		for len(data) > 8 {
			h := binary.BigEndian.Uint64(data)
			v, rest, found := bytes.Cut(data[8:], []byte{0})
			if !found {
				break
			}
			out[h] = string(v)
			data = rest
		}
	}
	return out
}
