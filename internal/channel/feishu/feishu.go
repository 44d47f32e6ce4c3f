// Package feishu is homard's adapter for Feishu and Lark bots: it speaks
// the Open Platform HTTP API directly (tenant_access_token, im/v1 messages
// and interactive cards, bot/v3/info) and receives events over the long
// connection (a websocket carrying protobuf frames, see package frame).
//
// It implements chat.Adapter and follows that contract: it maps each event
// to a chat.Inbound from the platform's structured fields only, hands it to
// the Sink and acknowledges the frame only after Receive returned nil; it
// never decides who a sender is, never retries a send on its own and never
// logs the app secret, a token or message text.
//
// Feishu and Lark differ only in their base URL (Options.APIBase).
package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// API bases.
const (
	FeishuBase = "https://open.feishu.cn"
	LarkBase   = "https://open.larksuite.com"
)

// maxChars caps one message's text. Feishu limits a card's JSON to 30 KB;
// 6,000 characters of CJK text (3 bytes each in UTF-8) with the card's
// JSON around it stays below that even when escaped.
const maxChars = 6000

// Options configure an Adapter.
type Options struct {
	// AppID and AppSecret are the app's credentials (from the vault).
	AppID, AppSecret string
	// APIBase is the Open Platform base URL. Zero means FeishuBase; Lark
	// uses LarkBase; tests use a fake's URL.
	APIBase string
	// HTTPClient makes every HTTP request. Zero means a client with a 30 s
	// timeout.
	HTTPClient *http.Client
	// Backoff is the first wait before reconnecting the long connection;
	// it doubles up to the server's ReconnectInterval (2 minutes unless
	// the server says otherwise). Zero means 1 s.
	Backoff time.Duration
	// AckWait is how long a card press's ack waits for AckPress to hand it
	// the notice to show (Feishu wants the answer within 3 s of the press).
	// Zero means 2.5 s.
	AckWait time.Duration
	// Now reads the clock. Zero means time.Now.
	Now func() time.Time
	// Callback selects the HTTP callback mode: Run opens no long
	// connection and ServeHTTP receives Feishu's callbacks instead.
	Callback bool
	// EncryptKey is the app's Encrypt Key (from the vault), which signs
	// and encrypts callbacks. Required in callback mode.
	EncryptKey string
	// Report, when set, is told why the long connection failed (before
	// each reconnect) and why an event could not be decoded: for a
	// channel's "last error". Messages hold no secret and no message text.
	Report func(error)
}

// Adapter is one Feishu or Lark bot. Its methods are safe for concurrent
// use; Run runs at most once at a time.
type Adapter struct {
	opt  Options
	base string
	hc   *http.Client

	mu        sync.Mutex // guards the fields below
	token     string     // tenant_access_token
	tokenExp  time.Time  // when to fetch a new one
	botID     string     // the bot's open_id, once Info answered
	chatModes map[string]string
	seen      map[string]time.Time // handled event ids → when
	pending   map[string]chan string
	sink      chat.Sink // callback mode: the sink Run lent ServeHTTP
}

var (
	_ chat.Adapter = (*Adapter)(nil)
	_ http.Handler = (*Adapter)(nil)
)

// New returns an adapter; it makes no request until used.
func New(opt Options) *Adapter {
	base := strings.TrimRight(opt.APIBase, "/")
	if base == "" {
		base = FeishuBase
	}
	hc := opt.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	if opt.Backoff <= 0 {
		opt.Backoff = time.Second
	}
	if opt.AckWait <= 0 {
		opt.AckWait = 2500 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Adapter{
		opt: opt, base: base, hc: hc,
		chatModes: map[string]string{},
		seen:      map[string]time.Time{},
		pending:   map[string]chan string{},
	}
}

// Platform is chat.Feishu (Lark included).
func (a *Adapter) Platform() string { return chat.Feishu }

// MaxChars is the longest text one message holds (see maxChars).
func (a *Adapter) MaxChars() int { return maxChars }

// Typing does nothing: Feishu has no typing indicator for bots.
func (a *Adapter) Typing(ctx context.Context, chatID string) error { return nil }

// Info asks bot/v3/info who the bot is: ID is its open_id, Name the app's
// name. A refused app id or secret is chat.ErrUnauthorized.
func (a *Adapter) Info(ctx context.Context) (chat.BotInfo, error) {
	var out struct {
		Bot struct {
			OpenID  string `json:"open_id"`
			AppName string `json:"app_name"`
		} `json:"bot"`
	}
	if err := a.call(ctx, http.MethodGet, "/open-apis/bot/v3/info", nil, &out); err != nil {
		return chat.BotInfo{}, fmt.Errorf("feishu bot info: %w", err)
	}
	if out.Bot.OpenID == "" {
		return chat.BotInfo{}, errors.New("feishu bot info: no open_id in the answer; is the app's bot feature enabled?")
	}
	a.mu.Lock()
	a.botID = out.Bot.OpenID
	a.mu.Unlock()
	return chat.BotInfo{ID: out.Bot.OpenID, Name: out.Bot.AppName}, nil
}

// Error codes of the Open Platform.
const (
	codeTokenInvalid  = 99991663 // tenant access token invalid
	codeTokenExpired  = 99991661 // missing or malformed access token
	codeRateLimited   = 99991400
	codeAppBadSecret  = 10014 // app secret invalid
	codeAppBadID      = 10003 // app id invalid
	codeAppNotEnabled = 10012
)

// APIError is an Open Platform answer with a non-zero code.
type APIError struct {
	Status int // HTTP status
	Code   int
	Msg    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("feishu api: HTTP %d, code %d: %s", e.Status, e.Code, e.Msg)
}

// tenantToken returns a cached tenant_access_token, fetching one when
// none is cached or it expires within 5 minutes.
func (a *Adapter) tenantToken(ctx context.Context, fresh bool) (string, error) {
	a.mu.Lock()
	if !fresh && a.token != "" && a.opt.Now().Before(a.tokenExp) {
		t := a.token
		a.mu.Unlock()
		return t, nil
	}
	a.mu.Unlock()
	body, _ := json.Marshal(map[string]string{"app_id": a.opt.AppID, "app_secret": a.opt.AppSecret})
	var out struct {
		Code   int    `json:"code"`
		Msg    string `json:"msg"`
		Token  string `json:"tenant_access_token"`
		Expire int    `json:"expire"`
	}
	status, _, err := a.roundTrip(ctx, http.MethodPost, "/open-apis/auth/v3/tenant_access_token/internal", "", body, &out)
	if err != nil {
		return "", fmt.Errorf("tenant access token: %w", err)
	}
	switch {
	case out.Code == codeAppBadID || out.Code == codeAppBadSecret || out.Code == codeAppNotEnabled ||
		status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("tenant access token: %w (code %d: %s); check the app id and secret in the vault", chat.ErrUnauthorized, out.Code, out.Msg)
	case out.Code != 0 || out.Token == "":
		return "", fmt.Errorf("tenant access token: %w", &APIError{Status: status, Code: out.Code, Msg: out.Msg})
	}
	life := time.Duration(out.Expire)*time.Second - 5*time.Minute
	if life < 0 {
		life = 0
	}
	a.mu.Lock()
	a.token, a.tokenExp = out.Token, a.opt.Now().Add(life)
	a.mu.Unlock()
	return out.Token, nil
}

// call makes one authenticated JSON request and decodes the answer's data
// (or, for bot/v3/info, the whole answer) into out. A token Feishu calls
// invalid is fetched again once. Rate limits, 5xx and network failures are
// *chat.RetryError.
func (a *Adapter) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		tok, err := a.tenantToken(ctx, attempt > 0)
		if err != nil {
			return err
		}
		var env struct {
			Code int             `json:"code"`
			Msg  string          `json:"msg"`
			Data json.RawMessage `json:"data"`
		}
		var raw json.RawMessage
		status, hdr, err := a.roundTrip(ctx, method, path, tok, body, &raw)
		if err != nil {
			return err
		}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &env); err != nil {
				return fmt.Errorf("decode answer (HTTP %d): %w", status, err)
			}
		}
		apiErr := &APIError{Status: status, Code: env.Code, Msg: env.Msg}
		switch {
		case (env.Code == codeTokenInvalid || env.Code == codeTokenExpired) && attempt == 0:
			continue
		case status == http.StatusTooManyRequests || env.Code == codeRateLimited:
			return &chat.RetryError{After: resetAfter(hdr), Err: apiErr}
		case status >= 500:
			return &chat.RetryError{Err: apiErr}
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return fmt.Errorf("%w: %v", chat.ErrUnauthorized, apiErr)
		case env.Code != 0 || status >= 300:
			return apiErr
		}
		if out == nil {
			return nil
		}
		src := []byte(env.Data)
		if path == "/open-apis/bot/v3/info" { // this one answers outside "data"
			src = raw
		}
		if len(src) == 0 {
			return nil
		}
		return json.Unmarshal(src, out)
	}
}

// resetAfter reads x-ogw-ratelimit-reset (seconds until the limit resets).
func resetAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("x-ogw-ratelimit-reset")))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// roundTrip sends one request and decodes a JSON answer into out (when
// the body is JSON). A network failure is a *chat.RetryError.
func (a *Adapter) roundTrip(ctx context.Context, method, path, token string, body []byte, out any) (int, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		// The error names the URL, never the token (it is a header).
		return 0, nil, &chat.RetryError{Err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, resp.Header, &chat.RetryError{Err: fmt.Errorf("read answer of %s %s: %w", method, path, err)}
	}
	if len(bytes.TrimSpace(data)) > 0 && (data[0] == '{' || data[0] == '[') {
		if err := json.Unmarshal(data, out); err != nil && resp.StatusCode < 300 {
			return resp.StatusCode, resp.Header, fmt.Errorf("decode answer of %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, resp.Header, nil
}
