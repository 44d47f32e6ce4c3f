package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// endDecoder ends at "[DONE]" and turns any other data into a text delta.
type endDecoder struct{}

func (endDecoder) Decode(data string) ([]Event, bool, error) {
	if data == "[DONE]" {
		return []Event{{Kind: EventDone}}, true, nil
	}
	return []Event{{Kind: EventText, Text: data}}, false, nil
}

// readFrames reads s to its end and returns how many events it gave.
func readFrames(s *FrameStream) (int, error) {
	n := 0
	for {
		_, err := s.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// A stream that ends with its marker gives its connection back for the
// next request (the end of the chunked body is read, not cut); and the
// twin at the boundary: a server that keeps the stream open after its end
// marker does not hold the reader (the drain gives up and closes).
func TestFrameStreamFinishReusesTheConnection(t *testing.T) {
	hold := make(chan struct{})
	var mu sync.Mutex
	var remotes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes = append(remotes, r.RemoteAddr)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: hi\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/hang" {
			<-hold
		}
	}))
	defer srv.Close()
	defer close(hold)
	stream := func(path string) (int, error) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			return 0, err
		}
		s := NewFrameStream(context.Background(), resp.Body, "test", endDecoder{})
		defer s.Close()
		return readFrames(s)
	}
	for range 3 {
		if n, err := stream("/ok"); n != 2 || err != nil {
			t.Fatalf("stream = %d events, %v; want 2", n, err)
		}
	}
	mu.Lock()
	if remotes[0] != remotes[1] || remotes[1] != remotes[2] {
		t.Errorf("client addresses %v: a finished stream's connection was not reused", remotes)
	}
	mu.Unlock()

	done := make(chan error, 1)
	go func() {
		n, err := stream("/hang")
		if err == nil && n != 2 {
			err = fmt.Errorf("%d events; want 2", n)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a hang guard, far above drainWait
		t.Fatal("a server holding the stream open after its end marker holds the reader")
	}
}
