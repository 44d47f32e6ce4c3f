package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	testToken      = "s3cret-0123456789"
	testCredential = "Bearer " + testToken
)

// testTokenB64 is the token in base64, one of the forms the proxy is told
// to hide besides the header's value.
var testTokenB64 = base64.StdEncoding.EncodeToString([]byte(testToken))

// credProxy is a proxy for three loopback servers: secure (TLS, with a
// credential), plainTLS (TLS, no credential) and plain (http, no
// credential), all listed and in the Client's Allow list; unlisted has a
// credential and is allowed by egress but not listed. Each server answers
// with what it saw: TLS or not, its path, the Authorization header, the
// bare token after "Bearer " and its base64, and the body, and echoes the
// Authorization and the bare token in response headers.
type credProxy struct {
	secure, plainTLS, plain, unlisted *httptest.Server
	url                               string // the proxy's
	records                           chan ProxyRecord
	hc                                *http.Client
}

func newCredProxy(t *testing.T) *credProxy {
	t.Helper()
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		token := strings.TrimPrefix(auth, "Bearer ")
		w.Header().Set("X-Echo", auth)
		w.Header().Set("X-Token", "token "+token)
		w.Header().Set("Authorization", auth)
		fmt.Fprintf(w, "tls=%v path=%s auth=%s token=%s b64=%s body=%s", r.TLS != nil, r.URL.Path, auth, token,
			base64.StdEncoding.EncodeToString([]byte(token)), body)
	})
	cp := &credProxy{records: make(chan ProxyRecord, 16)}
	cp.secure = httptest.NewTLSServer(echo)
	cp.plainTLS = httptest.NewTLSServer(echo)
	cp.plain = httptest.NewServer(echo)
	cp.unlisted = httptest.NewTLSServer(echo)
	for _, s := range []*httptest.Server{cp.secure, cp.plainTLS, cp.plain, cp.unlisted} {
		t.Cleanup(s.Close)
	}
	// httptest TLS servers share one certificate.
	tlsConf := cp.secure.Client().Transport.(*http.Transport).TLSClientConfig
	c, err := New(Options{TLSConfig: tlsConf, Allow: []string{
		"https://" + addr(cp.secure), "https://" + addr(cp.plainTLS), cp.plain.URL, "https://" + addr(cp.unlisted),
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewProxyWith([]string{addr(cp.secure), addr(cp.plainTLS), addr(cp.plain)}, ProxyOptions{
		Credential: func(host string) (Credential, bool) {
			if host == addr(cp.secure) || host == addr(cp.unlisted) {
				return Credential{Header: "Authorization", Value: testCredential, Hide: []string{testToken, testTokenB64}}, true
			}
			return Credential{}, false
		},
		Log: func(r ProxyRecord) { cp.records <- r },
	})
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := serveProxy(t, p)
	cp.url = proxyURL.String()
	cp.hc = &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: tlsConf.RootCAs},
	}}
	return cp
}

func addr(s *httptest.Server) string { return s.Listener.Addr().String() }

// TestProxyAddsCredential: a plain http request for a host with a
// credential goes upstream over TLS with the credential in place of the
// extension's own Authorization; the response carries neither the
// credential header nor the value (headers dropped, body scrubbed), and
// the log says a credential was added without its value. The twins: a
// host without a credential is forwarded untouched, over plain http or
// through CONNECT; the refusals: CONNECT to the credentialed host (with a
// message saying to use http://) and a host that is not listed, even one
// with a credential.
func TestProxyAddsCredential(t *testing.T) {
	cp := newCredProxy(t)
	for _, tc := range []struct {
		name, method, url, body string
		wantStatus              int
		wantBody                []string
		wantCred                bool
	}{
		{"GET with a credential", "GET", "http://" + addr(cp.secure) + "/x", "",
			200, []string{"tls=true", "path=/x", "auth=" + strings.Repeat("*", len(testCredential)),
				"token=" + strings.Repeat("*", len(testToken)), "b64=" + strings.Repeat("*", len(testTokenB64))}, true},
		{"POST with a credential", "POST", "http://" + addr(cp.secure) + "/post", "payload",
			200, []string{"tls=true", "path=/post", "body=payload"}, true},
		{"plain host without a credential (twin)", "GET", cp.plain.URL + "/y", "",
			200, []string{"tls=false", "path=/y", "auth=Bearer extension-own"}, false},
		{"TLS host without a credential through CONNECT (twin)", "GET", cp.plainTLS.URL + "/z", "",
			200, []string{"tls=true", "path=/z", "auth=Bearer extension-own"}, false},
		{"CONNECT to the host with a credential", "GET", cp.secure.URL + "/x", "",
			http.StatusForbidden, nil, false},
		{"unlisted host with a credential", "GET", "http://" + addr(cp.unlisted) + "/x", "",
			http.StatusForbidden, []string{"not in the extension's network list"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer extension-own")
			resp, err := cp.hc.Do(req)
			rec := <-cp.records
			if rec.Credential != tc.wantCred || rec.Status != tc.wantStatus {
				t.Errorf("%s %s: log record %+v; want credential %v, status %d", tc.method, tc.url, rec, tc.wantCred, tc.wantStatus)
			}
			if strings.HasPrefix(tc.url, "https") && tc.wantStatus != 200 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("%s through the proxy succeeded; want the CONNECT refused", tc.url)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s through the proxy: %v", tc.method, tc.url, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("%s %s = %d %q; want %d", tc.method, tc.url, resp.StatusCode, body, tc.wantStatus)
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(string(body), w) {
					t.Errorf("%s %s: body %q; want it to contain %q", tc.method, tc.url, body, w)
				}
			}
			var head bytes.Buffer
			_ = resp.Header.Write(&head)
			if leak := string(body) + head.String(); strings.Contains(leak, "s3cret") || strings.Contains(leak, testTokenB64) {
				t.Errorf("%s %s: the response carries the credential:\n%s\n%s", tc.method, tc.url, head.String(), body)
			}
			if tc.wantCred && (resp.Header.Get("Authorization") != "" || resp.Header.Get("X-Echo") != "" || resp.Header.Get("X-Token") != "") {
				t.Errorf("%s %s: response headers %v; want Authorization and the echoes of the credential and the token dropped", tc.method, tc.url, resp.Header)
			}
		})
	}
}

// TestProxyRefusesConnectWithCredential reads the refusal as an extension
// would see it: 403, saying to send plain http:// through the proxy.
func TestProxyRefusesConnectWithCredential(t *testing.T) {
	cp := newCredProxy(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(cp.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\n\r\n", addr(cp.secure))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	want := "http://" + addr(cp.secure) + "/"
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), want) {
		t.Errorf("CONNECT %s = %d %q; want 403 saying to request %s...", addr(cp.secure), resp.StatusCode, body, want)
	}
	<-cp.records
}

// TestScrubber: each secret is replaced wherever it falls across writes,
// the longest first, and everything else comes through in order.
func TestScrubber(t *testing.T) {
	secrets := []string{"Bearer abcdef", "abcdef", "YWJjZGVm"}
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"none", []string{"hello ", "world"}, "hello world"},
		{"whole", []string{"x abcdef y"}, "x ****** y"},
		{"split", []string{"x ab", "cd", "ef y"}, "x ****** y"},
		{"twice and at the end", []string{"abcdefab", "cdef"}, "************"},
		{"prefix only", []string{"abcde"}, "abcde"},
		{"the header's value", []string{"auth: Bearer ab", "cdef."}, "auth: *************."},
		{"base64, split", []string{"b64=YWJj", "ZGVm;"}, "b64=********;"},
		{"a prefix of the longest, then the end", []string{"Bearer a", "b"}, "Bearer ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := newScrubber(&out, secrets)
			for _, w := range tc.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("scrubbed %q = %q; want %q", tc.writes, out.String(), tc.want)
			}
		})
	}
}
