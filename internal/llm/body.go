package llm

import (
	"bytes"
	"context"
	"io"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// A long session's request is tens of kilobytes, encoded twice a turn
// (the call, then the answer), and the request log writes a line that
// grows with it too: allocating each afresh made the garbage collector's
// share of a turn grow with the session (issue 22: with GOGC=off the
// growth over 50 turns all but vanished). Those buffers come from bodies
// and go back once nothing reads them any more.
var bodies sync.Pool // of *[]byte

// bodySlack is the room a new buffer gets beyond what it was asked for:
// the next request of a session is a little longer than this one.
const bodySlack = 4 << 10

// maxPooled is the largest buffer kept for reuse (a request past it is
// rare; keeping it would hold its memory for every later small one).
const maxPooled = 4 << 20

// GetBuffer returns an empty buffer with room for n bytes, reused when
// one large enough was put back (PutBuffer).
func GetBuffer(n int) []byte {
	if p, ok := bodies.Get().(*[]byte); ok {
		if cap(*p) >= n {
			return (*p)[:0]
		}
		bodies.Put(p) // another request's size may fit it
	}
	return make([]byte, 0, n+bodySlack)
}

// PutBuffer hands b back for reuse; nothing may use b after.
func PutBuffer(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooled {
		return
	}
	b = b[:0]
	bodies.Put(&b)
}

// recycled tracks one Send's body until its buffer may be reused. The
// body goes to net/http as a *bytes.Reader — a reader of its own would
// make the Transport flush the headers apart and copy the body through a
// fresh 32 KiB buffer, more than the pool saves — so the moment net/http
// stops reading it is learnt from httptrace's WroteRequest, which both
// HTTP/1 and HTTP/2 report once a request and its body are written (or
// the write gave up). The buffer goes back only on the plain path: one
// reader handed out, its one write reported, no redirect, and Send done
// with it. A retry, a redirect or a write never reported leaves the
// buffer to the garbage collector: never reused while anything may still
// read it.
type recycled struct {
	buf []byte

	mu       sync.Mutex
	handed   int  // readers given to net/http
	wrote    int  // WroteRequest reports
	plain    bool // Send got its answer from the first request, not redirected
	done     bool // Send has returned
	returned bool
}

// trace is ctx with the trace that counts r's writes.
func (r *recycled) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		r.mu.Lock()
		r.wrote++
		r.maybeReturn()
		r.mu.Unlock()
	}})
}

// reader is a reader of the whole body, counted.
func (r *recycled) reader() io.ReadCloser {
	r.mu.Lock()
	r.handed++
	r.mu.Unlock()
	return io.NopCloser(bytes.NewReader(r.buf))
}

// finish records that Send is done with the body; plain says its answer
// came from the first request sent, not redirected.
func (r *recycled) finish(plain bool) {
	r.mu.Lock()
	r.done, r.plain = true, plain
	r.maybeReturn()
	r.mu.Unlock()
}

// returnedHook, when set (by tests only), sees each body as it goes back.
var returnedHook atomic.Pointer[func([]byte)]

func (r *recycled) maybeReturn() {
	if r.done && r.plain && r.handed == 1 && r.wrote == 1 && !r.returned {
		r.returned = true
		if h := returnedHook.Load(); h != nil {
			(*h)(r.buf)
		}
		PutBuffer(r.buf)
	}
}
