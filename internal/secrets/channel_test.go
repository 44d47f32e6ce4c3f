package secrets

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestVaultChannelToken: a channel token is released to its channel's
// adapter only, never to a tool's request, whatever host it names.
func TestVaultChannelToken(t *testing.T) {
	v, path, key := openTestVault(t)
	if err := v.Set(Secret{Name: "tg", Channel: "telegram"}, []byte(canary)); err != nil {
		t.Fatalf("Set channel secret: %v", err)
	}
	// The twin: a host-bound secret still releases.
	if err := v.Set(Secret{Name: "api", Hosts: []string{"api.telegram.org"}}, []byte(canary+"x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Release("api", "https", "api.telegram.org"); err != nil {
		t.Errorf("Release(api) = %v; want the host-bound secret released", err)
	}
	for _, host := range []string{"api.telegram.org", "", "evil.example"} {
		if err := v.Bound("tg", "https", host); !errors.Is(err, ErrChannelSecret) {
			t.Errorf("Bound(tg, %q) = %v; want ErrChannelSecret", host, err)
		}
		if _, _, err := v.Release("tg", "https", host); !errors.Is(err, ErrChannelSecret) {
			t.Errorf("Release(tg, %q) = %v; want ErrChannelSecret", host, err)
		}
		if _, err := v.ReleaseValue("tg", "https", host); !errors.Is(err, ErrChannelSecret) {
			t.Errorf("ReleaseValue(tg, %q) = %v; want ErrChannelSecret", host, err)
		}
	}
	v2, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v2.ChannelToken("tg", "telegram"); err != nil || got != canary {
		t.Errorf("ChannelToken(tg, telegram) = %q, %v; want the token", got, err)
	}
	for _, tc := range []struct{ name, platform string }{{"tg", "discord"}, {"api", "telegram"}, {"nope", "telegram"}} {
		if got, err := v2.ChannelToken(tc.name, tc.platform); err == nil || got != "" {
			t.Errorf("ChannelToken(%s, %s) = %q, nil; want refused", tc.name, tc.platform, got)
		}
	}
	// The token is a known value: the redactor gets it.
	vals, _ := v2.Values()
	if !strings.Contains(strings.Join(vals, "\n"), canary) {
		t.Error("Values() does not hold the channel token; it would not be redacted")
	}
}

func TestVaultChannelRejects(t *testing.T) {
	v, _, _ := openTestVault(t)
	for _, s := range []Secret{
		{Name: "a", Channel: "telegram", Hosts: []string{"api.telegram.org"}},
		{Name: "b", Channel: "telegram", AllowHTTP: true},
		{Name: "c", Channel: "Tele gram"},
	} {
		if err := v.Set(s, []byte(canary)); err == nil {
			t.Errorf("Set(%+v) = nil; want refused", s)
		}
	}
}

// TestVaultChannelUntagFails: removing the channel tag in the file (to
// give the token hosts) breaks the entry instead of releasing it.
func TestVaultChannelUntagFails(t *testing.T) {
	v, path, key := openTestVault(t)
	if err := v.Set(Secret{Name: "tg", Channel: "telegram"}, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	delete(list[0], "channel")
	list[0]["hosts"] = []string{"evil.example"}
	b, _ = json.Marshal(list)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	v2, err := OpenVault(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := v2.Release("tg", "https", "evil.example"); !errors.Is(err, ErrVaultFormat) {
		t.Fatalf("Release after untagging = %v; want ErrVaultFormat", err)
	}
}
