package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
	"github.com/homard/homard/internal/policy"
)

// Attached returns the running `homard serve` of this home as a
// channel.Runtime, so `homard chat` and `homard run` send their turns
// through it instead of running them beside it: one process runs every
// turn, and a card can be answered in the terminal or in a browser tab.
// ok is false when no serve runs, or when it serves TLS (a terminal on the
// same machine attaches to a plain-HTTP loopback serve only).
func (r *Runtime) Attached() (rt channel.Runtime, si ServeInfo, ok bool) {
	si, ok = r.RunningServe()
	if !ok || si.Key == "" || !strings.HasPrefix(si.URL, "http://") {
		return nil, si, false
	}
	return &remote{base: si.URL, key: si.Key, client: &http.Client{}}, si, true
}

// remote is channel.Runtime over the gateway's API, authenticated with the
// serve's local key from serve.json (readable only by the owner).
type remote struct {
	base, key string
	client    *http.Client
}

var _ channel.Runtime = (*remote)(nil)

func (c *remote) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("homard serve at %s: %w", c.base, err)
	}
	return resp, nil
}

// apiError reads an error answer.
func apiError(resp *http.Response) error {
	var e wire.Error
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(b))
	}
	if resp.StatusCode == http.StatusConflict {
		return fmt.Errorf("homard serve: %w: %s", ErrSessionBusy, e.Error)
	}
	return fmt.Errorf("homard serve: %s (HTTP %d)", e.Error, resp.StatusCode)
}

func (c *remote) getJSON(ctx context.Context, path string, v any) error {
	resp, err := c.request(ctx, "GET", path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (c *remote) Info() channel.Info {
	var i wire.Info
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.getJSON(ctx, "/api/info", &i); err != nil {
		return channel.Info{Model: "(homard serve unreachable)"}
	}
	return i.Channel()
}

func (c *remote) History(ctx context.Context, session string) ([]channel.Message, error) {
	var msgs []wire.Message
	if err := c.getJSON(ctx, "/api/sessions/"+url.PathEscape(session)+"/messages", &msgs); err != nil {
		return nil, err
	}
	out := make([]channel.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Channel())
	}
	return out, nil
}

// Turn runs the turn in the serve and follows its event stream. A card is
// given to req.Ask; an answer other than Leave is posted (409, already
// answered elsewhere, is fine). Leave answers nothing here: the serve's
// turn goes on waiting for an answer from a tab or the CLI until
// gateway.approval_wait. Cancelling ctx cancels the serve's turn.
func (c *remote) Turn(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
	if req.Text == "" {
		return channel.TurnResult{}, fmt.Errorf("%w: the task is empty", ErrBadRequest)
	}
	trust, session, err := entrySession(req.As, req.Session, "trust")
	if err != nil {
		return channel.TurnResult{}, err
	}
	if trust != policy.TrustOwner {
		// The serve's API authenticates the owner only: a turn of anyone
		// else must not run there as the owner's.
		return channel.TurnResult{}, fmt.Errorf("%w: homard serve runs the owner's turns only (as %s)", ErrBadRequest, trust)
	}
	req.Session = session
	resp, err := c.request(ctx, "POST", "/api/chat", wire.ChatRequest{Session: req.Session, Message: req.Text})
	if err != nil {
		return channel.TurnResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return channel.TurnResult{}, apiError(resp)
	}
	stop := context.AfterFunc(ctx, func() {
		// The serve's turn does not depend on this request: cancel it.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if r, err := c.request(cctx, "POST", "/api/sessions/"+url.PathEscape(req.Session)+"/cancel", struct{}{}); err == nil {
			r.Body.Close()
		}
	})
	defer stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		res, end, err := c.event(ctx, req, name, []byte(data))
		if end || err != nil {
			return res, err
		}
	}
	if ctx.Err() != nil {
		return channel.TurnResult{}, ctx.Err()
	}
	return channel.TurnResult{}, fmt.Errorf("homard serve: the stream ended before the turn did (%v)", sc.Err())
}

// event handles one event of the turn's stream; end is true at its end.
func (c *remote) event(ctx context.Context, req channel.TurnRequest, name string, data []byte) (channel.TurnResult, bool, error) {
	switch name {
	case wire.EventDelta:
		var d wire.Delta
		if json.Unmarshal(data, &d) == nil && req.OnText != nil {
			req.OnText(d.Text)
		}
	case wire.EventTool:
		var t wire.Tool
		if json.Unmarshal(data, &t) == nil && req.OnTool != nil {
			req.OnTool(t.Channel())
		}
	case wire.EventApproval:
		var a wire.Card
		if json.Unmarshal(data, &a) != nil || req.Ask == nil {
			return channel.TurnResult{}, false, nil
		}
		choice, err := req.Ask(ctx, a.Channel())
		if err != nil {
			return channel.TurnResult{}, true, err
		}
		if choice == channel.Leave {
			return channel.TurnResult{}, false, nil
		}
		resp, err := c.request(ctx, "POST", "/api/approvals/"+url.PathEscape(a.ApprovalID), wire.AnswerRequest{Choice: choice})
		if err != nil {
			return channel.TurnResult{}, true, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusConflict {
			return channel.TurnResult{}, true, apiError(resp)
		}
	case wire.EventDone:
		var d wire.Done
		if err := json.Unmarshal(data, &d); err != nil {
			return channel.TurnResult{}, true, fmt.Errorf("homard serve: done event: %w", err)
		}
		return d.Channel(), true, nil
	case wire.EventError:
		var e wire.Error
		_ = json.Unmarshal(data, &e)
		if ctx.Err() != nil {
			return channel.TurnResult{}, true, ctx.Err()
		}
		return channel.TurnResult{}, true, errors.New("homard serve: " + e.Error)
	}
	return channel.TurnResult{}, false, nil
}
