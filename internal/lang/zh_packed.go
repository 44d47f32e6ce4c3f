package lang

import (
	"bytes"
	"compress/flate"
	_ "embed" // the packed parts
	"io"
	"strings"
)

// The CLI's and setup's parts of the catalog are carried in the binary
// deflated: as Go maps their 617 short entries took 53 KB of the binary's
// 25 MB ceiling (a string header per key and per value, and the Chinese
// text); deflated, the same entries took 24 KB (measured). Their readable source, each key beside its
// translation, is zh_cli_test.go (zhCLI) and zh_setup_test.go (zhSetup);
// TestPackedCatalog keeps these files equal to it, and
// `go test ./internal/lang -run TestPackedCatalog -update` rewrites them.
// They are inflated on the first Chinese lookup only: English never
// reads them.
var (
	//go:embed zh_cli.deflate
	zhCLIPacked string
	//go:embed zh_setup.deflate
	zhSetupPacked string

	zhPacked = []string{zhCLIPacked, zhSetupPacked}
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
