package extensions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/mcp/mcptest"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

// TestMain lets this test binary act as the sandbox's helper stages (a
// service's relay re-executes it) and, with mcptest.SpecEnv set, as the
// tests' stdio MCP server.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	if spec := os.Getenv(mcptest.SpecEnv); spec != "" {
		mcptest.Serve(os.Stdin, os.Stdout, spec)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testHome is a fresh home's config, database, vault and egress client:
// the real dependencies a Service is built over.
type testHome struct {
	paths  config.Paths
	cfg    *config.Config
	st     *store.Store
	vault  *secrets.Vault
	client *egress.Client
}

func newTestHome(t *testing.T) testHome {
	t.Helper()
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Init(paths, config.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t)
	vault, err := secrets.OpenVault(filepath.Join(paths.DataDir, "vault.json"), filepath.Join(paths.DataDir, "vault.key"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := egress.New(egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return testHome{paths: paths, cfg: cfg, st: st, vault: vault, client: client}
}

// service builds a Service over the home; it is closed when the test ends.
func (h testHome) service(t *testing.T, host Host) *Service {
	t.Helper()
	s := New(Options{Paths: h.paths, Config: h.cfg, Store: h.st, Vault: h.vault, Egress: h.client,
		Redactor: secrets.NewRedactor(), Version: "test", Host: host})
	t.Cleanup(func() { s.Close() })
	return s
}

// sandboxOK skips the test when the service sandbox cannot work here;
// under CI it must.
func sandboxOK(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Select("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap unavailable in CI: %v", err)
		}
		t.Skipf("bwrap unavailable: %v", err)
	}
}
