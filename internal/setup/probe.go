package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/llm"
)

// DefaultOllamaURL is where Ollama listens unless told otherwise.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// ollamaDeadline bounds the detection: a local server answers at once.
const ollamaDeadline = 2 * time.Second

// DetectOllama asks the Ollama at root (DefaultOllamaURL when empty) which
// models it has pulled (GET /api/tags), within a short deadline. An error
// means no Ollama answered there.
func DetectOllama(ctx context.Context, root string) ([]string, error) {
	if root == "" {
		root = DefaultOllamaURL
	}
	ctx, cancel := context.WithTimeout(ctx, ollamaDeadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(root, "/")+"/api/tags", nil)
	if err != nil {
		return nil, fmt.Errorf("detect ollama: %w", err) // lang:en: a probe's error
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("detect ollama: %w", err) // lang:en: a probe's error
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("detect ollama: %s/api/tags answered HTTP %d", root, resp.StatusCode) // lang:en: a probe's error
	}
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tags); err != nil {
		return nil, fmt.Errorf("detect ollama: %s/api/tags: %w", root, err) // lang:en: a probe's error
	}
	names := make([]string, 0, len(tags.Models))
	for _, m := range tags.Models {
		if m.Name != "" {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// missingModel says which model name to pass for a preset without a
// default: for Ollama, the ones it has.
func missingModel(say lang.Printer, ctx context.Context, p config.Preset, ollamaURL string) error {
	if p.Name != "ollama" {
		return say.Errorf("setup: %s has no default model: pass --model NAME (the name the server serves)", p.Title)
	}
	if ollamaURL == "" {
		ollamaURL = DefaultOllamaURL
	}
	models, err := DetectOllama(ctx, ollamaURL)
	switch {
	case err != nil:
		return say.Errorf("setup: cannot connect to %s: is ollama running? (start it with `ollama serve`, then pass --model NAME)", HostOf(ollamaURL))
	case len(models) == 0:
		return say.Errorf("setup: ollama at %s has no models: run `ollama pull qwen3` (or another model with tool support), then pass --model NAME", HostOf(ollamaURL))
	}
	return say.Errorf("setup: pass --model NAME; ollama at %s has %s", HostOf(ollamaURL), strings.Join(models, ", "))
}

func HostOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	return s
}

// ExplainError says what the provider test's failure means, in the
// words the owner needs: key rejected, model not found, cannot connect,
// with the HTTP status and the provider's own message.
func ExplainError(m config.Model, err error) string { return Explain(lang.Printer{}, m, err) }

// Explain is ExplainError in say's language.
func Explain(say lang.Printer, m config.Model, err error) string {
	host := HostOf(m.BaseURL)
	var api *llm.APIError
	detail := ""
	if errors.As(err, &api) {
		detail = fmt.Sprintf(" (HTTP %d", api.Status) // lang:en: a status
		if api.Message != "" {
			detail += ": " + api.Message
		}
		detail += ")"
	}
	switch {
	case errors.Is(err, llm.ErrAuth):
		return say.Sprintf("key rejected by %s%s: check the key and that it belongs to %s", host, detail, m.BaseURL)
	case errors.Is(err, llm.ErrModelNotFound):
		hint := say.T("check the model name and the base URL")
		if m.Provider == "ollama" {
			hint = say.Sprintf("run `ollama pull %s`, or pick a model `ollama list` shows", m.Name)
		}
		return say.Sprintf("model not found: %s does not serve %q%s: %s", host, m.Name, detail, hint)
	case errors.Is(err, llm.ErrUnreachable):
		switch {
		case m.Provider == "ollama":
			return say.Sprintf("cannot connect to %s: is ollama running? (start it with `ollama serve`)", host)
		case m.Local() || LoopbackURL(m.BaseURL):
			return say.Sprintf("cannot connect to %s: is the server running, and is the base URL %s right?", host, m.BaseURL)
		}
		return say.Sprintf("cannot connect to %s: check the base URL %s and your network", host, m.BaseURL)
	case errors.Is(err, llm.ErrBadRequest):
		return say.Sprintf("%s rejected the request%s; if it mentions tools, this model or server has no tool-call support, which homard needs", host, detail)
	case errors.Is(err, llm.ErrRateLimited):
		return say.Sprintf("%s is rate limiting%s; try again later", host, detail)
	case errors.Is(err, llm.ErrServer):
		return say.Sprintf("%s failed%s; try again later", host, detail)
	case errors.Is(err, context.DeadlineExceeded):
		return say.Sprintf("%s did not answer in time: is the server overloaded or the model still loading? try again", host)
	}
	return err.Error()
}
