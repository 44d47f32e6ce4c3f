package ui_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/ui"
	"github.com/homard/homard/internal/lang"
)

// The real server (homard serve) is written elsewhere; fakeServer speaks
// the parts of spec/API.md the UI uses, on loopback, with the same login
// exchange and headers, and lets each test script the chat stream.

const csp = "default-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// chatScript plays one turn on the stream of POST /api/chat.
type chatScript func(ctx context.Context, f *fakeServer, s *stream, message string)

type fakeApproval struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Status    string `json:"status"`
	Risk      string `json:"risk"`
	Session   string `json:"session"`
	Plan      string `json:"plan"`
	PlanHash  string `json:"plan_hash"`
	Reason    string `json:"reason"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	OnceOnly  bool   `json:"once_only"`
	NoAlways  bool   `json:"no_always"`
	NeedsCode bool   `json:"needs_code"`

	decided chan string // gets the new status once, whoever decides
}

// choiceMsg is one POST /api/approvals/{id} as the fake received it.
type choiceMsg struct {
	id     string
	choice string
	code   string
}

type sseEvent struct {
	name string
	data any
}

type fakeServer struct {
	t      *testing.T
	srv    *httptest.Server
	token  string
	cookie string
	csp    bool
	script chatScript

	exfil    atomic.Int64   // requests to /exfil: must stay zero
	messages chan string    // each chat message received
	audits   chan string    // the query of each GET /api/audit
	cancels  chan string    // the session of each POST /api/sessions/{id}/cancel
	choices  chan choiceMsg // each approval answer posted by the page

	mu         sync.Mutex // guards the fields below
	loginUsed  bool
	approvals  map[string]*fakeApproval
	subs       map[chan sseEvent]struct{}
	sessions   []string
	busy       map[string]bool                // sessions that answer 409 to a new turn
	history    map[string][]map[string]string // GET /api/sessions/{id}/messages
	deleted    []string
	nextApprov int
	onceOnly   bool              // the cards ask makes take only once or deny (a command that runs code, ungraded)
	noAlways   bool              // the cards ask makes take once, session or deny (a command that runs code, graded)
	code       string            // when set, the cards ask makes need this code to approve (permissions.totp)
	titles     map[string]string // session id → title in GET /api/sessions
	refuse     map[string]string // session id → the 409 message DELETE answers
	dropped    []string          // sessions DELETE removed
	browser    *fakeBrowser      // nil: the browser is off
	lang       string            // the config's lang GET /api/lang answers with; "" means auto
	artifacts  map[string]channel.Artifact
	weekly     *fakeWeekly // nil: no weekly memory review waits (404)
}

func newFakeServer(t *testing.T, withCSP bool, script chatScript) *fakeServer {
	t.Helper()
	f := &fakeServer{
		t:         t,
		token:     "tok-" + fmt.Sprint(time.Now().UnixNano()),
		cookie:    "sess-" + fmt.Sprint(time.Now().UnixNano()),
		csp:       withCSP,
		script:    script,
		messages:  make(chan string, 16),
		audits:    make(chan string, 16),
		cancels:   make(chan string, 16),
		busy:      map[string]bool{},
		history:   map[string][]map[string]string{},
		choices:   make(chan choiceMsg, 16),
		approvals: map[string]*fakeApproval{},
		subs:      map[chan sseEvent]struct{}{},
		titles:    map[string]string{},
		refuse:    map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", f.login)
	mux.HandleFunc("GET /exfil", func(w http.ResponseWriter, r *http.Request) {
		f.exfil.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /api/info", f.authed(f.info))
	mux.HandleFunc("GET /api/lang", f.authed(f.langs))
	mux.HandleFunc("GET /api/sessions", f.authed(f.listSessions))
	mux.HandleFunc("GET /api/sessions/{id}/messages", f.authed(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		msgs := f.history[r.PathValue("id")]
		f.mu.Unlock()
		if msgs == nil {
			msgs = []map[string]string{}
		}
		writeJSON(w, http.StatusOK, msgs)
	}))
	mux.HandleFunc("POST /api/sessions/{id}/cancel", f.authed(func(w http.ResponseWriter, r *http.Request) {
		f.cancels <- r.PathValue("id")
		w.WriteHeader(http.StatusAccepted)
	}))
	mux.HandleFunc("DELETE /api/sessions/{id}", f.authed(f.deleteSession))
	mux.HandleFunc("POST /api/chat", f.authed(f.chat))
	mux.HandleFunc("GET /api/approvals", f.authed(f.listApprovals))
	mux.HandleFunc("POST /api/approvals/{id}", f.authed(f.answer))
	mux.HandleFunc("GET /api/events", f.authed(f.events))
	mux.HandleFunc("GET /api/audit", f.authed(f.audit))
	mux.HandleFunc("GET /api/memory", f.authed(f.memory))
	mux.HandleFunc("GET /api/memory/review", f.authed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []map[string]any{{"id": "r1", "text": "用户喜欢简短的回答", "kind": "preference", "count": 2, "status": "candidate"}})
	}))
	mux.HandleFunc("DELETE /api/memory/{id}", f.authed(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.deleted = append(f.deleted, r.PathValue("id"))
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{})
	}))
	f.weeklyRoutes(mux)
	f.browserRoutes(mux)
	files := http.FileServerFS(ui.FS())
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && !f.hasCookie(r) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>homard</title><p>Open the login URL printed by homard serve.</p>")
			return
		}
		files.ServeHTTP(w, r)
	})
	f.srv = httptest.NewServer(f.headers(mux))
	t.Cleanup(f.close)
	return f
}

func (f *fakeServer) close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

func (f *fakeServer) headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.csp {
			w.Header().Set("Content-Security-Policy", csp)
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("Cache-Control", "no-store")
		}
		if (r.Method == http.MethodPost || r.Method == http.MethodDelete) && r.Header.Get("Content-Type") != "application/json" {
			writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "Content-Type must be application/json"})
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != f.srv.URL {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "origin " + o + " is not allowed"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (f *fakeServer) hasCookie(r *http.Request) bool {
	c, err := r.Cookie("homard_session")
	return err == nil && c.Value == f.cookie
}

func (f *fakeServer) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !f.hasCookie(r) {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "log in first"})
			return
		}
		h(w, r)
	}
}

func (f *fakeServer) login(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	ok := !f.loginUsed && r.URL.Query().Get("t") == f.token
	if ok {
		f.loginUsed = true
	}
	f.mu.Unlock()
	if !ok {
		http.Error(w, "this login link is used, expired or wrong", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "homard_session", Value: f.cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// loginURL is the one-time URL homard serve prints.
func (f *fakeServer) loginURL() string { return f.srv.URL + "/login?t=" + f.token }

func (f *fakeServer) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"model": "scripted", "mode": "safe", "workspace": "/home/owner/work", "owner": "owner", "version": "test"})
}

// langs answers GET /api/lang as internal/channel/web does: the setting
// ("auto" when unset) and, unless it is "en", the Chinese catalog.
func (f *fakeServer) langs(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	setting := cmp.Or(f.lang, "auto")
	f.mu.Unlock()
	msgs := map[string]string{}
	if setting != "en" {
		msgs = lang.Catalog(lang.ZH)
	}
	writeJSON(w, http.StatusOK, map[string]any{"lang": setting, "messages": msgs})
}

func (f *fakeServer) listSessions(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	now := time.Now().UTC().Format(time.RFC3339)
	for i := len(f.sessions) - 1; i >= 0; i-- {
		id := f.sessions[i]
		out = append(out, map[string]any{"id": id, "title": f.titles[id], "created_at": now, "turns": 1, "last_at": now, "busy": false})
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeServer) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Session string `json:"session"`
		Message string `json:"message"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad chat request: " + err.Error()})
		return
	}
	if req.Session == "" {
		req.Session = fmt.Sprintf("web-%d", time.Now().UnixNano())
	}
	f.mu.Lock()
	busy := f.busy[req.Session]
	if !busy && !slices.Contains(f.sessions, req.Session) {
		f.sessions = append(f.sessions, req.Session)
	}
	f.mu.Unlock()
	if busy {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "session " + req.Session + " is busy with another turn"})
		return
	}
	f.messages <- req.Message
	s := newStream(w)
	s.send("session", map[string]string{"session": req.Session})
	s.session = req.Session
	f.script(r.Context(), f, s, req.Message)
}

// stream writes server-sent events and flushes each one.
type stream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	session string
}

func newStream(w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s := &stream{w: w}
	s.comment("ping")
	return s
}

func (s *stream) send(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.w.(http.Flusher).Flush()
}

func (s *stream) comment(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, ": %s\n\n", text)
	s.w.(http.Flusher).Flush()
}

func (s *stream) delta(text string) { s.send("delta", map[string]string{"text": text}) }

func (s *stream) tool(id, name, status, plan, preview string) {
	s.send("tool", map[string]string{"id": id, "name": name, "args": "{}", "status": status, "plan": plan, "preview": preview})
}

func (s *stream) done(text string) { s.doneStopped(text, "") }

func (s *stream) doneStopped(text, stopped string) {
	s.send("done", map[string]any{
		"text": text, "pending": []string{}, "usage": map[string]int{"input": 120, "output": 30, "cached": 0},
		"calls": 1, "units": 1, "max_calls": 20, "max_units": 50, "stopped": stopped, "session": s.session,
	})
}

// ask creates a pending approval, sends it on the turn's stream and on
// /api/events, and returns it; the script then waits on its decided channel.
func (f *fakeServer) ask(s *stream, tool, risk, plan string) *fakeApproval {
	f.mu.Lock()
	f.nextApprov++
	now := time.Now().UTC()
	a := &fakeApproval{
		ID: fmt.Sprintf("ap-%d", f.nextApprov), Tool: tool, Status: "pending", Risk: risk, Session: s.session,
		Plan: plan, PlanHash: "sha256:3f2a9c1b7d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff",
		Reason: "runs a program", CreatedAt: now.Format(time.RFC3339), ExpiresAt: now.Add(5 * time.Minute).Format(time.RFC3339),
		OnceOnly: f.onceOnly, NoAlways: f.noAlways, NeedsCode: f.code != "", decided: make(chan string, 1),
	}
	f.approvals[a.ID] = a
	f.mu.Unlock()
	ev := map[string]any{
		"approval_id": a.ID, "tool": a.Tool, "plan": a.Plan, "plan_hash": a.PlanHash, "risk": a.Risk,
		"reason": a.Reason, "expires_at": a.ExpiresAt, "session": a.Session, "covers": "commands like ls ‹path in notes/›",
		"once_only": a.OnceOnly, "no_always": a.NoAlways, "needs_code": a.NeedsCode,
	}
	s.send("approval", ev)
	f.broadcast("approval", ev)
	return a
}

// decide moves a pending approval to status; it reports false when it was
// no longer pending.
func (f *fakeServer) decide(id, status string) (*fakeApproval, bool) {
	f.mu.Lock()
	a := f.approvals[id]
	if a == nil || a.Status != "pending" {
		f.mu.Unlock()
		return a, false
	}
	a.Status = status
	f.mu.Unlock()
	a.decided <- status
	f.broadcast("approval_decided", map[string]string{"approval_id": id, "status": status})
	return a, true
}

func (f *fakeServer) answer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Choice string `json:"choice"`
		Code   string `json:"code"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad answer: " + err.Error()})
		return
	}
	id := r.PathValue("id")
	status := "approved"
	switch req.Choice {
	case "once", "session", "always":
	case "deny":
		status = "denied"
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "choice must be once, session, always or deny"})
		return
	}
	f.choices <- choiceMsg{id: id, choice: req.Choice, code: req.Code}
	f.mu.Lock()
	need := f.code
	f.mu.Unlock()
	if need != "" && status == "approved" && req.Code != need {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "approving this needs a code from your authenticator app: wrong code"})
		return
	}
	a, ok := f.decide(id, status)
	if !ok {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "approval " + id + " is no longer pending"})
		return
	}
	f.mu.Lock()
	out := *a
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeServer) listApprovals(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query().Get("status")
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []fakeApproval{}
	for _, a := range f.approvals {
		if want == "" || a.Status == want {
			out = append(out, *a)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeServer) broadcast(name string, data any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.subs {
		select {
		case c <- sseEvent{name, data}:
		default:
			f.t.Errorf("fake: /api/events subscriber is slow; dropped %s", name)
		}
	}
}

// dropEvents ends every /api/events stream, as a server restart or a
// network drop would.
func (f *fakeServer) dropEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.subs {
		close(c)
		delete(f.subs, c)
	}
}

// decideQuietly decides an approval without telling any page.
func (f *fakeServer) decideQuietly(id, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approvals[id].Status = status
	f.approvals[id].decided <- status
}

// subscribers reports how many pages listen on /api/events.
func (f *fakeServer) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

func (f *fakeServer) events(w http.ResponseWriter, r *http.Request) {
	c := make(chan sseEvent, 32)
	f.mu.Lock()
	f.subs[c] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.subs, c)
		f.mu.Unlock()
	}()
	s := newStream(w)
	fmt.Fprint(w, "retry: 200\n\n") // reconnect fast after dropEvents
	w.(http.Flusher).Flush()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-c:
			if !ok {
				return // dropEvents
			}
			s.send(ev.name, ev.data)
		case <-tick.C:
			s.comment("ping")
		}
	}
}

// deleteSession removes a session, or answers 409 with f.refuse's
// message for it.
func (f *fakeServer) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	defer f.mu.Unlock()
	if msg, ok := f.refuse[id]; ok {
		writeJSON(w, http.StatusConflict, map[string]string{"error": msg})
		return
	}
	i := slices.Index(f.sessions, id)
	if i < 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "session " + id + ": not found"})
		return
	}
	f.sessions = slices.Delete(f.sessions, i, i+1)
	f.dropped = append(f.dropped, id)
	writeJSON(w, http.StatusOK, map[string]string{"session": id})
}

// audit serves 60 records in pages, ignoring the filters it reports on
// f.audits (the page's request is what the tests check): oldest first
// after "after", or with order=newest newest first before "before", with
// next 0 when no older record is left.
func (f *fakeServer) audit(w http.ResponseWriter, r *http.Request) {
	f.audits <- r.URL.RawQuery
	q := r.URL.Query()
	after, _ := strconv.Atoi(q.Get("after"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	seqs := []int{}
	if q.Get("order") == "newest" {
		before, _ := strconv.Atoi(q.Get("before"))
		if before <= 0 {
			before = 61
		}
		for seq := before - 1; seq >= 1 && len(seqs) < limit; seq-- {
			seqs = append(seqs, seq)
		}
	} else {
		for seq := after + 1; seq <= 60 && len(seqs) < limit; seq++ {
			seqs = append(seqs, seq)
		}
	}
	recs := []map[string]any{}
	for _, seq := range seqs {
		recs = append(recs, map[string]any{
			"seq": seq, "time": time.Now().UTC().Format(time.RFC3339), "owner": "owner", "session": "web-1", "trust": "owner",
			"tool": "run_command", "decision": []string{"ran", "denied", "pending"}[seq%3], "rule": "mode.safe",
			"reason": "<b>not bold</b> 审计记录", "args": `{"argv":["/usr/bin/ls","-la"]}`, "plan_hash": "sha256:00aa11bb22cc33dd", "run_id": "", "approval_id": "",
		})
	}
	next := after + len(recs)
	if q.Get("order") == "newest" {
		next = 0
		if len(seqs) == limit && seqs[len(seqs)-1] > 1 {
			next = seqs[len(seqs)-1]
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"records": recs, "next": next})
}

func (f *fakeServer) memory(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []map[string]string{
		{"id": "m1", "text": "The owner's cat is called Miso. 猫的名字是味噌。", "kind": "fact", "created": time.Now().UTC().Format(time.RFC3339), "source": "chat", "expires": ""},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
