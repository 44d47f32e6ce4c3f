package web

import (
	"net/http"
)

// deleteSession deletes one of the owner's sessions. A session running a
// turn answers 409 (cancel it first); while it is being deleted no turn
// starts in it. The Admin refuses a session with a pending approval
// (409): the owner answers the card first, so no call is left waiting on
// a conversation that no longer exists.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	if _, busy := s.turns[id]; busy {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "session "+id+" is running a turn; wait for it to finish or cancel it, then delete it") // lang:en
		return
	}
	if s.deleting[id] {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "session "+id+" is being deleted already") // lang:en
		return
	}
	s.deleting[id] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.deleting, id)
		s.mu.Unlock()
	}()
	if err := s.admin.DeleteSession(r.Context(), id); err != nil {
		s.fail(w, err)
		return
	}
	s.hub.publish(newEvent("session_deleted", map[string]string{"session": id}))
	writeJSON(w, http.StatusOK, map[string]string{"session": id})
}
