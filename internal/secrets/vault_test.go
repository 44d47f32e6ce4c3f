package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTestVault(t *testing.T) (*Vault, string, string) {
	t.Helper()
	dir := t.TempDir()
	path, key := filepath.Join(dir, "vault.json"), filepath.Join(dir, "vault.key")
	v, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	return v, path, key
}

const canary = "ghp_CANARYvaultVALUE0123456789abcdefABCD"

func TestVaultRoundTripAndBinding(t *testing.T) {
	v, path, key := openTestVault(t)
	if err := v.Set(Secret{Name: "github", Hosts: []string{"API.github.com"}}, []byte(canary+"\n")); err != nil {
		t.Fatal(err)
	}
	// Reopen from disk: the value survives, bound to its host only.
	v2, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	h, val, err := v2.Release("github", "api.github.com")
	if err != nil || h != "Authorization" || val != "Bearer "+canary {
		t.Fatalf("Release = %q, %q, %v", h, val, err)
	}
	for _, host := range []string{"github.com", "api.github.com.evil.com", "evil.com", "api.github.com:8443"} {
		if _, _, err := v2.Release("github", host); err == nil {
			t.Errorf("Release to %q succeeded; the secret is bound to api.github.com only", host)
		}
	}
	if _, _, err := v2.Release("nope", "api.github.com"); !errors.Is(err, ErrNoSecret) {
		t.Errorf("Release(nope) = %v; want ErrNoSecret", err)
	}
	list := v2.List()
	if len(list) != 1 || list[0].Name != "github" || list[0].Hosts[0] != "api.github.com" {
		t.Fatalf("List = %+v", list)
	}
	// At rest: neither the vault file nor the key file holds the value.
	for _, p := range []string{path, key} {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("CANARYvaultVALUE")) {
			t.Fatalf("%s holds the secret in plain text", filepath.Base(p))
		}
	}
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %04o; want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("vault file mode %04o; want 0600", fi.Mode().Perm())
	}
	vals, err := v2.Values()
	if err != nil || len(vals) != 1 || vals[0] != canary {
		t.Fatalf("Values = %v, %v", vals, err)
	}
	if got := NewRedactor(vals...).Redact("token: " + canary); strings.Contains(got, "CANARY") {
		t.Fatalf("a Redactor built from the vault left the value: %q", got)
	}
	if err := v2.Remove("github"); err != nil {
		t.Fatal(err)
	}
	if len(v2.List()) != 0 {
		t.Fatal("Remove left the entry")
	}
}

// TestVaultRebindingFails: editing the stored host list (to point the
// ciphertext at a host the owner never bound) makes it fail to decrypt.
func TestVaultRebindingFails(t *testing.T) {
	v, path, key := openTestVault(t)
	if err := v.Set(Secret{Name: "api", Hosts: []string{"api.example.com"}}, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	list[0]["hosts"] = []string{"evil.example.net"}
	b, _ = json.Marshal(list)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	v2, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := v2.Release("api", "evil.example.net"); !errors.Is(err, ErrVaultFormat) {
		t.Fatalf("Release after rebinding = %v; want ErrVaultFormat", err)
	}
}

func TestVaultRejects(t *testing.T) {
	v, _, key := openTestVault(t)
	bad := []struct {
		s     Secret
		value string
	}{
		{Secret{Name: "Bad Name", Hosts: []string{"a.com"}}, canary},
		{Secret{Name: "ok"}, canary},
		{Secret{Name: "ok", Hosts: []string{"*.a.com"}}, canary},
		{Secret{Name: "ok", Hosts: []string{"https://a.com/x"}}, canary},
		{Secret{Name: "ok", Hosts: []string{"a.com"}, Format: "no placeholder"}, canary},
		{Secret{Name: "ok", Hosts: []string{"a.com"}, Header: "X Bad"}, canary},
		{Secret{Name: "ok", Hosts: []string{"a.com"}}, "short"},
		{Secret{Name: "ok", Hosts: []string{"a.com"}}, "two\nlines-value"},
	}
	for _, c := range bad {
		if err := v.Set(c.s, []byte(c.value)); err == nil {
			t.Errorf("Set(%+v, %q) succeeded; want an error", c.s, c.value)
		}
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenVault(filepath.Join(filepath.Dir(key), "vault.json"), key); !errors.Is(err, ErrVaultKey) {
		t.Fatalf("OpenVault with a 0644 key = %v; want ErrVaultKey", err)
	}
}
