package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Send is how the wire clients POST a request: it retries with exponential
// backoff on HTTP 429, 5xx and connection errors (nothing else), and only
// before the response has started — a stream that has begun is never
// replayed. It returns the 2xx response with its body open, or an
// *APIError, or an error wrapping ErrUnreachable.
type Send struct {
	Provider string
	Client   *http.Client // nil means http.DefaultClient
	URL      string
	Header   http.Header
	Body     []byte
	// Recycle hands Body over: it came from GetBuffer, and goes back to
	// the pool once Do has returned and net/http has written it (see
	// recycled). The caller must not touch Body after Do.
	Recycle bool
	// Secret is removed from every error text (the API key).
	Secret string
	// MaxRetries is the number of retries after the first try. Zero means
	// 3; negative means none.
	MaxRetries int
	// BaseDelay is the first backoff; it doubles each retry, capped at
	// 30s. A Retry-After header (seconds) from the server is honoured up
	// to the same cap. Zero means 500ms.
	BaseDelay time.Duration
}

const maxDelay = 30 * time.Second

// Do runs the send. The response body lives within ctx.
func (s *Send) Do(ctx context.Context) (*http.Response, error) {
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	retries := s.MaxRetries
	switch {
	case retries == 0:
		retries = 3
	case retries < 0:
		retries = 0
	}
	delay := s.BaseDelay
	if delay == 0 {
		delay = 500 * time.Millisecond
	}
	var rc *recycled
	plain := false // the answer came from the first request, not redirected
	if s.Recycle && len(s.Body) > 0 {
		rc = &recycled{buf: s.Body}
		defer func() { rc.finish(plain) }()
	}
	for attempt := 0; ; attempt++ {
		rctx := ctx
		if rc != nil {
			rctx = rc.trace(ctx)
		}
		req, err := http.NewRequestWithContext(rctx, http.MethodPost, s.URL, bytes.NewReader(s.Body))
		if err != nil {
			return nil, fmt.Errorf("%s: build request: %s", s.Provider, Scrub(err.Error(), s.Secret))
		}
		if rc != nil {
			req.Body = rc.reader()
			req.GetBody = func() (io.ReadCloser, error) { return rc.reader(), nil }
		}
		req.Header = s.Header.Clone()
		resp, err := client.Do(req)
		var wait time.Duration
		var last error
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", s.Provider, ctx.Err())
			}
			// url.Error text holds the URL only (the key travels in a
			// header), but scrub anyway.
			last = fmt.Errorf("%s: %w: %s", s.Provider, ErrUnreachable, Scrub(err.Error(), s.Secret))
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			plain = attempt == 0 && resp.Request == req
			return resp, nil
		default:
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			apiErr := NewAPIError(s.Provider, resp.StatusCode, body, s.Secret)
			if !retryable(resp.StatusCode) || errors.Is(apiErr, ErrContextLength) {
				return nil, apiErr
			}
			last = apiErr
			wait = retryAfter(resp.Header.Get("Retry-After"))
		}
		if attempt >= retries {
			return nil, last
		}
		if wait < delay {
			wait = delay
		}
		wait = min(wait, maxDelay)
		delay = min(delay*2, maxDelay)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s: %w (last error: %w)", s.Provider, ctx.Err(), last)
		case <-t.C:
		}
	}
}

func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// ReadError turns a failure while reading a started stream into the error
// a stream reports: ctx's error when ctx has ended, ErrBrokenStream
// otherwise.
func ReadError(ctx context.Context, provider string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w: stream ended before completion", provider, ErrBrokenStream)
	}
	return fmt.Errorf("%s: %w: %v", provider, ErrBrokenStream, err)
}
