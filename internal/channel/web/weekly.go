package web

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/homard/homard/internal/channel"
)

// The weekly memory review over HTTP (docs/API.md "Memory"): the open
// review with each proposal's units as they read now and the text it
// proposes, and the owner's answer to one proposal or all. Routes and
// errors are English (lang:en).

// weeklyJSON is the weekly review as GET /api/memory/weekly answers it.
type weeklyJSON struct {
	ID        string         `json:"id"`
	CreatedAt time.Time      `json:"created_at"`
	Proposals []proposalJSON `json:"proposals"`
}

type proposalJSON struct {
	N      int          `json:"n"`
	Action string       `json:"action"`
	Before []beforeJSON `json:"before"`
	After  string       `json:"after"`
	Reason string       `json:"reason"`
	Status string       `json:"status"`
}

type beforeJSON struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Gone bool   `json:"gone"`
}

func newWeeklyJSON(r channel.WeeklyReview) weeklyJSON {
	return weeklyJSON{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), Proposals: jsonList(r.Proposals, func(p channel.WeeklyProposal) proposalJSON {
		return proposalJSON{N: p.N, Action: p.Action, After: p.Text, Reason: p.Reason, Status: p.Status,
			Before: jsonList(p.Before, func(b channel.MemoryBefore) beforeJSON { return beforeJSON(b) })}
	})}
}

// weeklyRoutes adds the weekly review's routes (lang:en).
func (s *Server) weeklyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/memory/weekly", s.weekly)
	mux.HandleFunc("POST /api/memory/weekly/{n}", s.weeklyAnswer)
}

func (s *Server) weekly(w http.ResponseWriter, r *http.Request) {
	rev, err := s.admin.WeeklyReview(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, newWeeklyJSON(rev))
}

// weeklyAnswer approves or dismisses proposal {n}, or every pending one
// ("all"). A stale proposal is 409 with the review as it is then.
func (s *Server) weeklyAnswer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Action string `json:"action"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Action != "approve" && req.Action != "dismiss" {
		writeError(w, http.StatusBadRequest, "action: want approve or dismiss") // lang:en
		return
	}
	n := 0
	if v := r.PathValue("n"); v != "all" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "want a proposal's number or all") // lang:en
			return
		}
	}
	rev, err := s.admin.WeeklyAnswer(r.Context(), n, req.Action == "dismiss")
	if errors.Is(err, channel.ErrStale) {
		writeJSON(w, http.StatusConflict, struct {
			Error  string     `json:"error"`
			Review weeklyJSON `json:"review"`
		}{err.Error(), newWeeklyJSON(rev)})
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, newWeeklyJSON(rev))
}
