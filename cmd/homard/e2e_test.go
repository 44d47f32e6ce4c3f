package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

// End-to-end: the real homard binary, built from this tree, run as a child
// process against a loopback server speaking a provider's wire format.

// buildHomard returns the real homard binary, built from this tree once
// per test process (CGO off, as in a release build) and shared by every
// test that runs it as a child process: building it once per test, with
// different flags, compiled the whole tree twice and pushed a cold first
// run on a busy 2-core machine past Go's package timeout. TestMain removes
// it when the tests end.
func buildHomard(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = "/usr/local/go/bin/go" // where this project's machines install Go
		}
		if binDir, binErr = os.MkdirTemp("", "homard-test-bin-"); binErr != nil {
			return
		}
		bin := filepath.Join(binDir, "homard")
		args := []string{"build", "-o", bin}
		if postgresBuild {
			args = append(args, "-tags", "postgres") // as this test binary: the child opens what the test's homes use
		}
		cmd := exec.Command(goBin, append(args, ".")...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = bin
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

var (
	binOnce sync.Once // guards binPath, binDir and binErr
	binPath string
	binDir  string
	binErr  error
)

// gatedServer answers request i with replies[i], written chunk by chunk.
// When gate[i] is set, it stops after the first chunk that carries text
// until gate[i] is closed: the test then knows whether that text reached
// the child's stdout before the answer ended.
type gatedServer struct {
	*httptest.Server
	replies [][]string
	gates   map[int]chan struct{}

	mu       sync.Mutex // guards requests
	requests []llmtest.Recorded
}

func newGatedServer(t *testing.T, gates map[int]chan struct{}, replies ...[]string) *gatedServer {
	s := &gatedServer{replies: replies, gates: gates}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, llmtest.Recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		if n >= len(s.replies) {
			http.Error(w, `{"error":{"message":"no scripted reply","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		gate := s.gates[n]
		for _, c := range s.replies[n] {
			io.WriteString(w, c)
			w.(http.Flusher).Flush()
			if gate != nil && (strings.Contains(c, `"content":"`) && !strings.Contains(c, `"content":""`) || strings.Contains(c, "text_delta")) {
				select {
				case <-gate:
				case <-r.Context().Done():
					return
				case <-time.After(30 * time.Second):
					t.Errorf("gate of reply %d never opened", n)
				}
				gate = nil
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *gatedServer) Requests() []llmtest.Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llmtest.Recorded(nil), s.requests...)
}

func TestEndToEndBinary(t *testing.T) {
	bin := buildHomard(t)
	type provider struct {
		name, baseSuffix, keyEnv, keyHeader, keyPrefix string
		stream                                         func(llmtest.Turn) []string
	}
	for _, p := range []provider{
		{"openai", "/v1", "OPENAI_API_KEY", "Authorization", "Bearer ", llmtest.OpenAIStream},
		{"anthropic", "", "ANTHROPIC_API_KEY", "X-Api-Key", "", llmtest.AnthropicStream},
	} {
		t.Run(p.name, func(t *testing.T) {
			key := "sk-e2e-" + p.name + "-KEYdo-not-leak-0123456789"
			read := llmtest.Turn{Calls: []llmtest.CallScript{{ID: "call_1", Name: "read_file", Fragments: []string{`{"pa`, `th":"notes.txt"}`}}}}
			answer := llmtest.Turn{Text: []string{"The kettle ", "is blue."}}
			gate := make(chan struct{})
			srv := newGatedServer(t, map[int]chan struct{}{1: gate}, p.stream(read), p.stream(answer))

			home := t.TempDir()
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), p.keyEnv + "=" + key,
				"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir()}
			env = append(env, storeEnv(t, home)...)
			homard := func(args ...string) *exec.Cmd {
				cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
				cmd.Env = env
				return cmd
			}

			out, err := homard("init", "--provider", p.name, "--base-url", srv.URL+p.baseSuffix).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "created ") {
				t.Fatalf("homard init: %v\n%s", err, out)
			}
			captureOff(t, home)
			if err := os.WriteFile(filepath.Join(home, "workspace", "notes.txt"), []byte("the kettle is blue\n"), 0o644); err != nil {
				t.Fatal(err)
			}

			// homard run: read the stdout pipe while the server holds the
			// answer after its first fragment, so the fragment must have
			// been streamed, not printed at the end.
			cmd := homard("run", "What colour is the kettle?")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			pipe, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(pipe)
			first := make([]byte, len("The kettle "))
			if _, err := io.ReadFull(br, first); err != nil || string(first) != "The kettle " {
				close(gate)
				cmd.Wait()
				t.Fatalf("first streamed bytes = %q, %v; stderr %s", first, err, stderr.String())
			}
			close(gate)
			rest, _ := io.ReadAll(br)
			err = cmd.Wait()
			stdout := string(first) + string(rest)
			if err != nil || cmd.ProcessState.ExitCode() != exitOK || stdout != "The kettle is blue.\n" {
				t.Fatalf("homard run = exit %d (%v), stdout %q, stderr %q; want 0 and the answer", cmd.ProcessState.ExitCode(), err, stdout, stderr.String())
			}

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests; want 2", len(reqs))
			}
			for i, rq := range reqs {
				if got := rq.Header.Get(p.keyHeader); got != p.keyPrefix+key {
					t.Errorf("request %d %s header = %q; want the key", i, p.keyHeader, got)
				}
			}
			if !bytes.Contains(reqs[1].Body, []byte("the kettle is blue")) {
				t.Errorf("second request does not carry the file read by the tool:\n%s", reqs[1].Body)
			}

			// The audit chain holds the read, intact.
			out, err = homard("audit", "--json").Output()
			if err != nil {
				t.Fatalf("homard audit: %v", err)
			}
			var rec struct{ Tool, Decision string }
			if err := json.Unmarshal(bytes.TrimSpace(out), &rec); err != nil || rec.Tool != "read_file" || rec.Decision != "ran" {
				t.Fatalf("homard audit --json = %s (%v); want one read_file that ran", out, err)
			}
			if out, err := homard("audit", "--verify").CombinedOutput(); err != nil {
				t.Fatalf("homard audit --verify: %v\n%s", err, out)
			}

			// A usage error exits 2 and the model is not called.
			cmd = homard("run")
			if err := cmd.Run(); cmd.ProcessState.ExitCode() != exitUsage {
				t.Fatalf("homard run without a task = exit %d (%v); want %d", cmd.ProcessState.ExitCode(), err, exitUsage)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Fatalf("%d model requests after a usage error; want still 2", n)
			}

			// The key is nowhere: not in what homard printed, not in any
			// file of the home (config, database, WAL, vault, workspace),
			// not in any row of the store when it is PostgreSQL.
			if strings.Contains(stdout+stderr.String(), key) {
				t.Fatalf("the key appears in homard's output")
			}
			if onPostgres() {
				db := rawStore(t, home, env)
				if tables := pgTablesHolding(t, db, key); len(tables) > 0 {
					t.Errorf("the API key is stored in %v", tables)
				}
				if tables := pgTablesHolding(t, db, "kettle"); len(tables) == 0 {
					t.Errorf("no table holds the stored turn: the key search looked at the wrong store")
				}
			}
			checked, sawDB := 0, false
			err = filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				checked++
				if bytes.Contains(b, []byte(key)) {
					t.Errorf("%s holds the API key", path)
				}
				sawDB = sawDB || strings.HasSuffix(path, ".db")
				if strings.HasSuffix(path, ".db") && !bytes.Contains(b, []byte("kettle")) {
					// Not an error by itself (the turn may still sit in
					// the WAL), but then the WAL must hold it.
					if w, err := os.ReadFile(path + "-wal"); err != nil || !bytes.Contains(w, []byte("kettle")) {
						t.Errorf("neither %s nor its WAL holds the stored turn: the key search looked at the wrong file", path)
					}
				}
				return nil
			})
			if err != nil || checked < 3 || sawDB != !onPostgres() {
				t.Fatalf("walked %d files of the home (%v, database seen: %v); want config, database (SQLite only) and notes at least", checked, err, sawDB)
			}
		})
	}
}

// pgTablesHolding returns the tables of db, a PostgreSQL store, with a
// row whose text holds s, as is or hex-encoded (a bytea column's text).
func pgTablesHolding(t *testing.T, db *sql.DB, s string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil || len(names) == 0 {
		t.Fatalf("list the store's tables: %d, %v", len(names), err)
	}
	var out []string
	for _, n := range names {
		var hits int
		q := `SELECT count(*) FROM "` + strings.ReplaceAll(n, `"`, `""`) + `" AS r WHERE strpos(r::text, $1) > 0 OR strpos(r::text, $2) > 0`
		if err := db.QueryRow(q, s, hex.EncodeToString([]byte(s))).Scan(&hits); err != nil {
			t.Fatalf("search %s: %v", n, err)
		}
		if hits > 0 {
			out = append(out, n)
		}
	}
	return out
}
