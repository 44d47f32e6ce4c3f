package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/provider"
	"github.com/homard/homard/internal/setup"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/secrets"
)

// DoctorOptions adjust Doctor; the zero value checks everything.
type DoctorOptions struct {
	// Offline skips the checks that use the network (the model endpoint).
	Offline bool
	// Getenv reads the environment. Nil means os.Getenv.
	Getenv func(string) string
	// StoreURL overrides store.url (Options.StoreURL).
	StoreURL string

	// chatAdapters, when set, stand in for the channels' adapters (tests).
	chatAdapters []chat.Adapter
}

// modelEndpointDeadline bounds doctor's request to the model endpoint.
const modelEndpointDeadline = 5 * time.Second

// modelChecks says whether the model's key is there and, unless offline,
// whether its endpoint answers and takes the key. It reads the vault
// without creating it and never prints the key.
func modelChecks(ctx context.Context, cfg *config.Config, paths config.Paths, o DoctorOptions) []Check {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	m := cfg.Model
	out := []Check{{Name: "model", OK: true, Detail: fmt.Sprintf("%s · %s · %s", m.Provider, m.BaseURL, m.Name)}}
	if roles := cfg.RolesLine(); roles != "" {
		out = append(out, Check{Name: "model roles", OK: true, Detail: roles})
	}
	key, keyCheck := modelKeyCheck(m, paths, getenv)
	out = append(out, keyCheck)
	if o.Offline {
		return append(out, Check{Name: "model", Info: true, Detail: "endpoint not checked (--offline)"})
	}
	return append(out, endpointCheck(ctx, m, key))
}

func modelKeyCheck(m config.Model, paths config.Paths, getenv func(string) string) (string, Check) {
	c := Check{Name: "model key"}
	switch {
	case m.APIKeySecret != "":
		if _, err := os.Stat(paths.VaultKeyFile()); err != nil {
			c.Detail = fmt.Sprintf("model.api_key_secret names %q but there is no vault here: run homard setup, or homard secret set %s --host HOST", m.APIKeySecret, m.APIKeySecret)
			return "", c
		}
		v, err := secrets.OpenVault(paths.VaultFile(), paths.VaultKeyFile())
		if err != nil {
			c.Detail = err.Error()
			return "", c
		}
		key, err := provider.Key(m, getenv, v)
		if err != nil {
			c.Detail = err.Error()
			return "", c
		}
		c.OK, c.Detail = true, "vault secret "+m.APIKeySecret+" (released to "+setup.HostOf(m.BaseURL)+")"
		return key, c
	case m.APIKeyEnv == "":
		c.OK, c.Detail = true, "no key needed (local server)"
		return "", c
	}
	key := getenv(m.APIKeyEnv)
	switch {
	case key != "":
		c.OK, c.Detail = true, "$"+m.APIKeyEnv+" is set"
	case m.Local() || setup.LoopbackURL(m.BaseURL):
		c.Info = true
		c.Detail = fmt.Sprintf("%s not set: fine if the server at %s needs no key", m.APIKeyEnv, setup.HostOf(m.BaseURL))
	default:
		c.Detail = fmt.Sprintf("%s not set: export %s=…, or run homard setup to keep the key in the encrypted vault", m.APIKeyEnv, m.APIKeyEnv)
	}
	return key, c
}

// endpointCheck lists the endpoint's models (GET /models), which costs no
// tokens, and says whether it answered, took the key and knows model.name.
func endpointCheck(ctx context.Context, m config.Model, key string) Check {
	c := Check{Name: "model"}
	host := setup.HostOf(m.BaseURL)
	ctx, cancel := context.WithTimeout(ctx, modelEndpointDeadline)
	defer cancel()
	u := strings.TrimRight(m.BaseURL, "/") + "/models"
	if m.Wire() == config.ProviderAnthropic {
		u = strings.TrimRight(m.BaseURL, "/") + "/v1/models"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		c.Detail = fmt.Sprintf("model.base_url %q: %v", m.BaseURL, err)
		return c
	}
	if key != "" {
		if m.Wire() == config.ProviderAnthropic {
			req.Header.Set("X-Api-Key", key)
			req.Header.Set("Anthropic-Version", "2023-06-01")
		} else {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.Detail = setup.ExplainError(m, fmt.Errorf("%w: %s", llm.ErrUnreachable, llm.Scrub(err.Error(), key)))
		return c
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch kind := llm.KindForStatus(resp.StatusCode); kind {
	case nil:
		c.OK, c.Detail = true, fmt.Sprintf("%s answers (GET %s: HTTP %d)", host, req.URL.Path, resp.StatusCode)
		// Anthropic's list is paged; only an OpenAI-style list is whole.
		if ids := modelIDs(body); m.Wire() == config.ProviderOpenAI && len(ids) > 0 && !slices.Contains(ids, m.Name) {
			c.OK, c.Info = false, true
			c.Detail += fmt.Sprintf("; model %q is not in its list: check model.name (homard provider test tries it)", m.Name)
		}
	case llm.ErrAuth:
		c.Detail = setup.ExplainError(m, llm.NewAPIError(m.Provider, resp.StatusCode, body, key))
	default:
		// Not every server lists models; the endpoint did answer.
		c.Info = true
		c.Detail = fmt.Sprintf("%s answers, but GET %s gave HTTP %d: run homard provider test to try a real request", host, req.URL.Path, resp.StatusCode)
	}
	return c
}

// modelIDs reads the model ids of an OpenAI ({"data":[{"id"}]}) or
// Anthropic list; nil when the body is neither.
func modelIDs(body []byte) []string {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil {
		return nil
	}
	ids := make([]string, 0, len(list.Data))
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	return ids
}
