package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
)

// routes builds the handler chain: logging, the guard, then the mux. Its
// literals are routes and API errors, English on purpose (lang:en).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /api/info", s.info)
	mux.HandleFunc("GET /api/lang", s.lang)
	mux.HandleFunc("GET /api/sessions", s.sessions)
	mux.HandleFunc("GET /api/sessions/{id}/messages", s.messages)
	mux.HandleFunc("POST /api/sessions/{id}/cancel", s.cancelSession)
	mux.HandleFunc("DELETE /api/sessions/{id}", s.deleteSession)
	mux.HandleFunc("POST /api/login", s.loginLink)
	mux.HandleFunc("GET /api/sessions/{id}/stream", s.follow)
	mux.HandleFunc("POST /api/chat", s.chat)
	mux.HandleFunc("GET /api/approvals", s.approvals)
	mux.HandleFunc("GET /api/approvals/{id}", s.approval)
	mux.HandleFunc("POST /api/approvals/{id}", s.answer)
	mux.HandleFunc("GET /api/grants", s.grants)
	mux.HandleFunc("POST /api/grants/{id}/revoke", s.revokeGrant)
	mux.HandleFunc("GET /api/audit", s.audit)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/memory", s.memory)
	mux.HandleFunc("GET /api/memory/review", s.memoryReview)
	mux.HandleFunc("POST /api/memory/review/{id}", s.memoryReviewAnswer)
	mux.HandleFunc("DELETE /api/memory/{id}", s.forget)
	s.weeklyRoutes(mux)
	s.taskRoutes(mux)
	mux.HandleFunc("GET /api/artifacts/{id}", s.artifact)
	s.browserRoutes(mux)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API endpoint")
	})
	for p, h := range s.o.Callbacks {
		mux.Handle("POST "+p, http.MaxBytesHandler(h, maxBody))
	}
	mux.HandleFunc("/callbacks/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.o.Callbacks[r.URL.Path]; ok {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "POST only")
			return
		}
		writeError(w, http.StatusNotFound, "no such callback")
	})
	mux.Handle("/", s.static())
	return s.logged(s.guard(mux))
}

// maxBody caps a request body.
const maxBody = 1 << 20

// MaxMessage caps the owner's message of POST /api/chat, in bytes of
// text: what `homard run -` reads from stdin, so a task piped to a run
// that serve takes over fits too. A longer message is refused (400);
// the turn cuts its middle to fit the model's window, as it says.
const MaxMessage = 8 << 20

// maxChatBody caps POST /api/chat's body: MaxMessage of text as JSON
// escapes it at worst (six bytes a character: \u0000), and the rest.
const maxChatBody = 6*MaxMessage + 64<<10

// readJSON decodes a JSON body strictly into v, or answers 400.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	return readJSONMax(w, r, v, maxBody)
}

// readJSONMax is readJSON with a body of up to limit bytes.
func readJSONMax(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error()) // lang:en
		return false
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		writeError(w, http.StatusBadRequest, "invalid JSON body: more than one value") // lang:en
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8") // lang:en
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// jsonList is list with each item turned into its JSON object by conv;
// an empty list is [] (never null).
func jsonList[S, T any](list []S, conv func(S) T) []T {
	out := make([]T, 0, len(list))
	for _, x := range list {
		out = append(out, conv(x))
	}
	return out
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, wire.Error{Error: msg})
}

// fail answers an Admin error with the status it stands for.
func (s *Server) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, channel.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, channel.ErrNotPending), errors.Is(err, channel.ErrSessionPending), errors.Is(err, channel.ErrSessionBusy),
		errors.Is(err, channel.ErrConflict), errors.Is(err, channel.ErrStale):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, channel.ErrBadChoice), errors.Is(err, channel.ErrBadQuery), errors.Is(err, channel.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, channel.ErrCodeNeeded):
		writeError(w, http.StatusForbidden, err.Error())
	default:
		s.log.Error("api", "err", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, wire.NewInfo(s.rt.Info()))
}

type sessionJSON struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	CreatedAt time.Time  `json:"created_at"`
	Turns     int        `json:"turns"`
	LastAt    *time.Time `json:"last_at"`
	Busy      bool       `json:"busy"`
	// PrivateSince is set once the session has read the owner's private
	// data; its fetches may then ask (permissions.private_egress).
	PrivateSince *time.Time `json:"private_since,omitempty"`
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	list, err := s.admin.Sessions(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	busy := s.busy()
	out := []sessionJSON{}
	seen := map[string]bool{}
	for _, x := range list {
		last := x.LastAt.UTC()
		sj := sessionJSON{ID: x.ID, Title: x.Title, CreatedAt: x.CreatedAt.UTC(), Turns: x.Turns, LastAt: &last, Busy: busy[x.ID]}
		if !x.PrivateSince.IsZero() {
			p := x.PrivateSince.UTC()
			sj.PrivateSince = &p
		}
		out = append(out, sj)
		seen[x.ID] = true
	}
	for id := range busy { // a first turn still running: not stored yet
		if !seen[id] {
			out = append([]sessionJSON{{ID: id, CreatedAt: s.o.Now().UTC(), Busy: true}}, out...)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	msgs, err := s.rt.History(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, jsonList(msgs, wire.NewMessage))
}

// follow streams a session's running turn from its start, as POST
// /api/chat does (a reloaded page or another tab joins it); 404 when the
// session runs no turn.
func (s *Server) follow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	t, ok := s.turns[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "session "+id+" has no running turn") // lang:en
		return
	}
	s.watch(w, r, t)
}

func (s *Server) cancelSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.cancelTurn(id) {
		writeError(w, http.StatusNotFound, "session "+id+" has no running turn") // lang:en
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"session": id})
}

// approval is one approval with its whole preview.
func (s *Server) approval(w http.ResponseWriter, r *http.Request) {
	a, err := s.admin.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.NewApproval(a, true))
}

// grants lists the owner's active grants.
func (s *Server) grants(w http.ResponseWriter, r *http.Request) {
	list, err := s.admin.Grants(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonList(list, func(g channel.Grant) wire.Grant { return wire.NewGrant(g, s.o.Now()) }))
}

// revokeGrant ends a grant. Like every POST it needs Content-Type
// application/json (the guard); the body is ignored.
func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) {
	g, err := s.admin.RevokeGrant(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.hub.publish(newEvent("grant_revoked", map[string]string{"grant_id": g.ID}))
	writeJSON(w, http.StatusOK, wire.NewGrant(g, s.o.Now()))
}

func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	list, err := s.admin.Approvals(r.Context(), r.URL.Query().Get("status"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonList(list, func(a channel.Approval) wire.Approval { return wire.NewApproval(a, false) }))
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	var req wire.AnswerRequest
	if !readJSON(w, r, &req) {
		return
	}
	c := req.Choice
	if !c.Approves() && c != channel.Deny {
		writeError(w, http.StatusBadRequest, "choice: want once, session, always or deny") // lang:en
		return
	}
	a, err := s.admin.Answer(r.Context(), r.PathValue("id"), c, req.Code)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.hub.publish(newEvent("approval_decided", map[string]string{"approval_id": a.ID, "status": a.Status}))
	writeJSON(w, http.StatusOK, wire.NewApproval(a, false))
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var aq channel.AuditQuery
	var err error
	if v := q.Get("after"); v != "" {
		if aq.After, err = strconv.ParseInt(v, 10, 64); err != nil || aq.After < 0 {
			writeError(w, http.StatusBadRequest, "after: want a sequence number") // lang:en
			return
		}
	}
	switch q.Get("order") {
	case "", "oldest":
	case "newest":
		aq.Newest = true
	default:
		writeError(w, http.StatusBadRequest, "order: want oldest (the default) or newest") // lang:en
		return
	}
	if v := q.Get("before"); v != "" {
		if aq.Before, err = strconv.ParseInt(v, 10, 64); err != nil || aq.Before < 0 || !aq.Newest {
			writeError(w, http.StatusBadRequest, "before: want a sequence number, with order=newest") // lang:en
			return
		}
	}
	if v := q.Get("limit"); v != "" {
		if aq.Limit, err = strconv.Atoi(v); err != nil || aq.Limit < 1 || aq.Limit > 1000 {
			writeError(w, http.StatusBadRequest, "limit: want 1 to 1000") // lang:en
			return
		}
	}
	aq.Tool, aq.Decision = q.Get("tool"), q.Get("decision")
	page, err := s.admin.Audit(r.Context(), aq)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"records": jsonList(page.Records, wire.NewAuditRecord), "next": page.Next})
}

// events streams live updates across sessions until the client leaves or
// the server stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ch, stop := s.hub.subscribe()
	defer stop()
	st := startStream(w)
	ping := time.NewTicker(s.o.PingInterval)
	defer ping.Stop()
	for {
		ev, ok := next(s, r, st, ping, ch)
		if !ok || st.send(ev) != nil {
			return
		}
	}
}

type memoryJSON struct {
	ID      string     `json:"id"`
	Text    string     `json:"text"`
	Kind    string     `json:"kind"`
	Created time.Time  `json:"created"`
	Source  string     `json:"source"`
	Expires *time.Time `json:"expires"`
}

func (s *Server) memory(w http.ResponseWriter, r *http.Request) {
	units, err := s.admin.Memory(r.Context(), r.URL.Query().Get("q"))
	if err != nil {
		s.fail(w, err)
		return
	}
	out := make([]memoryJSON, 0, len(units))
	for _, u := range units {
		m := memoryJSON{ID: u.ID, Text: u.Text, Kind: u.Kind, Created: u.Created.UTC(), Source: u.Source}
		if !u.Expires.IsZero() {
			e := u.Expires.UTC()
			m.Expires = &e
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, out)
}

type reviewJSON struct {
	ID            string    `json:"id"`
	Text          string    `json:"text"`
	Kind          string    `json:"kind"`
	Count         int       `json:"count"`
	Status        string    `json:"status"`
	ConflictsWith string    `json:"conflicts_with"`
	Source        string    `json:"source"`
	FirstSeen     time.Time `json:"first_seen"`
}

// memoryReview is the review queue: notes automatic capture proposed.
func (s *Server) memoryReview(w http.ResponseWriter, r *http.Request) {
	items, err := s.admin.Review(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	out := make([]reviewJSON, 0, len(items))
	for _, it := range items {
		out = append(out, reviewJSON{ID: it.ID, Text: it.Text, Kind: it.Kind, Count: it.Count, Status: it.Status,
			ConflictsWith: it.ConflictsWith, Source: it.Source, FirstSeen: it.FirstSeen.UTC()})
	}
	writeJSON(w, http.StatusOK, out)
}

// memoryReviewAnswer accepts or dismisses one waiting note.
func (s *Server) memoryReviewAnswer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Action  string `json:"action"`
		Replace string `json:"replace"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Action != "accept" && req.Action != "dismiss" {
		writeError(w, http.StatusBadRequest, "action: want accept or dismiss") // lang:en
		return
	}
	if req.Action == "dismiss" && req.Replace != "" {
		writeError(w, http.StatusBadRequest, "replace goes with accept only") // lang:en
		return
	}
	id := r.PathValue("id")
	if err := s.admin.ReviewAnswer(r.Context(), id, req.Action == "accept", req.Replace); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "action": req.Action})
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.admin.Forget(r.Context(), id); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
}
