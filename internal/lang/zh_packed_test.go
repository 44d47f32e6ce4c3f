package lang

import (
	"bytes"
	"compress/flate"
	"flag"
	"io"
	"maps"
	"os"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .deflate files of the packed parts from their _test.go sources")

// In the tests the readable parts join zhSets, so that the catalog test
// reads them as it reads every other part.
func init() { zhSets = append(zhSets, zhCLI, zhSetup, zhReview, zhChats, zhTUI, zhMCP) }

// pack deflates a catalog part for zhPacked, keys sorted so that the
// file changes only when the part does.
func pack(m map[string]string) ([]byte, error) {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		io.WriteString(w, k+"\x00"+m[k]+"\x00")
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// TestPackedCatalog fails when a packed part the binary carries is not
// its readable source (zh_cli_test.go, zh_setup_test.go, …), and when
// zhPacked carries a part this test does not check.
func TestPackedCatalog(t *testing.T) {
	parts := []struct {
		file, packed string
		part         map[string]string
	}{
		{"zh_cli.deflate", zhCLIPacked, zhCLI},
		{"zh_setup.deflate", zhSetupPacked, zhSetup},
		{"zh_review.deflate", zhReviewPacked, zhReview},
		{"zh_chats.deflate", zhChatsPacked, zhChats},
		{"zh_tui.deflate", zhTUIPacked, zhTUI},
		{"zh_mcp.deflate", zhMCPPacked, zhMCP},
	}
	if len(parts) != len(zhPacked) {
		t.Errorf("zhPacked has %d parts; this test checks %d", len(zhPacked), len(parts))
	}
	for _, tc := range parts {
		if *update {
			b, err := pack(tc.part)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tc.file, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got := unpack([]string{tc.packed})
		if len(got) != 1 || !maps.Equal(got[0], tc.part) {
			t.Errorf("%s is not the part of its _test.go source: go test ./internal/lang -run TestPackedCatalog -update", tc.file)
		}
	}
}

// TestPackRoundTrip: a part packs and unpacks to itself, and a part with
// one translation changed does not unpack to the original (the twin: the
// comparison above can fail).
func TestPackRoundTrip(t *testing.T) {
	part := map[string]string{"Usage:": "用法：", "approved %s\n": "已批准 %s\n"}
	b, err := pack(part)
	if err != nil {
		t.Fatal(err)
	}
	if got := unpack([]string{string(b)}); len(got) != 1 || !maps.Equal(got[0], part) {
		t.Errorf("unpack(pack(%v)) = %v", part, got)
	}
	changed := maps.Clone(part)
	changed["Usage:"] = "用法"
	b, _ = pack(changed)
	if got := unpack([]string{string(b)}); len(got) != 1 || maps.Equal(got[0], part) {
		t.Errorf("unpack of a changed part = %v; want it to differ from %v", got, part)
	}
	if got := unpack([]string{"not deflate"}); len(got) != 0 {
		t.Errorf("unpack(garbage) = %v; want no part", got)
	}
}

// TestPackedLookup: the printer finds a key of the packed CLI part in
// Chinese and leaves it English in English.
func TestPackedLookup(t *testing.T) {
	if got := For(ZH).T("Usage:"); got != "用法：" {
		t.Errorf(`For(ZH).T("Usage:") = %q; want 用法：`, got)
	}
	if got := For(EN).T("Usage:"); got != "Usage:" {
		t.Errorf(`For(EN).T("Usage:") = %q; want Usage:`, got)
	}
	if m := unpack(zhPacked); len(m) != len(zhPacked) || m[0]["Usage:"] != "用法：" {
		t.Errorf("the packed CLI part has no Usage: entry")
	}
}
