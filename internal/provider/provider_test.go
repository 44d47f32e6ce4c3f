package provider

import (
	"testing"

	"github.com/homard/homard/internal/config"
)

// The cache hands out one client while the settings and the key stay the
// same (turns reuse its connections), and a new one when either changes:
// a rotated key or another endpoint is never served by the old client.
func TestCacheKeepsOneClientPerSettingsAndKey(t *testing.T) {
	var c Cache
	defer c.Close()
	m := config.Model{Provider: config.ProviderOpenAI, BaseURL: "http://127.0.0.1:1/v1", Name: "m"}
	a, err := c.Get(m, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get(m, "k1"); b != a {
		t.Error("the same settings and key built a second client")
	}
	if b, _ := c.Get(m, "k2"); b == a {
		t.Error("a changed key was served by the old client")
	}
	m2 := m
	m2.BaseURL = "http://127.0.0.1:2/v1"
	if b, _ := c.Get(m2, "k2"); b == a {
		t.Error("another endpoint was served by the old client")
	}
}
