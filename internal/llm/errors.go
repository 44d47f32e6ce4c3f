package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrAuth: the provider refused the key (HTTP 401 or 403).
	ErrAuth = errors.New("authentication failed")
	// ErrModelNotFound: unknown model name or endpoint (HTTP 404).
	ErrModelNotFound = errors.New("model not found")
	// ErrRateLimited: HTTP 429, still limited after the retries.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: HTTP 5xx (or Anthropic's 529), still failing after the retries.
	ErrServer = errors.New("provider server error")
	// ErrBadRequest: any other 4xx; retrying would not help.
	ErrBadRequest = errors.New("bad request")
	// ErrUnreachable: no HTTP response at all, after the retries.
	ErrUnreachable = errors.New("provider unreachable")
	// ErrBrokenStream: the answer was cut or malformed after it had started.
	ErrBrokenStream = errors.New("broken stream")
	// ErrContextLength: the request is longer than the model's context
	// window (see IsContextLength for the wire texts understood). Retrying
	// the same request would not help; a shorter one may.
	ErrContextLength = errors.New("context length exceeded")
)

// APIError is a non-2xx answer from a provider. It unwraps to one of the
// sentinels above.
type APIError struct {
	Provider string // "openai", "anthropic"
	Status   int
	// Message is the provider's own message, with the API key removed.
	Message string
	Kind    error
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (HTTP %d)", e.Provider, e.Kind, e.Status)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	switch e.Kind {
	case ErrAuth:
		b.WriteString("; check the API key and its environment variable")
	case ErrModelNotFound:
		b.WriteString("; check the model name and the base URL")
	case ErrContextLength:
		b.WriteString("; the request is longer than the model's context window")
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Kind }

// KindForStatus maps an HTTP status to a sentinel (nil for 2xx).
func KindForStatus(status int) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrAuth
	case status == http.StatusNotFound:
		return ErrModelNotFound
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status >= 500:
		return ErrServer
	}
	return ErrBadRequest
}

// retryable reports whether a status is worth another try.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// NewAPIError builds the error for a non-2xx response from its body. Both
// OpenAI ({"error":{"message":...}}) and Anthropic
// ({"type":"error","error":{"message":...}}) bodies are understood; any
// other body is quoted, shortened. secret (the API key) is removed from the
// message wherever it appears.
func NewAPIError(provider string, status int, body []byte, secret string) *APIError {
	var parsed struct {
		Error json.RawMessage `json:"error"`
	}
	msg, code := "", ""
	if json.Unmarshal(body, &parsed) == nil && len(parsed.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
			// Code is a string for OpenAI, a number for llama.cpp.
			Code json.RawMessage `json:"code"`
			Type string          `json:"type"`
		}
		var s string
		if json.Unmarshal(parsed.Error, &inner) == nil && inner.Message != "" {
			msg = inner.Message
			code = strings.Trim(string(inner.Code), `"`) + " " + inner.Type
		} else if json.Unmarshal(parsed.Error, &s) == nil {
			msg = s
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	kind := KindForStatus(status)
	if (kind == ErrBadRequest || kind == ErrServer) && IsContextLength(code+" "+msg) {
		kind = ErrContextLength
	}
	return &APIError{
		Provider: provider,
		Status:   status,
		Message:  shorten(Scrub(msg, secret), 300),
		Kind:     kind,
	}
}

// contextLengthTexts are what providers say when a request is longer than
// the model's window, lowercased:
//
//   - OpenAI, DeepSeek, vLLM, OpenRouter: error.code
//     "context_length_exceeded", or a message with "maximum context length"
//     ("This model's maximum context length is 8192 tokens. However, …");
//   - Anthropic: 400 invalid_request_error "prompt is too long: 210000
//     tokens > 200000 maximum", or 413 request_too_large;
//   - llama.cpp server: error.type "exceed_context_size_error", "the
//     request exceeds the available context size"; older builds "context
//     size exceeded";
//   - Ollama: "the input length exceeds the context length".
var contextLengthTexts = []string{
	"context_length_exceeded",
	"maximum context length",
	"prompt is too long",
	"request_too_large",
	"exceed_context_size_error",
	"exceeds the available context size",
	"context size exceeded",
	"context length exceeded",
	"exceeds the context length",
}

// IsContextLength reports whether a provider's error code or message says
// the request is longer than the model's context window.
func IsContextLength(text string) bool {
	text = strings.ToLower(text)
	for _, t := range contextLengthTexts {
		if strings.Contains(text, t) {
			return true
		}
	}
	return false
}

// Scrub removes secret from s.
func Scrub(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
