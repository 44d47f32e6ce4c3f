package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	h, val, err := v2.Release("github", "https", "api.github.com")
	if err != nil || h != "Authorization" || val != "Bearer "+canary {
		t.Fatalf("Release = %q, %q, %v", h, val, err)
	}
	for _, host := range []string{"github.com", "api.github.com.evil.com", "evil.com", "api.github.com:8443"} {
		if _, _, err := v2.Release("github", "https", host); err == nil {
			t.Errorf("Release to %q succeeded; the secret is bound to api.github.com only", host)
		}
	}
	if _, _, err := v2.Release("nope", "https", "api.github.com"); !errors.Is(err, ErrNoSecret) {
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
	if _, _, err := v2.Release("api", "https", "evil.example.net"); !errors.Is(err, ErrVaultFormat) {
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

// TestVaultPlainHTTP: a secret goes over plain http only when it was
// stored with AllowHTTP; https works either way; other schemes never; and
// switching the flag on by editing the vault file breaks the entry rather
// than widening it.
func TestVaultPlainHTTP(t *testing.T) {
	v, path, key := openTestVault(t)
	if err := v.Set(Secret{Name: "tls", Hosts: []string{"nas.lan:8080"}}, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	if err := v.Set(Secret{Name: "lan", Hosts: []string{"nas.lan:8080"}, AllowHTTP: true}, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, scheme string
		want         error // nil: released
	}{
		{"tls", "https", nil},
		{"tls", "http", ErrPlainHTTP},
		{"tls", "HTTP", ErrPlainHTTP},
		{"tls", "ws", ErrNotBound},
		{"lan", "http", nil},
		{"lan", "https", nil},
		{"lan", "ftp", ErrNotBound},
	} {
		_, _, rerr := v.Release(c.name, c.scheme, "nas.lan:8080")
		_, verr := v.ReleaseValue(c.name, c.scheme, "nas.lan:8080")
		berr := v.Bound(c.name, c.scheme, "nas.lan:8080")
		for what, err := range map[string]error{"Release": rerr, "ReleaseValue": verr, "Bound": berr} {
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("%s(%s, %s) = %v; want %v", what, c.name, c.scheme, err, c.want)
			}
		}
	}
	_, err := v.ReleaseValue("tls", "http", "nas.lan:8080")
	if err == nil || !strings.Contains(err.Error(), "--allow-http") || strings.Contains(err.Error(), canary) {
		t.Errorf("refusal = %v; want it to name --allow-http and not the value", err)
	}
	if l := v.List(); !l[0].AllowHTTP || l[1].AllowHTTP {
		t.Errorf("List = %+v; want lan with AllowHTTP, tls without", l)
	}

	var list []map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e["name"] == "tls" {
			e["allow_http"] = true
		}
	}
	b, _ = json.Marshal(list)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	v2, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v2.ReleaseValue("tls", "http", "nas.lan:8080"); !errors.Is(err, ErrVaultFormat) {
		t.Errorf("ReleaseValue after turning allow_http on in the file = %v; want ErrVaultFormat", err)
	}
	if _, err := v2.ReleaseValue("lan", "http", "nas.lan:8080"); err != nil {
		t.Errorf("ReleaseValue(lan) after reopening = %v; want the value", err)
	}
}

// TestVaultWriteKeepsAnotherProcesssSecrets: two openings of one vault
// (a running serve and the CLI): what one stores survives the other's
// later write, and a removal by one is not undone by the other.
func TestVaultWriteKeepsAnotherProcesssSecrets(t *testing.T) {
	dir := t.TempDir()
	path, key := filepath.Join(dir, "vault.json"), filepath.Join(dir, "vault.key")
	serve, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Set(Secret{Name: "added", Hosts: []string{"api.example.com"}}, []byte("sk-added-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	if err := serve.Set(Secret{Name: "login", Hosts: []string{"mcp.example.com"}}, []byte("refreshed-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	if err := cli.Remove("login"); err != nil {
		t.Fatal(err)
	}
	if err := serve.Set(Secret{Name: "other", Hosts: []string{"x.example.com"}}, []byte("other-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	again, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range again.List() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "added,other" {
		t.Errorf("vault after writes from two openings holds %v; want added and other (login removed)", names)
	}
}

// TestValuesSplitsALoginsTokens: a value that is a JSON object (a hosted
// MCP server's login) gives its token and secret fields as known values
// of their own, so each is redacted where it appears alone; another
// field and a plain value are not split.
func TestValuesSplitsALoginsTokens(t *testing.T) {
	v, _, _ := openTestVault(t)
	login := `{"access_token":"at-CANARY-0123456789","refresh_token":"rt-CANARY-9876543210","client_secret":"cs-CANARY-55555","token_url":"https://as.example/token","client_id":"homard-client-1"}`
	if err := v.Set(Secret{Name: "mcp-login-web", Hosts: []string{"mcp.example"}}, []byte(login)); err != nil {
		t.Fatal(err)
	}
	if err := v.Set(Secret{Name: "plain", Hosts: []string{"api.example"}}, []byte(`{not json "token": x`)); err != nil {
		t.Fatal(err)
	}
	vals, err := v.Values()
	if err != nil {
		t.Fatal(err)
	}
	r := NewRedactor(vals...)
	for _, tok := range []string{"at-CANARY-0123456789", "rt-CANARY-9876543210", "cs-CANARY-55555"} {
		if got := r.Redact("echo " + tok); strings.Contains(got, tok) {
			t.Errorf("Redact(%q) = %q; want the field hidden on its own", tok, got)
		}
	}
	for _, keep := range []string{"homard-client-1", "https://as.example/token"} {
		if got := r.Redact("see " + keep); got != "see "+keep {
			t.Errorf("Redact(%q) = %q; a non-secret field of the login was treated as a secret", keep, got)
		}
	}
}

// TestVaultConcurrentWritersLoseNothing: two openings of one vault (serve
// and the CLI) writing at the same time keep every secret both wrote: the
// lock file orders their read-modify-writes.
func TestVaultConcurrentWritersLoseNothing(t *testing.T) {
	dir := t.TempDir()
	path, key := filepath.Join(dir, "vault.json"), filepath.Join(dir, "vault.key")
	a, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	const n = 25
	errs := make(chan error, 2*n)
	done := make(chan struct{})
	for _, w := range []struct {
		v    *Vault
		name string
	}{{a, "serve"}, {b, "cli"}} {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range n {
				errs <- w.v.Set(Secret{Name: fmt.Sprintf("%s-%d", w.name, i), Hosts: []string{"x.example.com"}}, []byte("value-0123456789abcdef"))
			}
		}()
	}
	<-done
	<-done
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	again, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(again.List()); got != 2*n {
		t.Errorf("the vault holds %d secrets after two writers set %d each; want %d (a write was lost)", got, n, 2*n)
	}
}
