package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/secrets"
)

func TestProviderTest(t *testing.T) {
	const key = "sk-test-PROVIDERKEY0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"O", "K"}, Usage: &llm.Usage{Input: 20, Output: 1, Cached: 8}})}
	cases := []struct {
		name  string
		reply llmtest.Reply
		want  error
		hint  string
	}{
		{"ok", ok, nil, ""},
		{"bad key", llmtest.OpenAIError(401), llm.ErrAuth, "OPENAI_API_KEY"},
		{"unknown model", llmtest.OpenAIError(404), llm.ErrModelNotFound, "model.name"},
		{"no tools", llmtest.OpenAIError(400), llm.ErrBadRequest, "tool-call support"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(c.reply)
			defer srv.Close()
			r := newTestRuntime(t, "smart")
			r.Config.Model.BaseURL = srv.URL + "/v1"
			rep, err := r.ProviderTest(context.Background())
			if c.want == nil {
				if err != nil || rep.Reply != "OK" || rep.Usage.Cached != 8 {
					t.Fatalf("ProviderTest = %+v, %v; want reply OK with usage", rep, err)
				}
			} else if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.hint) {
				t.Fatalf("ProviderTest error = %v; want %v mentioning %q", err, c.want, c.hint)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Fatalf("the error shows the key: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"tools"`) || reqs[0].Header.Get("Authorization") != "Bearer "+key {
				t.Fatalf("request %+v; want one request with tools and the bearer key", reqs)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		r := newTestRuntime(t, "smart")
		r.Config.Model.BaseURL = "http://127.0.0.1:1/v1"
		if _, err := r.ProviderTest(context.Background()); !errors.Is(err, llm.ErrUnreachable) {
			t.Fatalf("ProviderTest = %v; want ErrUnreachable", err)
		}
	})
}

// TestModelKeyFromVault: with model.api_key_secret, the key comes from the
// vault, only to the host the secret is bound to and, for this plain-http
// endpoint, only once the secret allows http; the environment variable is
// not read; a missing, wrongly bound or https-only secret says how to fix it.
func TestModelKeyFromVault(t *testing.T) {
	const envKey = "sk-test-ENVKEY-should-not-be-sent-0123"
	const vaultKey = "sk-test-VAULTKEY-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", envKey)
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})}
	srv := llmtest.NewServer(ok)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	r := newTestRuntime(t, "smart")
	r.Config.Model.BaseURL = srv.URL + "/v1"
	r.Config.Model.APIKeySecret = "llm"

	if _, err := r.ProviderTest(context.Background()); !errors.Is(err, ErrNoKey) ||
		!strings.Contains(err.Error(), "homard secret set llm --host "+host) {
		t.Fatalf("missing secret: %v; want ErrNoKey with the command that fixes it", err)
	}
	if err := r.Owner.SecretSet(Secret{Name: "llm", Hosts: []string{"api.openai.com"}}, []byte(vaultKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ProviderTest(context.Background()); !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "not bound to host") {
		t.Fatalf("secret bound elsewhere: %v; want ErrNoKey saying it is not bound to %s", err, host)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the endpoint without a released key", n)
	}
	if err := r.Owner.SecretSet(Secret{Name: "llm", Hosts: []string{host}}, []byte(vaultKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ProviderTest(context.Background()); !errors.Is(err, ErrNoKey) || !errors.Is(err, secrets.ErrPlainHTTP) ||
		!strings.Contains(err.Error(), "--allow-http") {
		t.Fatalf("https-only secret to an http endpoint: %v; want ErrNoKey naming --allow-http", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the plain-http endpoint with an https-only secret", n)
	}
	if err := r.Owner.SecretSet(Secret{Name: "llm", Hosts: []string{host}, AllowHTTP: true}, []byte(vaultKey)); err != nil {
		t.Fatal(err)
	}
	if rep, err := r.ProviderTest(context.Background()); err != nil || rep.Reply != "OK" {
		t.Fatalf("ProviderTest = %+v, %v; want OK with the vault key", rep, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer "+vaultKey {
		t.Fatalf("requests %+v; want one request carrying the vault key, not $OPENAI_API_KEY", reqs)
	}
}

// TestEnvModelKeyIsRedacted: the model key from the environment is a known
// secret: a file that holds it reaches the model redacted.
func TestEnvModelKeyIsRedacted(t *testing.T) {
	const key = "oai-0123456789-NOT-A-PATTERN-KEY"
	t.Setenv("OPENAI_API_KEY", key)
	r := newTestRuntime(t, "smart")
	writeWorkspaceFile(t, r, "leak.txt", "the key is "+key+"\n")
	out, err := r.Call(context.Background(), CallRequest{Tool: "read_file", Args: `{"path":"leak.txt"}`})
	if err != nil || out.Result == nil {
		t.Fatalf("read_file = %+v, %v", out, err)
	}
	if strings.Contains(out.Result.Text, key) || !strings.Contains(out.Result.Text, "the key is ") {
		t.Fatalf("result %q; want the key redacted and the rest kept", out.Result.Text)
	}
}

// TestNoKeySaidAsSuch: a turn the endpoint answers with 401 says "key not
// set" when no key was configured to send, and that the endpoint refused
// the key only when one was sent (the twin).
func TestNoKeySaidAsSuch(t *testing.T) {
	for _, tt := range []struct {
		name, key   string
		want, wantN string
	}{
		{"no key", "", "key not set: $OPENAI_API_KEY is empty and model.api_key_secret names no vault secret", "refused the key"},
		{"a key", "sk-test-NOKEYTEST0123456789", "the endpoint refused the key in $OPENAI_API_KEY", "key not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", tt.key)
			srv := llmtest.NewServer(llmtest.OpenAIError(401))
			defer srv.Close()
			r := newTestRuntime(t, "smart")
			r.Config.Model.BaseURL = srv.URL + "/v1"
			r.Config.Memory.Capture = "off"
			_, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi"})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), tt.wantN) {
				t.Fatalf("Run = %v; want %q and not %q", err, tt.want, tt.wantN)
			}
			if !errors.Is(err, llm.ErrAuth) {
				t.Errorf("Run = %v; want it to wrap llm.ErrAuth", err)
			}
		})
	}
}
