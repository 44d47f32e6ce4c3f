package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
)

// The child replica of TestReplicaKilledMidTurn: this test binary, run
// with replicaHomeEnv set to a home, opens it and runs one turn in
// session "shared" against the model at replicaModelEnv, which never
// answers; the parent kills it there.
const (
	replicaHomeEnv  = "HOMARD_TEST_REPLICA_HOME"
	replicaModelEnv = "HOMARD_TEST_REPLICA_MODEL"
)

// runReplicaChild is called by TestMain when replicaHomeEnv is set.
func runReplicaChild(home string) {
	paths, err := config.ResolvePaths(home, func(string) string { return "" })
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(2)
	}
	r, err := Open(context.Background(), paths, Options{})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(2)
	}
	r.Config.Model.Provider = "openai"
	r.Config.Model.BaseURL = os.Getenv(replicaModelEnv)
	r.Config.Memory.Capture = "off"
	rt, _, _ := r.TurnRuntime()
	_, err = rt.Turn(context.Background(), channel.TurnRequest{Text: "read notes.md", Session: "shared"})
	os.Stderr.WriteString("the turn returned: " + errString(err))
	os.Exit(3)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestReplicaKilledMidTurn (issue 27): a replica — another process, on
// PostgreSQL another home on the same database — is killed (SIGKILL) in
// the middle of a turn. While it lives, its session is busy for the other
// replica; once it is dead the session is free again (on PostgreSQL a
// lock row of a session that ended counts as free; on SQLite the kernel
// drops the lock file's), and a turn there runs to its end. Without the store's lock the
// busy check fails; with a lock that outlived its process the last fails.
func TestReplicaKilledMidTurn(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv, _ := contentServer(t)
	rs := replicas(t, 2, srv)
	survivor, victim := rs[0], rs[1]
	// The victim's model: the request arrives (the turn holds its
	// session), and no answer ever comes.
	arrived := make(chan struct{}, 1)
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // read: the server then notices the client's end
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer hang.Close()
	defer close(done)

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), replicaHomeEnv+"="+victim.Paths.Home, replicaModelEnv+"="+hang.URL+"/v1")
	out := &lockedBuffer{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	var kill sync.Once
	stop := func() {
		kill.Do(func() {
			child.Process.Kill()
			<-exited
		})
	}
	defer stop()
	select {
	case <-arrived:
	case err := <-exited:
		t.Fatalf("the child replica ended before its turn reached the model: %v\n%s", err, out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the child replica's turn never reached the model\n%s", out.String())
	}

	turn := func() (channel.TurnResult, error) {
		rt, _, _ := survivor.TurnRuntime()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return rt.Turn(ctx, channel.TurnRequest{Text: "read notes.md", Session: "shared"})
	}
	if _, err := turn(); !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("a turn in the session another replica is running = %v; want ErrSessionBusy", err)
	}
	// The twin, while the victim lives: another session runs here.
	rt, _, _ := survivor.TurnRuntime()
	if res, err := rt.Turn(context.Background(), channel.TurnRequest{Text: "read notes.md", Session: "other"}); err != nil || res.Text != "It says hello." {
		t.Fatalf("a turn in another session = %+v, %v", res, err)
	}

	stop() // SIGKILL, mid-turn

	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := turn()
		if err == nil {
			if res.Text != "It says hello." {
				t.Errorf("the turn after the kill answered %q", res.Text)
			}
			break
		}
		if !errors.Is(err, ErrSessionBusy) || time.Now().After(deadline) {
			t.Fatalf("the session 30 s after its replica was killed: %v; want it free and the turn run", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The killed turn stored nothing (a turn is stored in one
	// transaction at its end); the survivor's is the session's one turn.
	msgs, err := survivor.Store.Messages(context.Background(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || msgs[0].Role != "user" || msgs[0].Content != "read notes.md" || msgs[len(msgs)-1].Turn != msgs[0].Turn {
		t.Errorf("session messages after the kill = %+v; want the survivor's one turn", msgs)
	}
}
