package llm

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Endpoint is where and how a wire client reaches its provider: the
// anthropic and openai clients take it as their Options.
type Endpoint struct {
	// BaseURL is the API root; the client's New documents its zero value
	// and what the root includes.
	BaseURL string
	// APIKey is sent in the provider's auth header. Empty sends none
	// (local servers). It never appears in errors.
	APIKey string
	// HTTPClient is used for requests. Nil means http.DefaultClient.
	// Its Timeout, if any, bounds the whole stream; prefer ctx deadlines.
	HTTPClient *http.Client
	// MaxRetries after the first try on 429, 5xx (incl. Anthropic's 529
	// overloaded) or a connection error. Zero means 3; negative means none.
	MaxRetries int
	// RetryDelay is the first backoff, doubling each retry. Zero means 500ms.
	RetryDelay time.Duration
}

// WithBase returns e with an empty BaseURL set to def and trailing
// slashes removed. Retry defaults live in Send.
func (e Endpoint) WithBase(def string) Endpoint {
	if e.BaseURL == "" {
		e.BaseURL = def
	}
	e.BaseURL = strings.TrimRight(e.BaseURL, "/")
	return e
}

// Stream POSTs body, a JSON request, to e.BaseURL+path, asking for an
// event stream, with header's fields (the provider's auth and version)
// added, and returns the open 2xx response; Send documents the retries
// and errors. body is handed over (Send.Recycle): a buffer of GetBuffer
// (SpliceMessages' result) that the caller does not touch again.
func (e Endpoint) Stream(ctx context.Context, provider, path string, header http.Header, body []byte) (*http.Response, error) {
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "text/event-stream")
	send := Send{
		Provider:   provider,
		Client:     e.HTTPClient,
		URL:        e.BaseURL + path,
		Header:     header,
		Body:       body,
		Recycle:    true,
		Secret:     e.APIKey,
		MaxRetries: e.MaxRetries,
		BaseDelay:  e.RetryDelay,
	}
	return send.Do(ctx)
}
