package app

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkGatewayTimeToFirstByte measures what the HTTP gateway adds
// before the first byte of an answer: each iteration times POST /api/chat
// from sending the request to reading the first `delta` event, and
// Runtime.Run from its call to the first OnText, against the same loopback
// fake model (alternating which goes first). overhead-ns is the difference:
// HTTP request and SSE framing, the guard chain and the turn registry.
func BenchmarkGatewayTimeToFirstByte(b *testing.B) {
	r := benchRuntime(b)
	tok, _, err := r.Owner.TokenCreate(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		served <- r.Serve(ctx, ServeOptions{Listener: ln, Out: io.Discard, Log: io.Discard,
			OnListen: func(base, _ string) { ready <- base }})
	}()
	base := <-ready
	b.Cleanup(func() { cancel(); <-served })
	client := &http.Client{}

	viaGateway := func(i int) time.Duration {
		body := `{"session":"g` + strconv.Itoa(i) + `","message":"hello"}`
		req, _ := http.NewRequest("POST", base+"/api/chat", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var first time.Duration
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if first == 0 && sc.Text() == "event: delta" {
				first = time.Since(start)
			}
			if sc.Text() == "event: done" {
				break
			}
		}
		if first == 0 {
			b.Fatal("no delta event")
		}
		for sc.Scan() { // read to the end: the next request reuses the connection
		}
		return first
	}
	viaRun := func(i int) time.Duration { return runFirstByte(b, r, ctx, "r"+strconv.Itoa(i)) }

	viaGateway(-1) // open the connections outside the measurement
	viaRun(-1)
	var gw, run time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			gw += viaGateway(i)
			run += viaRun(i)
		} else {
			run += viaRun(i)
			gw += viaGateway(i)
		}
		i++
	}
	n := float64(b.N)
	b.ReportMetric(float64(gw.Nanoseconds())/n, "gateway-ns/first-byte")
	b.ReportMetric(float64(run.Nanoseconds())/n, "run-ns/first-byte")
	b.ReportMetric(float64((gw-run).Nanoseconds())/n, "overhead-ns")
}

// BenchmarkGatewayRoundTrip measures one GET /api/info on loopback through
// the whole handler chain: with a bearer token (one SQLite read to verify
// it) and with a login cookie (an in-memory lookup).
func BenchmarkGatewayRoundTrip(b *testing.B) {
	r := newTestRuntime(b, "smart")
	tok, _, err := r.Owner.TokenCreate(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	type urls struct{ base, login string }
	ready := make(chan urls, 1)
	go func() {
		served <- r.Serve(ctx, ServeOptions{Listener: ln, Out: io.Discard, Log: io.Discard,
			OnListen: func(base, login string) { ready <- urls{base, login} }})
	}()
	u := <-ready
	b.Cleanup(func() { cancel(); <-served })
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(u.login)
	if err != nil || len(resp.Cookies()) != 1 {
		b.Fatalf("login: %v", err)
	}
	resp.Body.Close()
	cookie := resp.Cookies()[0]
	for _, tc := range []struct {
		name string
		auth func(*http.Request)
	}{
		{"bearer", func(req *http.Request) { req.Header.Set("Authorization", "Bearer "+tok) }},
		{"cookie", func(req *http.Request) { req.AddCookie(cookie) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("GET", u.base+"/api/info", nil)
				tc.auth(req)
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("GET /api/info: %v %v", resp, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
