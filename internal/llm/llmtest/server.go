package llmtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
)

// Reply is what a fake Server sends for one request.
type Reply struct {
	// Status is the HTTP status. Zero means 200.
	Status int
	// Header is added to the response (e.g. "Retry-After").
	Header map[string]string
	// Body is written as is when Status is not 200 (a provider error body).
	Body string
	// Chunks are written and flushed one at a time, as a provider streams.
	Chunks []string
	// Cut drops the connection after the chunks (no clean end).
	Cut bool
	// Hang keeps the response open after the chunks until the client goes
	// away; the Server then signals Disconnected.
	Hang bool
}

// Recorded is a request a Server received.
type Recorded struct {
	Path   string
	Header http.Header
	Body   []byte
	// Remote is the client's address: requests on one connection share it.
	Remote string
}

// Server is an httptest server that answers request i with Replies[i]. A
// request beyond the script gets HTTP 500 with "llmtest: no scripted reply".
type Server struct {
	*httptest.Server
	// Disconnected receives a value each time a Hang reply sees its client
	// go away.
	Disconnected chan struct{}

	mu        sync.Mutex // guards replies, requests, onRequest
	replies   []Reply
	compute   func(n int, body []byte) Reply // when set, answers every request
	requests  []Recorded
	onRequest func(n int)
}

// OnRequest sets f to be called with the request's number (from 1) as
// each request arrives, before it is answered: a test acts "while the
// model thinks".
func (s *Server) OnRequest(f func(n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRequest = f
}

// NewServer starts a server; the caller must Close it.
func NewServer(replies ...Reply) *Server {
	s := &Server{replies: replies, Disconnected: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewFuncServer starts a server whose reply to request n (from 1) is
// computed by f from the request's body: a scripted model that answers
// with what the conversation holds (the text of the last tool result).
// f runs on the server's goroutine, one request at a time. The caller
// must Close it.
func NewFuncServer(f func(n int, body []byte) Reply) *Server {
	s := &Server{compute: f, Disconnected: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Remote: r.RemoteAddr})
	reply := Reply{Status: http.StatusInternalServerError, Body: "llmtest: no scripted reply"}
	if n < len(s.replies) {
		reply = s.replies[n]
	}
	if s.compute != nil {
		reply = s.compute(n+1, body)
	}
	hook := s.onRequest
	s.mu.Unlock()
	if hook != nil {
		hook(n + 1)
	}

	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(reply.Body)))
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, c := range reply.Chunks {
		if _, err := io.WriteString(w, c); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	switch {
	case reply.Cut:
		// Aborting the handler makes net/http drop the connection without
		// the final chunk, as a dying proxy or server does.
		panic(http.ErrAbortHandler)
	case reply.Hang:
		<-r.Context().Done()
		s.Disconnected <- struct{}{}
	}
}

// CutAfter is a reply that sends the first n chunks then drops the
// connection.
func CutAfter(chunks []string, n int) Reply {
	return Reply{Chunks: chunks[:n], Cut: true}
}

// HangAfter is a reply that sends the first n chunks then waits for the
// client to go away.
func HangAfter(chunks []string, n int) Reply {
	return Reply{Chunks: chunks[:n], Hang: true}
}

// MalformedAfter is a reply that sends the first n chunks, then an SSE event
// whose JSON is cut short, then the rest.
func MalformedAfter(chunks []string, n int) Reply {
	out := append([]string(nil), chunks[:n]...)
	out = append(out, "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"\n\n")
	out = append(out, chunks[n:]...)
	return Reply{Chunks: out}
}
