package discordtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (s *Server) rest(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, APIPath)
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	call := Call{Method: r.Method, Path: path, Authorized: r.Header.Get("Authorization") == "Bot "+s.opts.Token}
	if len(body) > 0 {
		call.Body = json.RawMessage(body)
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	for ch, n := range s.waiting {
		if len(s.calls) >= n {
			close(ch)
			delete(s.waiting, ch)
		}
	}
	var sc *scripted
	for i, c := range s.scripted {
		if c.method == r.Method && strings.HasPrefix(path, c.prefix) {
			sc = &c
			s.scripted = append(s.scripted[:i:i], s.scripted[i+1:]...)
			break
		}
	}
	s.mu.Unlock()

	if !call.Authorized {
		writeJSON(w, http.StatusUnauthorized, `{"message":"401: Unauthorized","code":0}`)
		return
	}
	if sc != nil {
		if sc.status == http.StatusTooManyRequests {
			w.Header().Set("X-RateLimit-Scope", "user")
		}
		writeJSON(w, sc.status, sc.body)
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Method == "GET" && (path == "/gateway" || path == "/gateway/bot"):
		url := "ws://" + s.http.Listener.Addr().String() + "/gateway"
		writeJSON(w, 200, fmt.Sprintf(`{"url":%q,"shards":1,"session_start_limit":{"total":1000,"remaining":999,"reset_after":0,"max_concurrency":1}}`, url))
	case r.Method == "GET" && path == "/users/@me":
		writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"username":%q,"global_name":null,"bot":true}`, s.opts.BotID, s.opts.Username))
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		s.createMessage(w, parts[1], body)
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		s.editMessage(w, parts[1], parts[3], body)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "typing":
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		var cb struct {
			Type int `json:"type"`
		}
		if json.Unmarshal(body, &cb) != nil || (cb.Type != 4 && cb.Type != 6 && cb.Type != 7) {
			writeJSON(w, 400, `{"message":"Invalid Form Body","code":50035}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "DELETE" && len(parts) == 4 && parts[0] == "users" && parts[1] == "@me" && parts[2] == "guilds":
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, 404, `{"message":"404: Not Found","code":0}`)
	}
}

func (s *Server) createMessage(w http.ResponseWriter, channel string, body []byte) {
	var m struct {
		Content      string `json:"content"`
		Nonce        string `json:"nonce"`
		EnforceNonce bool   `json:"enforce_nonce"`
	}
	if err := json.Unmarshal(body, &m); err != nil || len([]rune(m.Content)) > 2000 || len(m.Nonce) > 25 {
		writeJSON(w, 400, `{"message":"Invalid Form Body","code":50035}`)
		return
	}
	s.mu.Lock()
	id, dup := "", false
	if m.EnforceNonce && m.Nonce != "" {
		id, dup = s.nonces[channel+"/"+m.Nonce]
	}
	if !dup {
		s.nextID++
		id = strconv.Itoa(s.nextID)
		s.messages[id] = m.Content
		if m.EnforceNonce && m.Nonce != "" {
			s.nonces[channel+"/"+m.Nonce] = id
		}
	}
	content := s.messages[id]
	s.mu.Unlock()
	writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"channel_id":%q,"content":%q,"author":{"id":%q,"bot":true},"nonce":%q}`,
		id, channel, content, s.opts.BotID, m.Nonce))
}

func (s *Server) editMessage(w http.ResponseWriter, channel, id string, body []byte) {
	var m struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		writeJSON(w, 400, `{"message":"Invalid Form Body","code":50035}`)
		return
	}
	s.mu.Lock()
	_, ok := s.messages[id]
	if ok {
		s.messages[id] = m.Content
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, 404, `{"message":"Unknown Message","code":10008}`)
		return
	}
	writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"channel_id":%q,"content":%q}`, id, channel, m.Content))
}
