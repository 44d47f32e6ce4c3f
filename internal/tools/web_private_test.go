package tools

import (
	"testing"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/tool"
)

// boundVault binds every secret to every host; it releases nothing.
type boundVault struct{}

func (boundVault) Bound(name, scheme, host string) error { return nil }
func (boundVault) Release(name, scheme, host string) (string, string, error) {
	return "Authorization", "Bearer x", nil
}

// TestWebPlansPrivateResult: http_get and web_search read the public web,
// so their Specs say PublicResult, except that an http_get sending a
// credential reads an account: its Plan says PrivateResult.
func TestWebPlansPrivateResult(t *testing.T) {
	client, err := egress.New(egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(NewWebTools(client, boundVault{}, "https://search.example/rss?q={query}")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, args string
		private    bool
	}{
		{"http_get", `{"url":"https://example.com/"}`, false},
		{"http_get", `{"url":"https://api.example.com/me","auth":"github"}`, true},
		{"web_search", `{"query":"oolong"}`, false},
	} {
		tl, ok := reg.Lookup(c.tool)
		if !ok || !tl.Spec().PublicResult {
			t.Fatalf("%s: registered %v, PublicResult %v; want a public tool", c.tool, ok, ok && tl.Spec().PublicResult)
		}
		params, err := tl.Decode([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := tl.Prepare(t.Context(), params)
		if err != nil {
			t.Fatalf("%s %s: Prepare: %v", c.tool, c.args, err)
		}
		if plan.PrivateResult() != c.private {
			t.Errorf("%s %s: PrivateResult() = %v; want %v", c.tool, c.args, plan.PrivateResult(), c.private)
		}
	}
}
