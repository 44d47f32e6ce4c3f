package turntrace

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
)

// keys releases one secret as a bearer header, or refuses.
type keys struct{ err error }

func (k keys) Release(name, scheme, host string) (string, string, error) {
	return "Authorization", "Bearer collector-key", k.err
}

// TestCheck: doctor's telemetry line. Off without an endpoint; a
// collector that accepts an empty export (with the released key) is ok;
// one that refuses, a key that cannot be released and a closed port are
// failures naming the setting; offline, nothing is sent.
func TestCheck(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer collector-key" {
			http.Error(w, "who are you", http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	withKey := config.Telemetry{Endpoint: srv.URL, HeadersSecret: "otel"}
	for _, tc := range []struct {
		name   string
		c      config.Telemetry
		k      keys
		probe  bool
		ok     bool
		detail string
	}{
		{"off", config.Telemetry{}, keys{}, true, true, "off ([telemetry] endpoint unset)"},
		{"accepts", withKey, keys{}, true, true, "accepts exports"},
		{"refuses without the key", config.Telemetry{Endpoint: srv.URL}, keys{}, true, false, "401"},
		{"key not released", withKey, keys{err: errors.New("no secret otel")}, true, false, "telemetry.headers_secret: no secret otel"},
		{"nobody listens", config.Telemetry{Endpoint: "http://127.0.0.1:1"}, keys{}, true, false, "check [telemetry] endpoint"},
		{"offline", withKey, keys{}, false, true, "not checked offline"},
	} {
		ok, detail := Check(ctx, tc.c, tc.k, "test", tc.probe)
		if ok != tc.ok || !strings.Contains(detail, tc.detail) {
			t.Errorf("%s: %v %q; want %v and %q", tc.name, ok, detail, tc.ok, tc.detail)
		}
	}
	if len(got) != 2 || got[0] != "/v1/traces Bearer collector-key" || got[1] != "/v1/traces " {
		t.Errorf("the collector saw %q; want one export with the key, one without (and none offline)", got)
	}
}
