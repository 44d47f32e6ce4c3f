package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
)

// The scheduled tasks API (docs/API.md "Tasks"): add a task (pending),
// list, show, and the owner's actions on one task. Adding is `homard task
// add` over HTTP: the same rules and defaults, and nothing runs until the
// owner approves the hash of the body the add answered with. Every route
// is behind the guard: authentication, Host and Origin checks, and for a
// POST the JSON content type a cross-site form cannot send.

// taskRunsShown is how many runs GET /api/tasks/{id} carries.
const taskRunsShown = 20

// taskRoutes adds the Tasks API's routes (lang:en).
func (s *Server) taskRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/tasks", s.tasks)
	mux.HandleFunc("POST /api/tasks", s.addTask)
	mux.HandleFunc("GET /api/tasks/{id}", s.task)
	mux.HandleFunc("POST /api/tasks/{id}/approve", s.approveTask)
	mux.HandleFunc("POST /api/tasks/{id}/pause", s.taskAction(s.admin.PauseTask))
	mux.HandleFunc("POST /api/tasks/{id}/resume", s.taskAction(s.admin.ResumeTask))
	mux.HandleFunc("POST /api/tasks/{id}/remove", s.taskAction(s.admin.RemoveTask))
	mux.HandleFunc("POST /api/tasks/{id}/renew", s.renewTask)
}

func (s *Server) tasks(w http.ResponseWriter, r *http.Request) {
	list, err := s.admin.Tasks(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonList(list, wire.NewTask))
}

// addTask adds a task from the web, pending (origin web): 201 with the
// task as GET /api/tasks/{id} shows it — its canonical body and hash —
// and the ceiling warning. A request that is not strict JSON of
// wire.TaskAddRequest, or a task that breaks a rule, is 400 saying what
// to fix, and nothing is stored.
func (s *Server) addTask(w http.ResponseWriter, r *http.Request) {
	var req wire.TaskAddRequest
	if !readJSON(w, r, &req) {
		return
	}
	d, ok := readExpiry(w, req.Expires)
	if !ok {
		return
	}
	t, err := s.admin.AddTask(r.Context(), req.Spec(d))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.hub.publish(newEvent("task_changed", map[string]string{"task_id": t.ID, "status": t.Status}))
	w.Header().Set("Location", "/api/tasks/"+url.PathEscape(t.ID))
	writeJSON(w, http.StatusCreated, wire.TaskAdded{TaskDetail: wire.NewTaskDetail(t, nil), Warning: t.Warning})
}

func (s *Server) task(w http.ResponseWriter, r *http.Request) {
	t, err := s.admin.Task(r.Context(), r.PathValue("id"))
	s.taskDone(w, r, t, err, false)
}

// taskDone answers t, with its last runs, or err; after an action
// (changed) it tells the live updates too.
func (s *Server) taskDone(w http.ResponseWriter, r *http.Request, t channel.Task, err error, changed bool) {
	if err != nil {
		s.fail(w, err)
		return
	}
	if changed {
		s.hub.publish(newEvent("task_changed", map[string]string{"task_id": t.ID, "status": t.Status}))
	}
	runs, err := s.admin.TaskRuns(r.Context(), t.ID, taskRunsShown)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.NewTaskDetail(t, runs))
}

// taskAction serves an action without parameters. Like every POST it
// needs Content-Type application/json (the guard); the body is ignored.
func (s *Server) taskAction(act func(ctx context.Context, id string) (channel.Task, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := act(r.Context(), r.PathValue("id"))
		s.taskDone(w, r, t, err, true)
	}
}

// approveTask seals the body whose hash the page showed; a body that
// changed since is 409, and nothing is approved.
func (s *Server) approveTask(w http.ResponseWriter, r *http.Request) {
	var req wire.TaskApproveRequest
	if !readJSON(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Hash) == "" {
		writeError(w, http.StatusBadRequest, "hash: send the hash of the body you read (GET /api/tasks/{id})") // lang:en
		return
	}
	t, err := s.admin.ApproveTask(r.Context(), r.PathValue("id"), strings.TrimSpace(req.Hash))
	s.taskDone(w, r, t, err, true)
}

// readExpiry reads a request's expires, or answers 400 saying how to
// write it.
func readExpiry(w http.ResponseWriter, v string) (time.Duration, bool) {
	d, ok := parseExpiry(v)
	if !ok {
		writeError(w, http.StatusBadRequest, `expires: want a duration such as "240h" or "10d", or nothing for the configured expiry`) // lang:en
	}
	return d, ok
}

func (s *Server) renewTask(w http.ResponseWriter, r *http.Request) {
	var req wire.TaskRenewRequest
	if !readJSON(w, r, &req) {
		return
	}
	d, ok := readExpiry(w, req.Expires)
	if !ok {
		return
	}
	t, err := s.admin.RenewTask(r.Context(), r.PathValue("id"), d)
	s.taskDone(w, r, t, err, true)
}

// parseExpiry reads a renewal's length: "" (0: the default), a Go
// duration ("240h") or whole days ("10d"). The Admin checks the range.
func parseExpiry(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, true
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 1000 {
			return 0, false
		}
		return time.Duration(n) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}
