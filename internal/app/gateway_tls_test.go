package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "homard test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS: with a certificate the gateway speaks HTTPS only, its
// login cookie is Secure, and nothing attaches to it over plain HTTP.
func TestServeTLS(t *testing.T) {
	r := newTestRuntime(t, "smart")
	certFile, keyFile, pool := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	type urls struct{ base, login string }
	ready := make(chan urls, 1)
	go func() {
		done <- r.Serve(ctx, ServeOptions{Listener: ln, TLSCert: certFile, TLSKey: keyFile, Out: &syncBuffer{}, Log: &syncBuffer{},
			OnListen: func(base, login string) { ready <- urls{base, login} }})
	}()
	var u urls
	select {
	case u = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	defer func() { cancel(); <-done }()
	if !strings.HasPrefix(u.login, "https://127.0.0.1:") {
		t.Fatalf("login URL %q; want https", u.login)
	}
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Get(u.login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure {
		t.Errorf("TLS login = %d %v; want 303 and a Secure cookie", resp.StatusCode, resp.Header["Set-Cookie"])
	}
	plain, err := http.Get("http://" + strings.TrimPrefix(u.base, "https://") + "/api/info")
	if err == nil {
		plain.Body.Close()
		if plain.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port = %d; want the TLS server's 400", plain.StatusCode)
		}
	}
	if _, _, ok := r.Attached(); ok {
		t.Error("Attached() to a TLS serve = true; want false (local attach is plain loopback only)")
	}
}
