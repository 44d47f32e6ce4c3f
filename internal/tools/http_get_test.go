package tools

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/tool"
)

const httpCanary = "CANARYplainHTTPtoken0123456789abcdef"

// TestHTTPGetPlainHTTPSecret: a credential is attached to an http:// URL
// (an allow-listed home-lab endpoint) only when its secret was stored with
// AllowHTTP; otherwise Prepare refuses with limit.secret-http, and Run
// refuses too (a plan made some other way sends nothing). Twin: the same
// endpoint without a credential, and the allowed secret, both work.
func TestHTTPGetPlainHTTPSecret(t *testing.T) {
	var got []string // Authorization headers the server saw
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	vault, err := secrets.OpenVault(filepath.Join(dir, "vault.json"), filepath.Join(dir, "vault.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := vault.Set(secrets.Secret{Name: "tls-only", Hosts: []string{host}}, []byte(httpCanary)); err != nil {
		t.Fatal(err)
	}
	if err := vault.Set(secrets.Secret{Name: "lan", Hosts: []string{host}, AllowHTTP: true}, []byte(httpCanary)); err != nil {
		t.Fatal(err)
	}
	client, err := egress.New(egress.Options{Allow: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	tl := tool.Adapt[HTTPGetParams](&HTTPGet{client: client, vault: vault})

	for _, c := range []struct {
		name, auth string
		refusal    string // rule of the expected refusal; "" when it runs
		header     string // Authorization the server must see
	}{
		{"no credential", "", "", ""},
		{"https-only secret", "tls-only", "limit.secret-http", ""},
		{"secret allowing http", "lan", "", "Bearer " + httpCanary},
	} {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			args, _ := json.Marshal(HTTPGetParams{URL: srv.URL + "/me", Auth: c.auth})
			params, err := tl.Decode(args)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := tl.Prepare(t.Context(), params)
			if c.refusal != "" {
				var ref *tool.Refusal
				if !errors.As(err, &ref) || ref.Rule != c.refusal || !strings.Contains(err.Error(), "--allow-http") {
					t.Fatalf("Prepare = %v; want refusal %s naming --allow-http", err, c.refusal)
				}
				return
			}
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			res, err := tl.Run(t.Context(), plan)
			if err != nil || res.IsError {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if len(got) != 1 || got[0] != c.header {
				t.Errorf("server saw Authorization %q; want [%q]", got, c.header)
			}
		})
	}

	// A plan for the https-only secret over http, made without Prepare:
	// Run releases nothing and the server is never asked.
	got = nil
	plan, err := tool.NewPlan(tool.PlanSpec{
		Tool: "http_get", Action: policy.ActionFetch, Risk: policy.RiskHigh, Display: "GET",
		Targets: []string{"http://" + host},
		Body:    httpGetBody{URL: srv.URL + "/me", MaxBytes: 100, Auth: "tls-only", Host: host},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Run(t.Context(), plan)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "clear text") || len(got) != 0 {
		t.Errorf("Run of a forged plan = %+v, %v, server saw %q; want an error result and no request", res, err, got)
	}
}
