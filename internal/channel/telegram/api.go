package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// callTimeout bounds one call other than getUpdates.
const callTimeout = 30 * time.Second

// maxAnswer caps an answer's body (100 updates of long messages fit).
const maxAnswer = 32 << 20

// APIError is an answer with "ok": false, or an HTTP error whose body was
// not the Bot API's.
type APIError struct {
	Method      string        // the Bot API method, e.g. "sendMessage"
	Code        int           // error_code, or the HTTP status
	Description string        // Telegram's description, e.g. "Bad Request: chat not found"
	RetryAfter  time.Duration // parameters.retry_after (429)
}

func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// transportError is a request that got no Bot API answer: the network, a
// deadline, an unreadable body. The URL is not in it.
type transportError struct {
	method string
	err    error
}

func (e *transportError) Error() string { return "telegram " + e.method + ": " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func errorf(method, format string, args ...any) error {
	return fmt.Errorf("telegram %s: %s", method, fmt.Sprintf(format, args...))
}

// envelope is every Bot API answer.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call posts params as JSON to method and decodes the result into out
// (nil: ignored). Its errors are *APIError or *transportError and never
// hold the token.
func (b *Bot) call(ctx context.Context, method string, params, out any) error {
	timeout := callTimeout
	if method == "getUpdates" {
		timeout = b.poll + 15*time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := b.do(ctx, method, params, out)
	if err != nil && b.token != "" && strings.Contains(err.Error(), b.token) {
		// Belt and braces: no path here should name the URL, but an error
		// that would show the token is replaced, keeping its kind.
		var api *APIError
		if errors.As(err, &api) {
			return &APIError{Method: method, Code: api.Code, Description: "(description withheld: it held the bot token)", RetryAfter: api.RetryAfter}
		}
		return &transportError{method: method, err: errors.New("request failed (detail withheld: it held the bot token)")}
	}
	return err
}

func (b *Bot) do(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return errorf(method, "encode request: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/bot"+b.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		// url.Parse's error quotes the URL: name the base only.
		return errorf(method, "bad api_base %q: set [channels.telegram] api_base to a URL such as %s", b.base, DefaultAPIBase)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the url.Error's text holds the URL, so the token
		}
		return &transportError{method: method, err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &transportError{method: method, err: fmt.Errorf("read answer: %w", err)}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		if resp.StatusCode != http.StatusOK {
			return &APIError{Method: method, Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
		}
		return &transportError{method: method, err: fmt.Errorf("the answer is not Bot API JSON: %w", err)}
	}
	if !env.OK {
		e := &APIError{Method: method, Code: env.ErrorCode, Description: env.Description}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
			e.RetryAfter = time.Duration(env.Parameters.RetryAfter) * time.Second
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return &transportError{method: method, err: fmt.Errorf("decode result: %w", err)}
		}
	}
	return nil
}

// apiCode is err's Bot API error code, or 0.
func apiCode(err error) int {
	var api *APIError
	if errors.As(err, &api) {
		return api.Code
	}
	return 0
}

func unauthorized(err error) error {
	return fmt.Errorf("%w (%v): get the token from @BotFather and store it with `homard secret set telegram`", chat.ErrUnauthorized, err)
}

// retryable turns an error of a call the outbox repeats (Send and the
// others) into a *chat.RetryError where trying again may help: 429 (after
// retry_after), 5xx and transport failures (after the outbox's backoff).
// Any other refusal (400, 403: blocked by the user) stays a plain error,
// and so does a failure because ctx ended.
func retryable(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var api *APIError
	if errors.As(err, &api) {
		switch {
		case api.Code == http.StatusTooManyRequests:
			return &chat.RetryError{After: api.RetryAfter, Err: err}
		case api.Code >= 500:
			return &chat.RetryError{Err: err}
		}
		return err
	}
	var te *transportError
	if errors.As(err, &te) {
		return &chat.RetryError{Err: err}
	}
	return err
}

// idString and parseID convert Telegram's integer ids (chat ids reach
// -100…, 52 bits) to and from chat's strings.
func idString(id int64) string { return strconv.FormatInt(id, 10) }

func parseID(what, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("telegram: %s %q is not a Telegram id (a number)", what, s)
	}
	return n, nil
}
