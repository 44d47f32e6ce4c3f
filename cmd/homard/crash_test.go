package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to read the tool runs table as it is on disk
)

// TestCrashKill9DuringWrites runs the real binary doing write_file through
// `homard tool call` and kills it with SIGKILL after a random delay, 20
// times; then homard starts again (doctor) and the test checks what a
// crash must never leave: a file content no audit record accounts for, a
// checkpoint without its content, a run still "running", a broken chain.
func TestCrashKill9DuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills 20 runs; skipped with -short (the quick command), never in the full suite")
	}
	bin := buildHomard(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir()}
	env = append(env, storeEnv(t, home)...)
	homard := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
		cmd.Env = env
		return cmd
	}
	if out, err := homard("init", "--mode", "yolo").CombinedOutput(); err != nil {
		t.Fatalf("homard init: %v\n%s", err, out)
	}
	doc := filepath.Join(home, "workspace", "doc.txt")
	if err := os.WriteFile(doc, []byte("version 0|"), 0o644); err != nil {
		t.Fatal(err)
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	padding := strings.Repeat("x", 96<<10) // a write that takes a moment (one argv string is capped at 128 KiB)
	call := func(i int) *exec.Cmd {
		args, _ := json.Marshal(map[string]string{"path": "doc.txt", "content": fmt.Sprintf("version %d|", i) + padding})
		return homard("tool", "call", "write_file", string(args))
	}
	// One whole call first: the kills below fall in its second half,
	// where the write happens (the first half is the process starting).
	start := time.Now()
	if out, err := call(1).CombinedOutput(); err != nil {
		t.Fatalf("write_file: %v\n%s", err, out)
	}
	whole := time.Since(start)
	for i := 2; i <= 21; i++ {
		cmd := call(i)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(whole/3 + time.Duration(rng.Int64N(int64(whole))))
		cmd.Process.Signal(syscall.SIGKILL) // may have exited already
		cmd.Wait()
	}

	// The next start recovers; doctor reports what it did.
	out, _ := homard("doctor", "--offline").CombinedOutput()
	t.Logf("doctor after the crashes:\n%s", out)
	if out, err := homard("audit", "--verify").CombinedOutput(); err != nil {
		t.Fatalf("homard audit --verify after the crashes: %v\n%s", err, out)
	}

	// Which versions have an audit record (ran, or interrupted).
	out, err := homard("audit", "--json", "--limit", "1000").Output()
	if err != nil {
		t.Fatalf("homard audit --json: %v", err)
	}
	audited := map[string]string{} // "version N|" → decision/rule
	version := regexp.MustCompile(`version \d+\|`)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct{ Tool, Decision, Rule, Args string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if v := version.FindString(rec.Args); rec.Tool == "write_file" && v != "" {
			audited[v] = rec.Decision + " " + rec.Rule
		}
	}
	t.Logf("audited writes: %v", audited)

	// Every content that ever landed in doc.txt — its content now and the
	// old contents its checkpoints hold — was written by an audited call.
	landed := func(content []byte, where string) {
		v := version.Find(content)
		if v == nil {
			t.Errorf("%s holds %.40q, not one of the versions written", where, content)
			return
		}
		if string(v) != "version 0|" && audited[string(v)] == "" {
			t.Errorf("%s holds %q, but no audit record accounts for that write", where, v)
		}
	}
	now, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	landed(now, "doc.txt")
	cpDir := filepath.Join(home, "data", "checkpoints")
	metas, _ := filepath.Glob(filepath.Join(cpDir, "*.json"))
	for _, m := range metas {
		// A file tool's write is a change set (the one gate): its
		// checkpoint keeps the old content in <id>.changes/. A file
		// checkpoint keeps it in <id>.blob.
		saved, _ := filepath.Glob(strings.TrimSuffix(m, ".json") + ".changes/*")
		if blob := strings.TrimSuffix(m, ".json") + ".blob"; len(saved) == 0 {
			saved = []string{blob}
		}
		for _, f := range saved {
			if filepath.Base(f) == ".lock" {
				continue
			}
			content, err := os.ReadFile(f)
			if err != nil {
				t.Errorf("checkpoint %s has no content: %v", filepath.Base(m), err)
				continue
			}
			landed(content, "checkpoint "+filepath.Base(m)+" "+filepath.Base(f))
		}
	}
	t.Logf("%d checkpoints", len(metas))

	var running int
	if err := rawStore(t, home, env).QueryRow(`SELECT count(*) FROM tool_runs WHERE status = 'running'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if running != 0 {
		t.Errorf("%d tool runs are still 'running' after the next start; want them marked interrupted", running)
	}
	// A write after the crashes works: nothing is held.
	args, _ := json.Marshal(map[string]string{"path": "doc.txt", "content": "after|"})
	if out, err := homard("tool", "call", "write_file", string(args)).CombinedOutput(); err != nil || !strings.Contains(string(out), `"decision": "ran"`) {
		t.Errorf("write after the crashes: %v\n%s", err, out)
	}
}
