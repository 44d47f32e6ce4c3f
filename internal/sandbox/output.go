package sandbox

import "fmt"

// capWriter keeps the first max bytes written to it and counts the rest
// without storing them, so a child that floods its output costs at most max
// bytes of memory. It always reports a full write so the child is never
// blocked or signalled by the cap itself; the run's timeout bounds it.
// Not safe for concurrent use: one reader goroutine owns it until it is done.
type capWriter struct {
	max       int
	buf       []byte
	truncated bool
}

func newCapWriter(max int) *capWriter { return &capWriter{max: max} }

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - len(w.buf)
	if len(p) > room {
		w.buf = append(w.buf, p[:room]...)
		w.truncated = true
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// bytes returns the kept output, followed by the truncation marker when
// output was dropped.
func (w *capWriter) bytes() []byte {
	if !w.truncated {
		return w.buf
	}
	return append(w.buf, fmt.Sprintf("\n[output truncated at %d bytes]", w.max)...)
}
