package llm

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// watchReturns sets returnedHook for the test: each body going back to
// the pool is sent on the channel, after being overwritten as the next
// request reusing it would.
func watchReturns(t *testing.T) <-chan []byte {
	t.Helper()
	ch := make(chan []byte, 4)
	hook := func(b []byte) {
		for i := range b {
			b[i] = 'Z'
		}
		ch <- b
	}
	returnedHook.Store(&hook)
	t.Cleanup(func() { returnedHook.Store(nil) })
	return ch
}

func bodyOf(n int, c byte) []byte {
	b := GetBuffer(n)
	return append(b, bytes.Repeat([]byte{c}, n)...)
}

// TestRecycledBodyComesBack: a request answered by a server that read it
// gives its buffer back to the pool.
func TestRecycledBodyComesBack(t *testing.T) {
	returned := watchReturns(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	body := bodyOf(64<<10, 'a')
	s := Send{Provider: "p", URL: srv.URL, Header: http.Header{}, Body: body, Recycle: true}
	resp, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case b := <-returned:
		if &b[:1][0] != &body[:1][0] {
			t.Fatal("another buffer came back")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the body never came back to the pool")
	}
}

// TestRecycledBodyNotReusedWhileWritten: a server may answer before it
// has read the request (an early reply). Send returns then, while
// net/http still writes the body: the buffer must not be reused until the
// write is over — the server sees only the request's own bytes, never
// those of a next request written over them (returnedHook overwrites).
func TestRecycledBodyNotReusedWhileWritten(t *testing.T) {
	returned := watchReturns(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const size = 32 << 20 // far past what loopback's socket buffers hold
	release := make(chan struct{})
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for { // the request's head
			line, err := r.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		<-release
		rest := make([]byte, size)
		n, _ := io.ReadFull(r, rest)
		got <- rest[:n]
	}()
	body := bodyOf(size, 'a')
	s := Send{Provider: "p", URL: "http://" + ln.Addr().String(), Header: http.Header{}, Body: body, Recycle: true, MaxRetries: -1}
	resp, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Send is done; the body is still being written. The server reads
	// it now, while the response is still open.
	close(release)
	var rest []byte
	select {
	case rest = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never read the body")
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if i := bytes.IndexByte(rest, 'Z'); i >= 0 {
		t.Fatalf("the server read another request's bytes at offset %d: the buffer was reused while net/http wrote it", i)
	}
	if len(rest) != size || strings.Trim(string(rest), "a") != "" {
		t.Fatalf("the server read %d bytes; want the %d of the request", len(rest), size)
	}
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the body never came back once written")
	}
}

// TestRecycledOnlyOnThePlainPath: a body read twice (a retry's GetBody,
// a redirect) or whose write was never reported stays with the garbage
// collector.
func TestRecycledOnlyOnThePlainPath(t *testing.T) {
	returned := watchReturns(t)
	cases := map[string]func(r *recycled){
		"retried":    func(r *recycled) { r.reader(); r.reader(); r.wrote++; r.wrote++; r.finish(true) },
		"redirected": func(r *recycled) { r.reader(); r.wrote++; r.wrote++; r.finish(false) },
		"unreported": func(r *recycled) { r.reader(); r.finish(true) },
		"not done":   func(r *recycled) { r.reader(); r.wrote++; r.maybeReturn() },
	}
	for name, run := range cases {
		run(&recycled{buf: []byte("x")})
		select {
		case <-returned:
			t.Errorf("%s: the body went back to the pool", name)
		default:
		}
	}
	// Twin: one reader, its write reported, Send done.
	r := &recycled{buf: []byte("x")}
	r.reader()
	r.wrote++
	r.finish(true)
	select {
	case <-returned:
	default:
		t.Error("plain: the body did not go back")
	}
}
