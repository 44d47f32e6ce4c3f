package ui_test

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// fakeWeekly is the weekly memory review the fake server holds, answered
// as docs/API.md says: a proposal in stale answers 409 with the review.
type fakeWeekly struct {
	proposals []map[string]any
	stale     map[int]bool // approving these is refused as stale
	answers   chan string  // "n action" for each POST the page sends
}

func (f *fakeServer) weeklyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/memory/weekly", f.authed(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.weekly == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "memory review: not found"})
			return
		}
		writeJSON(w, http.StatusOK, f.weekly.review())
	}))
	mux.HandleFunc("POST /api/memory/weekly/{n}", f.authed(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Action string }
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&req) != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON body"})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.weekly == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "memory review: not found"})
			return
		}
		f.weekly.answers <- r.PathValue("n") + " " + req.Action
		n, _ := strconv.Atoi(r.PathValue("n"))
		stale := false
		for _, p := range f.weekly.proposals {
			pn := p["n"].(int)
			if p["status"] != "pending" || n != 0 && pn != n {
				continue
			}
			switch {
			case req.Action == "dismiss":
				p["status"] = "dismissed"
			case f.weekly.stale[pn]:
				p["status"], stale = "stale", true
			default:
				p["status"] = "approved"
			}
		}
		if stale {
			writeJSON(w, http.StatusConflict, map[string]any{"error": "proposal " + r.PathValue("n") +
				" not applied: memory.md changed since the review was made; run a new review", "review": f.weekly.review()})
			return
		}
		writeJSON(w, http.StatusOK, f.weekly.review())
	}))
}

func (fw *fakeWeekly) review() map[string]any {
	return map[string]any{"id": "rv_1", "created_at": "2026-12-06T09:00:00Z", "proposals": fw.proposals}
}
