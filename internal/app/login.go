package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrNoServe is returned when no `homard serve` runs on this home.
var ErrNoServe = errors.New("no homard serve is running on this home; start one with: homard serve (it prints a login URL)")

// LoginLink asks the running `homard serve` of this home for a new
// one-time login URL (POST /api/login), so a browser can log in without
// a restart. It authenticates with the serve's local key from serve.json,
// which only the owner's account can read; the serve gives a link to
// nothing else. A serve that terminates TLS itself is not reached (this
// client would have to trust its certificate): restart it instead.
func (r *Runtime) LoginLink(ctx context.Context) (url string, expires time.Time, err error) {
	si, ok := r.RunningServe()
	if !ok || si.Key == "" {
		return "", time.Time{}, ErrNoServe
	}
	if !strings.HasPrefix(si.URL, "http://") {
		return "", time.Time{}, fmt.Errorf("homard serve (pid %d) serves TLS itself; homard login reaches a plain-HTTP serve only: restart it for a new login URL", si.PID)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := &remote{base: si.URL, key: si.Key, client: &http.Client{}}
	resp, err := c.request(ctx, "POST", "/api/login", struct{}{})
	if err != nil {
		return "", time.Time{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", time.Time{}, apiError(resp)
	}
	var out struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.URL == "" {
		return "", time.Time{}, fmt.Errorf("homard serve at %s: unreadable login answer: %v", si.URL, err)
	}
	return out.URL, out.ExpiresAt, nil
}
