package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/tool"
)

//go:embed http_get.md
var httpGetDoc string

// Vault is what the web tools need from the secrets vault.
type Vault interface {
	Bound(name, scheme, host string) error
	Release(name, scheme, host string) (header, value string, err error)
}

var _ Vault = (*secrets.Vault)(nil)

// HTTPGetParams are http_get's arguments.
type HTTPGetParams struct {
	URL      string `json:"url"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"default and maximum 2 MiB"`
	Auth     string `json:"auth,omitempty"`
}

// HTTPGet is the http_get tool.
type HTTPGet struct {
	client *egress.Client
	vault  Vault
}

// NewWebTools builds http_get and web_search over one egress client.
// searchURL holds {query}.
func NewWebTools(client *egress.Client, vault Vault, searchURL string) []tool.Tool {
	return []tool.Tool{
		tool.Adapt[HTTPGetParams](&HTTPGet{client: client, vault: vault}),
		tool.Adapt[WebSearchParams](&WebSearch{client: client, searchURL: searchURL}),
	}
}

type httpGetBody struct {
	URL      string `json:"url"`
	MaxBytes int    `json:"max_bytes"`
	Auth     string `json:"auth"`
	Host     string `json:"host"`
}

const maxFetchBytes = 2 << 20

func (t *HTTPGet) Spec() tool.Spec {
	return tool.Spec{Name: "http_get", Description: doc(httpGetDoc), Action: policy.ActionFetch, Risk: policy.RiskMedium,
		PublicResult: true} // the public web; a call with a credential says otherwise in its Plan
}

func (t *HTTPGet) Prepare(ctx context.Context, p HTTPGetParams) (tool.Plan, error) {
	if err := t.client.Check(p.URL); err != nil {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitEgress, "%v", err)
	}
	u, err := url.Parse(p.URL)
	if err != nil || u.Host == "" {
		return tool.Plan{}, tool.InvalidArgs("url %q is not an absolute URL", p.URL)
	}
	if p.MaxBytes, err = upTo("max_bytes", p.MaxBytes, maxFetchBytes, maxFetchBytes); err != nil {
		return tool.Plan{}, err
	}
	host := strings.ToLower(u.Host)
	risk := policy.RiskMedium
	display := "GET " + u.Redacted()
	if p.Auth != "" {
		if t.vault == nil {
			return tool.Plan{}, tool.Refuse(policy.RuleLimitSecretHost, "there is no vault to take secret %q from", p.Auth)
		}
		if err := t.vault.Bound(p.Auth, u.Scheme, host); err != nil {
			if errors.Is(err, secrets.ErrPlainHTTP) {
				return tool.Plan{}, tool.Refuse(policy.RuleLimitSecretHTTP, "%v", err)
			}
			return tool.Plan{}, tool.Refuse(policy.RuleLimitSecretHost, "%v", err)
		}
		risk = policy.RiskHigh
		display += "\n  with secret " + p.Auth + " (bound to " + host + ")"
	}
	preview := fmt.Sprintf("method: GET\nurl: %s\nhost: %s\nread at most: %d bytes\n", u.Redacted(), host, p.MaxBytes)
	if p.Auth != "" {
		preview += "secret: " + p.Auth + " (its value is sent only to " + host + ", as its configured header)\n"
	} else {
		preview += "secret: none\n"
	}
	return t.Spec().Plan(tool.PlanSpec{
		Risk:    risk,
		Display: display,
		Preview: preview,
		// A credential opens an account: what comes back is the owner's.
		PrivateResult: p.Auth != "",
		Targets:       []string{u.Scheme + "://" + host},
		Body:          httpGetBody{URL: p.URL, MaxBytes: p.MaxBytes, Auth: p.Auth, Host: host},
	})
}

func (t *HTTPGet) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b httpGetBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	header := http.Header{}
	if b.Auth != "" {
		// The value exists only here, in the request to the bound host;
		// the egress client drops it on a redirect to another origin.
		// The scheme is taken from the URL actually fetched, so plain
		// http is refused here too unless the secret allows it.
		u, err := url.Parse(b.URL)
		if err != nil || !strings.EqualFold(u.Host, b.Host) {
			return tool.Errorf("refused: the plan's URL %q does not match its host %q", b.URL, b.Host), nil
		}
		name, value, err := t.vault.Release(b.Auth, u.Scheme, b.Host)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		header.Set(name, value)
	}
	resp, err := t.client.Get(ctx, b.URL, header)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{Text: "fetch failed: " + err.Error(), IsError: true}, nil
	}
	body := resp.Body
	if len(body) > b.MaxBytes {
		body, resp.Truncated = body[:b.MaxBytes], true
	}
	text := string(body)
	if strings.Contains(strings.ToLower(resp.ContentType), "html") {
		text = egress.HTMLToText(body)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "HTTP %d · %s · %s\n", resp.Status, resp.ContentType, resp.FinalURL)
	if resp.Location != "" {
		// The egress client follows redirects on the same host only: the
		// decision was about this host. Another is a new request.
		fmt.Fprintf(&out, "[redirect to another host not followed: %s — call http_get with that URL to fetch it; it is decided again]\n", resp.Location)
	}
	if resp.Truncated {
		fmt.Fprintf(&out, "[truncated at %d bytes]\n", len(body))
	}
	out.WriteString(text)
	return tool.Result{Text: out.String(), IsError: resp.Status >= 400, Untrusted: true}, nil
}

// errBadFeed is returned when a search endpoint does not answer with RSS.
var errBadFeed = errors.New("the search endpoint did not return an RSS feed")
