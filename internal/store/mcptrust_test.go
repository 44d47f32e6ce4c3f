package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestMCPTrust: a server is not trusted until recorded; trusting again
// replaces the pin; forgetting removes it; a malformed pin is refused.
func TestMCPTrust(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if _, err := s.MCPTrust(ctx, "everything"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MCPTrust(untrusted) err = %v; want ErrNotFound", err)
	}
	at := time.Unix(1_800_000_000, 0)
	for _, fp := range []string{"sha256:aa", "sha256:bb"} {
		err := s.Write(ctx, func(tx *Tx) error {
			return tx.TrustMCP(MCPTrust{Server: "everything", Fingerprint: fp, ToolsJSON: `[{"name":"echo"}]`, Instructions: "be nice", TrustedAt: at})
		})
		if err != nil {
			t.Fatalf("TrustMCP(%s): %v", fp, err)
		}
		got, err := s.MCPTrust(ctx, "everything")
		if err != nil {
			t.Fatal(err)
		}
		want := MCPTrust{Server: "everything", Fingerprint: fp, ToolsJSON: `[{"name":"echo"}]`, Instructions: "be nice", TrustedAt: at}
		if !got.TrustedAt.Equal(at) || got.Fingerprint != want.Fingerprint || got.ToolsJSON != want.ToolsJSON || got.Instructions != want.Instructions {
			t.Errorf("MCPTrust after trusting %s = %+v; want %+v", fp, got, want)
		}
	}
	for _, bad := range []MCPTrust{{Server: "", Fingerprint: "sha256:aa"}, {Server: "x", Fingerprint: "md5:aa"}} {
		if err := s.Write(ctx, func(tx *Tx) error { return tx.TrustMCP(bad) }); err == nil {
			t.Errorf("TrustMCP(%+v) succeeded; want it refused", bad)
		}
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.ForgetMCP("everything") }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MCPTrust(ctx, "everything"); !errors.Is(err, ErrNotFound) {
		t.Errorf("MCPTrust after ForgetMCP err = %v; want ErrNotFound", err)
	}
}
