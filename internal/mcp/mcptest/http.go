package mcptest

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// HTTP is the same server speaking streamable HTTP, the minimal form the
// transport allows: each POSTed JSON-RPC request is answered with one
// application/json body, a notification with 202, and GET (a standalone
// event stream) and DELETE with 405. It records the Authorization header
// of every request it gets.
type HTTP struct {
	spec string

	mu   sync.Mutex // guards auth
	auth []string
}

// NewHTTP returns the handler of a server with the tools of the Spec file
// at specPath.
func NewHTTP(specPath string) *HTTP { return &HTTP{spec: specPath} }

// Authorizations returns the Authorization header of each request so far
// ("" when a request had none).
func (h *HTTP) Authorizations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	h.mu.Unlock()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := answer(body, h.spec)
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
