package lang

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/homard/homard/internal/lang/langscan"
)

var update = flag.Bool("update", false, "rewrite the .deflate files of the packed parts from their _test.go sources")

// In the tests the readable parts join zhSets, so that the catalog test
// reads them as it reads every other part.
func init() { zhSets = append(zhSets, zhCLI, zhSetup, zhReview, zhChats, zhTUI, zhMCP) }

// pack deflates a catalog part, keys sorted so that the file changes only
// when the part does: key NUL translation NUL (a keyed part, zhPacked) or,
// hashed, the key's hash and translation NUL (zhHashed).
func pack(m map[string]string, hashed bool) ([]byte, error) {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if hashed {
			w.Write(binary.BigEndian.AppendUint64(nil, keyHash(k)))
		} else {
			io.WriteString(w, k+"\x00")
		}
		io.WriteString(w, m[k]+"\x00")
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// hashed is m with its keys hashed, as unpackHashed reads a part.
func hashed(m map[string]string) map[uint64]string {
	out := map[uint64]string{}
	for k, v := range m {
		out[keyHash(k)] = v
	}
	return out
}

// packedParts are the packed parts: the file, what the binary carries,
// the readable source, and whether its keys are hashed.
var packedParts = []struct {
	file, packed string
	part         map[string]string
	hashed       bool
}{
	{"zh_cli.deflate", zhCLIPacked, zhCLI, true},
	{"zh_setup.deflate", zhSetupPacked, zhSetup, true},
	{"zh_review.deflate", zhReviewPacked, zhReview, true},
	{"zh_mcp.deflate", zhMCPPacked, zhMCP, true},
	{"zh_chats.deflate", zhChatsPacked, zhChats, false},
	{"zh_tui.deflate", zhTUIPacked, zhTUI, false},
}

// TestPackedCatalog fails when a packed part the binary carries is not
// its readable source (zh_cli_test.go, zh_setup_test.go, …), and when
// zhPacked or zhHashed carry a part this test does not check.
func TestPackedCatalog(t *testing.T) {
	if len(packedParts) != len(zhPacked)+len(zhHashed) {
		t.Errorf("zhPacked and zhHashed have %d parts; this test checks %d", len(zhPacked)+len(zhHashed), len(packedParts))
	}
	for _, tc := range packedParts {
		if *update {
			b, err := pack(tc.part, tc.hashed)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tc.file, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var same bool
		if tc.hashed {
			same = slices.Contains(zhHashed, tc.packed) && maps.Equal(unpackHashed([]string{tc.packed}), hashed(tc.part))
		} else {
			got := unpack([]string{tc.packed})
			same = slices.Contains(zhPacked, tc.packed) && len(got) == 1 && maps.Equal(got[0], tc.part)
		}
		if !same {
			t.Errorf("%s is not the part of its _test.go source: go test ./internal/lang -run TestPackedCatalog -update", tc.file)
		}
	}
}

// TestKeyHashesDistinct: no two keys of the catalog share a hash (a
// hashed part could not tell them apart).
func TestKeyHashesDistinct(t *testing.T) {
	seen := map[uint64]string{}
	for _, set := range zhSets {
		for k := range set {
			if o, dup := seen[keyHash(k)]; dup && o != k {
				t.Errorf("keys %q and %q share the hash %x", o, k, keyHash(k))
			}
			seen[keyHash(k)] = k
		}
	}
}

// TestPackRoundTrip: a part packs and unpacks to itself, keyed and
// hashed, and a part with one translation changed does not unpack to the
// original (the twin: the comparison above can fail).
func TestPackRoundTrip(t *testing.T) {
	part := map[string]string{"Usage:": "用法：", "approved %s\n": "已批准 %s\n"}
	b, err := pack(part, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := unpack([]string{string(b)}); len(got) != 1 || !maps.Equal(got[0], part) {
		t.Errorf("unpack(pack(%v)) = %v", part, got)
	}
	b, err = pack(part, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := unpackHashed([]string{string(b)}); !maps.Equal(got, hashed(part)) {
		t.Errorf("unpackHashed(pack(%v, hashed)) = %v", part, got)
	}
	changed := maps.Clone(part)
	changed["Usage:"] = "用法"
	b, _ = pack(changed, false)
	if got := unpack([]string{string(b)}); len(got) != 1 || maps.Equal(got[0], part) {
		t.Errorf("unpack of a changed part = %v; want it to differ from %v", got, part)
	}
	b, _ = pack(changed, true)
	if got := unpackHashed([]string{string(b)}); maps.Equal(got, hashed(part)) {
		t.Errorf("unpackHashed of a changed part = %v; want it to differ from %v", got, hashed(part))
	}
	if got := unpack([]string{"not deflate"}); len(got) != 0 {
		t.Errorf("unpack(garbage) = %v; want no part", got)
	}
	if got := unpackHashed([]string{"not deflate"}); len(got) != 0 {
		t.Errorf("unpackHashed(garbage) = %v; want no entry", got)
	}
}

// TestPackedLookup: with only the parts the binary carries (not the
// tests' readable sources), the printer finds a key of the hashed CLI
// part and of the keyed chats part in Chinese, leaves them English in
// English, and leaves a key that is in no part English.
func TestPackedLookup(t *testing.T) {
	saved := zhSets
	zhSets = []map[string]string{zhCommon, zhWeb}
	zhOnce = newOnce()
	defer func() { zhSets = saved; zhOnce = newOnce() }()
	for key, want := range map[string]string{"Usage:": "用法：", "Deny": zhChats["Deny"], "no such key %d": "no such key %d"} {
		if got := For(ZH).T(key); got != want {
			t.Errorf("For(ZH).T(%q) = %q; want %q", key, got, want)
		}
		if got := For(EN).T(key); got != key {
			t.Errorf("For(EN).T(%q) = %q; want it unchanged", key, got)
		}
	}
	if _, ok := Catalog(ZH)["Usage:"]; ok {
		t.Errorf("Catalog(ZH) holds a key of a hashed part")
	}
}

// TestCatalogServesScripts: every key of the web UI's scripts is in
// Catalog(ZH), the keyed parts /api/lang serves (a script's key in a
// hashed part would reach the browser untranslated).
func TestCatalogServesScripts(t *testing.T) {
	saved := zhSets
	zhSets = []map[string]string{zhCommon, zhWeb}
	zhOnce = newOnce()
	defer func() { zhSets = saved; zhOnce = newOnce() }()
	cat := Catalog(ZH)
	for _, js := range scripts {
		src, err := os.ReadFile(filepath.Join("..", "..", js))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range langscan.ScanJS(string(src)) {
			if _, ok := cat[k]; !ok {
				t.Errorf("%s: key %q is not in Catalog(ZH): put it in a keyed part (zhWeb, zhChats, zhTUI)", js, k)
			}
		}
	}
}
