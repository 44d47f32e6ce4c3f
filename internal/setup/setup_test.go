package setup

import (
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
)

// TestSetupKeyOverPlainHTTP: a typed key is sent over http only to
// loopback; to another host over http setup refuses and says what to do.
// The twin: the same over https or to 127.0.0.1 is accepted.
func TestSetupKeyOverPlainHTTP(t *testing.T) {
	tests := []struct {
		url       string
		allowHTTP bool
		want      string // "" means accepted
	}{
		{"http://192.168.1.20:8000/v1", false, "the key would travel in clear text to 192.168.1.20:8000: use an https URL"},
		{"https://192.168.1.20:8000/v1", false, ""},
		{"http://127.0.0.1:8000/v1", true, ""},
		{"http://localhost:8000/v1", true, ""},
		{"http://[::1]:8000/v1", true, ""},
	}
	p, _ := config.LookupPreset("vllm")
	for _, tt := range tests {
		s, err := modelSecret(config.Model{Provider: "vllm", BaseURL: tt.url}, p)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("modelSecret(%s) = %v; want accepted", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("modelSecret(%s) = %v; want an error containing %q", tt.url, err, tt.want)
		case err == nil && (s.Name != "model-vllm" || s.AllowHTTP != tt.allowHTTP):
			t.Errorf("modelSecret(%s) = %+v; want model-vllm, allow http %v", tt.url, s, tt.allowHTTP)
		}
	}
}
