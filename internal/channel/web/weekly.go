package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/homard/homard/internal/channel"
)

// The weekly memory review over HTTP (docs/API.md "Memory"): the open
// review (channel.WeeklyReview is its JSON shape) with each proposal's
// units as they read now and the text it proposes, and the owner's answer
// to one proposal or all.

// weeklyRoutes adds the weekly review's routes (lang:en).
func (s *Server) weeklyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/memory/weekly", s.weekly)
	mux.HandleFunc("POST /api/memory/weekly/{n}", s.weekly)
}

// weekly shows the open review (GET) or answers proposal {n}, or every
// pending one ("all"), and shows it as it is then (POST). A stale
// proposal is 409 with the review. Its errors are English (lang:en).
func (s *Server) weekly(w http.ResponseWriter, r *http.Request) {
	var (
		rev channel.WeeklyReview
		err error
	)
	if r.Method == http.MethodGet {
		rev, err = s.admin.WeeklyReview(r.Context())
	} else {
		var req struct {
			Action string `json:"action"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		n, nerr := strconv.Atoi(r.PathValue("n"))
		if r.PathValue("n") == "all" {
			n, nerr = 0, nil
		} else if n < 1 {
			nerr = strconv.ErrRange
		}
		if nerr != nil || req.Action != "approve" && req.Action != "dismiss" {
			writeError(w, http.StatusBadRequest, `want /api/memory/weekly/{a proposal's number or all} and {"action": "approve" or "dismiss"}`) // lang:en
			return
		}
		rev, err = s.admin.WeeklyAnswer(r.Context(), n, req.Action == "dismiss")
		if errors.Is(err, channel.ErrStale) {
			writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "review": rev})
			return
		}
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rev)
}
