package egress

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// hopHeaders are the hop-by-hop and proxy headers: they are about the
// connection to the proxy, never sent on in either direction.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// stripHop removes the hop-by-hop headers from h, with those the
// Connection header names.
func stripHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// forwardTLS sends req (a plain http:// request the extension made) to
// https://host:port with the credential header set, over the Client's
// transport (its URL rules, checked dialer, TLS configuration and
// response-header timeout), and writes the response back on conn with
// Connection: close. The extension's own value of the header is
// overwritten; the response never carries the header, nor any header or
// body bytes holding the value or one of cred.Hide. It returns the status
// it answered with.
func (p *Proxy) forwardTLS(ctx context.Context, conn net.Conn, req *http.Request, host string, port uint16, cred Credential) int {
	header, value := cred.Header, cred.Value
	hide := hidden(cred)
	u := *req.URL
	u.Scheme, u.Host = "https", authority(host, port)
	out, err := http.NewRequestWithContext(ctx, req.Method, u.String(), req.Body)
	if err != nil {
		proxyError(conn, http.StatusBadRequest, fmt.Sprintf("request %s: %v", u.Redacted(), err))
		return http.StatusBadRequest
	}
	out.ContentLength = req.ContentLength
	if req.ContentLength == 0 {
		out.Body = http.NoBody
	}
	out.Header = req.Header.Clone()
	stripHop(out.Header)
	// The Client's transport asks for gzip itself and decodes it, so the
	// body is scrubbed as plain bytes.
	out.Header.Del("Accept-Encoding")
	out.Header.Del(header)
	out.Header.Set(header, value)
	if err := p.c.checkURL(out.URL); err != nil {
		proxyError(conn, http.StatusForbidden, err.Error())
		return http.StatusForbidden
	}
	resp, err := p.c.hc.Transport.RoundTrip(out)
	if err != nil {
		proxyError(conn, http.StatusBadGateway, fmt.Sprintf("send the request to %s: %v", u.Redacted(), err))
		return http.StatusBadGateway
	}
	defer resp.Body.Close()

	h := resp.Header.Clone()
	stripHop(h)
	h.Del(header)
	for name, vs := range h {
		if slices.ContainsFunc(vs, func(v string) bool { return containsAny(v, hide) }) {
			h.Del(name)
		}
	}
	h.Del("Content-Length")
	if resp.ContentLength >= 0 && !resp.Uncompressed {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	h.Set("Connection", "close")
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "HTTP/1.1 %03d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	if err := h.Write(w); err != nil {
		return resp.StatusCode
	}
	_, _ = w.WriteString("\r\n")
	if req.Method != http.MethodHead {
		// A replacement keeps the length, so a Content-Length stays true.
		s := newScrubber(w, hide)
		if _, err := io.Copy(s, resp.Body); err == nil {
			_ = s.Flush()
		}
	}
	_ = w.Flush()
	return resp.StatusCode
}

// hidden lists what a response must not carry: the credential's value
// and cred.Hide, without empty or repeated entries, longest first.
func hidden(cred Credential) []string {
	out := []string{}
	for _, v := range append([]string{cred.Value}, cred.Hide...) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

func containsAny(s string, needles []string) bool {
	return slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(s, n) })
}

// scrubber writes what it is given to w with every occurrence of each
// secret replaced by as many '*' (longest first): an upstream that echoes
// the request's credential — whole, the bare token, or an encoded form the
// caller listed (a debugging endpoint, an error page) — does not hand it
// to the extension. It holds back the last bytes that could start a
// secret (the longest's length less one) until more come or Flush.
type scrubber struct {
	w       io.Writer
	secrets [][]byte
	keep    int
	held    []byte
}

func newScrubber(w io.Writer, secrets []string) *scrubber {
	s := &scrubber{w: w}
	for _, v := range secrets {
		if v == "" {
			continue
		}
		s.secrets = append(s.secrets, []byte(v))
		s.keep = max(s.keep, len(v)-1)
	}
	return s
}

func (s *scrubber) Write(p []byte) (int, error) {
	if len(s.secrets) == 0 {
		return s.w.Write(p)
	}
	buf := append(s.held, p...)
	for _, v := range s.secrets {
		buf = bytes.ReplaceAll(buf, v, bytes.Repeat([]byte("*"), len(v)))
	}
	keep := min(s.keep, len(buf))
	if _, err := s.w.Write(buf[:len(buf)-keep]); err != nil {
		return 0, err
	}
	s.held = append(s.held[:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// Flush writes the bytes held back.
func (s *scrubber) Flush() error {
	_, err := s.w.Write(s.held)
	s.held = nil
	return err
}
