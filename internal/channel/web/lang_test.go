package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/ui"
)

// approvalsFake is fake with one pending approval.
type approvalsFake struct{ fake }

func (approvalsFake) Approvals(context.Context, string) ([]channel.Approval, error) {
	at := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	return []channel.Approval{{ID: "ap_1", Tool: "write_file", Status: "pending", Risk: "medium", Session: "web-1",
		Plan: "write notes.txt (5 bytes)", PlanHash: "sha256:0123456789abcdef", Reason: "writes need approval",
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}}, nil
}

// TestLang (issue 26 point 3): GET /api/lang tells the web UI its
// language and hands it the Chinese catalog unless lang is "en"; the
// server's own login page follows lang, or under "auto" the request's
// Accept-Language. GET /api/approvals, like every API answer, is the same
// bytes whatever the language: fields and values stay English.
func TestLang(t *testing.T) {
	var approvals []string
	for _, tc := range []struct {
		setting, acceptLanguage string
		lang                    string
		catalog                 bool
		loginWords              string
	}{
		{"en", "zh-CN,zh;q=0.9", "en", false, "Open the login URL"},
		{"zh", "en-US", "zh", true, "登录链接"},
		{"auto", "zh-CN,zh;q=0.9", "auto", true, "登录链接"},
		{"", "en-US,en;q=0.8", "auto", true, "Open the login URL"},
	} {
		s, err := New(Options{Runtime: fake{}, Admin: approvalsFake{}, Addr: "127.0.0.1:8787", Lang: tc.setting, UI: ui.FS()})
		if err != nil {
			t.Fatal(err)
		}
		get := func(target string, c *http.Cookie) *httptest.ResponseRecorder {
			req := httptest.NewRequest("GET", target, nil)
			req.Host = "127.0.0.1:8787"
			req.Header.Set("Accept-Language", tc.acceptLanguage)
			if c != nil {
				req.AddCookie(c)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			return w
		}
		if w := get("/", nil); !strings.Contains(w.Body.String(), tc.loginWords) {
			t.Errorf("lang %q, Accept-Language %q: login page %q; want it to say %q", tc.setting, tc.acceptLanguage, w.Body, tc.loginWords)
		}
		if w := get("/api/lang", nil); w.Code != http.StatusUnauthorized {
			t.Errorf("GET /api/lang without a session = %d; want 401", w.Code)
		}
		u, _ := url.Parse(s.LoginURL("http://127.0.0.1:8787"))
		c := get(u.RequestURI(), nil).Result().Cookies()[0]
		w := get("/api/lang", c)
		var a struct {
			Lang     string            `json:"lang"`
			Messages map[string]string `json:"messages"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || w.Code != 200 {
			t.Fatalf("GET /api/lang = %d %s (%v)", w.Code, w.Body, err)
		}
		if a.Lang != tc.lang || (a.Messages["Approve once"] == "批准一次") != tc.catalog || (len(a.Messages) > 0) != tc.catalog {
			t.Errorf("lang %q: GET /api/lang = %q with %d messages (Approve once: %q); want %q, catalog %v",
				tc.setting, a.Lang, len(a.Messages), a.Messages["Approve once"], tc.lang, tc.catalog)
		}
		// Only what the scripts translate is sent, not the CLI's part.
		if _, ok := a.Messages["dismissed %s\n"]; ok {
			t.Errorf("lang %q: GET /api/lang sent a CLI message; want the scripts' keys alone", tc.setting)
		}
		w = get("/api/approvals?status=pending", c)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"pending"`) {
			t.Fatalf("GET /api/approvals = %d %s", w.Code, w.Body)
		}
		approvals = append(approvals, w.Body.String())
	}
	for i, b := range approvals[1:] {
		if b != approvals[0] {
			t.Errorf("GET /api/approvals differs by language (case %d):\n%s\nwant\n%s", i+1, b, approvals[0])
		}
	}
}
