package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// Telegram end to end (issue 13, "How it is checked"): the real binary
// runs `homard serve` as a child process with [channels.telegram] pointed
// at a fake Bot API server (telegramtest) and its model at a fake
// OpenAI-compatible server, both on loopback in this test process. The
// bot token is stored with `homard secret set telegram --channel
// telegram`. Nothing here waits a fixed time: every wait is for a state
// the fakes or the database show, with a generous deadline that only
// stops a hang.

// tgDeadline bounds every wait; reaching it means homard hung.
const tgDeadline = 90 * time.Second

// Accounts the tests use.
var (
	tgOwner    = telegramtest.User{ID: 4242, FirstName: "Ada", Username: "ada_owner"}
	tgStranger = telegramtest.User{ID: 6666, FirstName: "Mallory", Username: "mallory_x"}
	tgGuest    = telegramtest.User{ID: 7777, FirstName: "Gus", Username: "gus_guest"}
)

// syncBuffer is a bytes.Buffer safe for a child's writes and the test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tgRig is one homard home with the Telegram channel enabled, its fakes,
// and the `homard serve` child when running.
type tgRig struct {
	t     *testing.T
	bin   string
	home  string
	env   []string
	tg    *telegramtest.Server
	model *tgModel

	serve     *exec.Cmd
	serveLog  *syncBuffer
	serveDone chan struct{}
	logs      []string // logs of earlier serve processes
}

// newTgRig builds the binary and a home in smart mode whose model and
// Telegram API are the fakes, with the bot token in the vault. Slow: it
// is skipped with -short.
func newTgRig(t *testing.T) *tgRig {
	t.Helper()
	if testing.Short() {
		t.Skip("runs homard serve against a fake Telegram; skipped with -short")
	}
	rig := &tgRig{t: t, bin: buildHomard(t), home: t.TempDir(), model: newTgModel(t)}
	rig.tg = telegramtest.New(telegramtest.Options{})
	t.Cleanup(rig.tg.Close)
	rig.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"XDG_DATA_HOME=" + t.TempDir(), "OPENAI_API_KEY=sk-test-TGE2E0123456789abcdef"}
	rig.env = append(rig.env, storeEnv(t, rig.home)...)
	rig.run("", "init", "--mode", "smart", "--base-url", rig.model.URL+"/v1")
	captureOff(t, rig.home)
	cfg := filepath.Join(rig.home, "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, fmt.Sprintf("\n[channels.telegram]\nenabled = true\ntoken_secret = \"telegram\"\napi_base = %q\n", rig.tg.URL)...)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rig.run(rig.tg.Token(), "secret", "set", "telegram", "--channel", "telegram")
	t.Cleanup(func() {
		rig.stop()
		if t.Failed() {
			for i, l := range append(rig.logs, rig.serveLogText()) {
				t.Logf("homard serve #%d log:\n%s", i+1, l)
			}
			rig.dumpState()
		}
	})
	return rig
}

// cmd is a homard command in the rig's home.
func (r *tgRig) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(r.bin, append([]string{"--home", r.home}, args...)...)
	cmd.Env = r.env
	return cmd
}

// run runs a homard command with stdin to its end; it must exit 0.
func (r *tgRig) run(stdin string, args ...string) string {
	r.t.Helper()
	cmd := r.cmd(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := runBounded(cmd)
	if err != nil {
		r.t.Fatalf("homard %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// runBounded runs cmd and returns its stdout; a command that outlives
// tgDeadline is killed (homard hung).
func runBounded(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(tgDeadline):
		cmd.Process.Kill()
		<-done
		return out.Bytes(), fmt.Errorf("hung for %s and was killed", tgDeadline)
	}
}

// start runs `homard serve` and waits until it listens.
func (r *tgRig) start() {
	r.t.Helper()
	if r.serve != nil {
		r.t.Fatal("serve is already running")
	}
	cmd := r.cmd("serve", "--addr", "127.0.0.1:0", "--log-format", "json", "--grace", "1s")
	r.serveLog = &syncBuffer{}
	cmd.Stderr = r.serveLog
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.serve, r.serveDone = cmd, make(chan struct{})
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "listening on") {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
		cmd.Wait()
		close(r.serveDone)
	}()
	select {
	case ok := <-listening:
		if !ok {
			r.t.Fatalf("homard serve ended before it listened:\n%s", r.serveLogText())
		}
	case <-time.After(tgDeadline):
		r.t.Fatalf("homard serve did not listen within %s:\n%s", tgDeadline, r.serveLogText())
	}
}

func (r *tgRig) serveLogText() string {
	if r.serveLog == nil {
		return ""
	}
	return r.serveLog.String()
}

// kill ends serve with SIGKILL: a crash.
func (r *tgRig) kill() { r.end(syscall.SIGKILL) }

// stop ends serve with SIGTERM, as a service manager does.
func (r *tgRig) stop() { r.end(syscall.SIGTERM) }

func (r *tgRig) end(sig syscall.Signal) {
	if r.serve == nil {
		return
	}
	r.serve.Process.Signal(sig)
	select {
	case <-r.serveDone:
	case <-time.After(tgDeadline):
		r.serve.Process.Kill()
		<-r.serveDone
		r.t.Errorf("homard serve did not stop on %v", sig)
	}
	r.logs = append(r.logs, r.serveLogText())
	r.serve, r.serveLog = nil, nil
}

// waitUntil polls cond until it holds; reaching tgDeadline fails the test.
func (r *tgRig) waitUntil(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(tgDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("waited %s for %s; homard serve log:\n%s", tgDeadline, what, r.serveLogText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// messages waits until the bot sent at least n messages to chat.
func (r *tgRig) messages(chat int64, n int) []telegramtest.SentMessage {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tgDeadline)
	defer cancel()
	got, err := r.tg.WaitMessages(ctx, chat, n)
	if err != nil {
		r.t.Fatalf("waited for %d messages to chat %d, got %d: %+v; homard serve log:\n%s", n, chat, len(got), got, r.serveLogText())
	}
	return got
}

// texts are the texts the bot sent to chat.
func (r *tgRig) texts(chat int64) []string {
	var out []string
	for _, m := range r.tg.Messages(chat) {
		out = append(out, m.Text)
	}
	return out
}

// countText counts the messages to chat whose text contains s.
func (r *tgRig) countText(chat int64, s string) int {
	n := 0
	for _, text := range r.texts(chat) {
		if strings.Contains(text, s) {
			n++
		}
	}
	return n
}

// db opens the home's database, to read it; the caller closes it.
func (r *tgRig) db() *sql.DB {
	r.t.Helper()
	return rawStore(r.t, r.home, r.env)
}

// inboxState is the state of the delivery with update id u ("" when it
// was never saved).
func (r *tgRig) inboxState(u int64) string {
	r.t.Helper()
	db := r.db()
	defer db.Close()
	var state string
	err := db.QueryRow(`SELECT state FROM chat_inbox WHERE platform = 'telegram' AND delivery_id = ?`, strconv.FormatInt(u, 10)).Scan(&state)
	if err == sql.ErrNoRows {
		return ""
	}
	if err != nil {
		r.t.Fatalf("read chat_inbox: %v", err)
	}
	return state
}

// settled waits until the delivery with update id u is handled or
// ignored, and returns which.
func (r *tgRig) settled(u int64) string {
	r.t.Helper()
	var state string
	r.waitUntil(fmt.Sprintf("update %d to be handled or ignored", u), func() bool {
		state = r.inboxState(u)
		return state == "handled" || state == "ignored" || state == "interrupted"
	})
	return state
}

// audit returns the audit records, oldest first.
func (r *tgRig) audit() []tgAuditRecord {
	r.t.Helper()
	out := r.run("", "audit", "--json", "--limit", "1000")
	var recs []tgAuditRecord
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec tgAuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			r.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		recs = append(recs, rec)
	}
	return recs
}

type tgAuditRecord struct {
	Tool, Decision, Rule, Reason, Args, Owner string
	ApprovalID                                string `json:"approval_id"`
}

// auditWith returns the records whose rule (or tool) is name.
func (r *tgRig) auditWith(name string) []tgAuditRecord {
	var out []tgAuditRecord
	for _, rec := range r.audit() {
		if rec.Rule == name || rec.Tool == name {
			out = append(out, rec)
		}
	}
	return out
}

// channelOwners is the owner count `homard channel list --json` shows for
// telegram.
func (r *tgRig) channelOwners() int {
	r.t.Helper()
	var list []struct {
		Channel string
		Owners  int
		State   string
	}
	out := r.run("", "channel", "list", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		r.t.Fatalf("homard channel list --json = %s: %v", out, err)
	}
	for _, c := range list {
		if c.Channel == "telegram" {
			return c.Owners
		}
	}
	r.t.Fatalf("homard channel list --json has no telegram: %s", out)
	return 0
}

// dumpState logs the inbox, the outbox and the fake's calls, for a
// failing test.
func (r *tgRig) dumpState() {
	db := r.db()
	defer db.Close()
	for _, q := range []string{
		`SELECT id, delivery_id, kind, chat_id, sender_id, state, note FROM chat_inbox ORDER BY id`,
		`SELECT id, chat_id, state, attempts, message_id, substr(text, 1, 60) FROM chat_outbox ORDER BY id`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			r.t.Logf("%s: %v", q, err)
			continue
		}
		cols, _ := rows.Columns()
		var b strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
		r.t.Logf("%s:\n%s", q, b.String())
	}
	var b strings.Builder
	for _, c := range r.tg.Calls() {
		if c.Method != "getUpdates" {
			fmt.Fprintf(&b, "%s %s\n", c.Method, c.Body)
		}
	}
	r.t.Logf("Telegram calls (but getUpdates):\n%s", b.String())
}
