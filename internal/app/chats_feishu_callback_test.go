package app

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
)

const fsEncryptKey = "test-encrypt-key-0123"

// feishuCallbackConfig configures Feishu in callback mode at a new fake.
func feishuCallbackConfig(t *testing.T, r *Runtime) *feishutest.Server {
	t.Helper()
	fake := feishutest.New()
	t.Cleanup(fake.Close)
	fake.SetChatMode(fsOwnerChat, "p2p")
	configureChannel(t, r, chat.Feishu, config.Channel{TokenSecret: "feishu", AppID: fake.AppID, APIBase: fake.URL(),
		Mode: config.ModeCallback, EncryptKeySecret: "feishu-encrypt"}, fake.AppSecret)
	if err := r.Owner.SecretSet(Secret{Name: "feishu-encrypt", Channel: chat.Feishu}, []byte(fsEncryptKey)); err != nil {
		t.Fatal(err)
	}
	return fake
}

// feishuCallbacks posts signed callbacks to a serve over TLS.
type feishuCallbacks struct {
	t    *testing.T
	url  string
	http *http.Client
}

// post sends payload encrypted and signed at ts with key, as Feishu does,
// and returns the status and body.
// post sends payload as Feishu does, sending it again while serve
// answers 503 (its channel is recorded running a moment before the
// callback takes deliveries; Feishu retries a callback not answered 200).
func (c feishuCallbacks) post(payload []byte, ts time.Time, key string) (int, string) {
	c.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		code, body := c.postOnce(payload, ts, key)
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return code, body
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c feishuCallbacks) postOnce(payload []byte, ts time.Time, key string) (int, string) {
	c.t.Helper()
	k := sha256.Sum256([]byte(fsEncryptKey))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		c.t.Fatal(err)
	}
	n := aes.BlockSize - len(payload)%aes.BlockSize
	plain := append(append([]byte{}, payload...), bytes.Repeat([]byte{byte(n)}, n)...)
	out := make([]byte, aes.BlockSize+len(plain))
	rand.Read(out[:aes.BlockSize])
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], plain)
	body := []byte(`{"encrypt":"` + base64.StdEncoding.EncodeToString(out) + `"}`)
	tss := strconv.FormatInt(ts.Unix(), 10)
	sum := sha256.Sum256([]byte(tss + "nonce" + key + string(body)))
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Lark-Request-Timestamp", tss)
	req.Header.Set("X-Lark-Request-Nonce", "nonce")
	req.Header.Set("X-Lark-Signature", hex.EncodeToString(sum[:]))
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// serveFeishuCallbacks starts serve with TLS and --allow-remote and
// waits until the Feishu channel runs.
func serveFeishuCallbacks(t *testing.T, r *Runtime, certFile, keyFile string, pool *x509.CertPool) (*servedChannel, feishuCallbacks) {
	t.Helper()
	base := make(chan string, 1)
	sc := serveChannels(t, r, ServeOptions{AllowRemote: true, TLSCert: certFile, TLSKey: keyFile, OnListen: func(b, _ string) { base <- b }})
	var u string
	select {
	case u = <-base:
	case err := <-sc.done:
		sc.cancel = nil
		t.Fatalf("Serve: %v", err)
	}
	waitFor(t, "the feishu channel running", func() bool {
		list, err := r.Chats.List(context.Background())
		return err == nil && list[2].State == "running"
	})
	return sc, feishuCallbacks{t: t, url: u + feishuCallbackPath(),
		http: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 20 * time.Second}}
}

// TestFeishuCallbackServe: in callback mode, serve (with TLS) takes
// Feishu's signed callbacks at /callbacks/feishu: the owner's message
// runs a turn whose card is pressed by a callback answered with the toast;
// the file is written and the reply sent; a wrong signature and a stale
// timestamp are 401 and reach nothing; the same event again, before and
// after a restart, is 200 and handled once.
func TestFeishuCallbackServe(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r,
		openAI(toolCall("c1", "write_file", `{"path":"cb.txt","content":"via callback\n"}`)),
		openAI(llmtest.Turn{Text: []string{"written"}}),
	)
	pairOn(t, r, chat.Feishu, fsOwner)
	fake := feishuCallbackConfig(t, r)
	certFile, keyFile, pool := selfSigned(t)
	sc, cb := serveFeishuCallbacks(t, r, certFile, keyFile, pool)

	msg := feishutest.Message{EventID: "ev-cb-1", MessageID: "om_cb1", ChatID: fsOwnerChat, ChatType: "p2p", Sender: fsOwner, Text: "write it"}.Event()
	for _, bad := range []struct {
		name string
		ts   time.Time
		key  string
	}{{"wrong signature", time.Now(), "not-the-key"}, {"stale", time.Now().Add(-10 * time.Minute), fsEncryptKey}} {
		if code, body := cb.post(msg, bad.ts, bad.key); code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s; want 401", bad.name, code, body)
		}
	}
	if st := inboxState(t, r, "ev-cb-1"); st != "" {
		t.Fatalf("after refused callbacks the event is %q in the inbox; want absent", st)
	}
	if code, body := cb.post(msg, time.Now(), fsEncryptKey); code != http.StatusOK {
		t.Fatalf("signed callback = %d %s; want 200", code, body)
	}
	var card feishutest.Sent
	waitFor(t, "the approval card", func() bool {
		for _, m := range fake.Sent() {
			if m.MsgType == "interactive" {
				card = m
				return true
			}
		}
		return false
	})
	var cj feishuCard
	if err := json.Unmarshal([]byte(card.Content), &cj); err != nil || len(cj.Elements) != 2 {
		t.Fatalf("card %s: %v", card.Content, err)
	}
	code, body := cb.post(feishutest.CardPress("ev-cb-2", "card-tok", fsOwner, fsOwnerChat, card.ID, cj.Elements[1].Actions[0].Value.D), time.Now(), fsEncryptKey)
	if code != http.StatusOK || !strings.Contains(body, `"content":"Approved once"`) {
		t.Errorf("press callback = %d %s; want 200 with the toast Approved once", code, body)
	}
	fsd := &feishuServed{servedChannel: sc, fake: fake}
	waitFor(t, "the reply", func() bool { return containsText(fsd.texts(fsOwnerChat, "om_cb1"), "written") })
	if b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "cb.txt")); err != nil || string(b) != "via callback\n" {
		t.Errorf("cb.txt = %q, %v; want the approved write", b, err)
	}

	if code, _ := cb.post(msg, time.Now(), fsEncryptKey); code != http.StatusOK {
		t.Errorf("replay = %d; want 200 (already handled)", code)
	}
	sc.stop()
	_, cb = serveFeishuCallbacks(t, r, certFile, keyFile, pool)
	if code, _ := cb.post(msg, time.Now(), fsEncryptKey); code != http.StatusOK {
		t.Errorf("replay after a restart = %d; want 200 (already handled)", code)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("model requests = %d; want 2 (one turn, its event handled once)", n)
	}
}

// TestFeishuCallbackExposure: serve refuses callback mode unless it
// listens with --allow-remote and TLS (or behind a TLS proxy), and says
// how; the twin, with TLS, starts.
func TestFeishuCallbackExposure(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t)
	tests := []struct {
		name string
		o    ServeOptions
		ok   bool
	}{
		{"plain loopback", ServeOptions{}, false},
		{"remote without TLS", ServeOptions{AllowRemote: true}, false},
		{"TLS without allow-remote", ServeOptions{TLSCert: certFile, TLSKey: keyFile}, false},
		{"allow-remote with TLS", ServeOptions{AllowRemote: true, TLSCert: certFile, TLSKey: keyFile}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRuntime(t, "smart")
			feishuCallbackConfig(t, r)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			tt.o.Listener, tt.o.Out, tt.o.Log = ln, io.Discard, io.Discard
			started := make(chan struct{}, 1)
			tt.o.OnListen = func(string, string) { started <- struct{}{} }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- r.Serve(ctx, tt.o) }()
			select {
			case <-started:
				cancel()
				if err := <-done; err != nil || !tt.ok {
					t.Errorf("Serve started (then returned %v); want ok=%v", err, tt.ok)
				}
			case err := <-done:
				if tt.ok || err == nil || !strings.Contains(err.Error(), "--allow-remote") || !strings.Contains(err.Error(), "--tls-cert") ||
					!strings.Contains(err.Error(), "--behind-proxy") {
					t.Errorf("Serve = %v; want ok=%v, a refusal naming --allow-remote with --tls-cert or --behind-proxy", err, tt.ok)
				}
			}
		})
	}
}

// feishuCallbackPath is where the platform table says Feishu calls back.
func feishuCallbackPath() string {
	p, _ := config.PlatformOf("feishu")
	return p.CallbackPath
}
