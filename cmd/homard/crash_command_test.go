package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// makeScript is the workspace's own program that the test runs through
// run_command (a program inside a root runs as code, on an overlay, and
// autopilot applies its change set when it grades ≤ medium). Generation g
// overwrites the 30 files of w/, deletes the batch-* folder an earlier
// generation made (10 files) and makes batch-g with 10 new files: from
// the second generation on, one call is 11 creates, 30 overwrites and 11
// deletes, each file a little over 8 KiB.
const makeScript = `#!/bin/sh
set -e
g=$1
mkdir -p w
rm -rf batch-*
mkdir batch-$g
i=0
while [ $i -lt 30 ]; do { echo "gen $g file $i"; cat pad.bin; } > w/f$i.txt; i=$((i+1)); done
i=0
while [ $i -lt 10 ]; do { echo "gen $g new $i"; cat pad.bin; } > batch-$g/n$i.txt; i=$((i+1)); done
`

// TestCrashKill9DuringCommand runs the real binary doing run_command in
// autopilot — a workspace script that creates, overwrites and deletes a
// few dozen files — and kills it with SIGKILL 30 times: a third at a
// random point of the whole call, a third at a random point after its
// change set's checkpoint folder appears (the apply phase), a third just
// after its journal says "applied" (before the audit record is written).
// After each kill homard starts again (doctor) and the test checks that
// the workspace holds exactly the tree before the call or exactly the
// tree after it — never a mix, no stray temp file — that an applied call
// has an audit record listing every path it changed and naming a
// checkpoint that exists, that no record claims a change the tree does
// not hold, that every checkpoint has its journal and saved content, that
// no run is left "running", and that the audit chain verifies. The
// workspace and the checkpoints are in homard's default layout (both
// under --home, one filesystem).
func TestCrashKill9DuringCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 30 command runs; skipped with -short (the quick command), never in the full suite")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bwrap is not installed; the SIGKILL test of run_command needs it in CI (.ci/run installs it)")
		}
		t.Skip("bwrap is not installed (set CI=1 to make this fatal)")
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
	if out, err := homard("init", "--mode", "autopilot").CombinedOutput(); err != nil {
		t.Fatalf("homard init: %v\n%s", err, out)
	}
	ws := filepath.Join(home, "workspace")
	cpDir := filepath.Join(home, "data", "checkpoints")
	script := filepath.Join(ws, "make.sh")
	if err := os.WriteFile(script, []byte(makeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "pad.bin"), bytes.Repeat([]byte("x"), 8<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(g int) *exec.Cmd {
		args, _ := json.Marshal(map[string]any{"program": script, "args": []string{fmt.Sprint(g)}})
		return homard("tool", "call", "run_command", string(args))
	}

	// One whole call first, to measure it; its tree is the model of every
	// generation's (generation g is generation 1 with g for 1).
	start := time.Now()
	if out, err := call(1).CombinedOutput(); err != nil || !strings.Contains(string(out), "applied 42 created") {
		t.Fatalf("run_command make.sh 1: %v\n%s", err, out)
	}
	whole := time.Since(start)
	gen1 := snapshot(t, ws)
	after := func(g int) map[string]string {
		out := map[string]string{}
		for rel, v := range gen1 {
			if rest, ok := strings.CutPrefix(rel, "batch-1"); ok {
				rel = fmt.Sprintf("batch-%d%s", g, rest)
			}
			out[rel] = strings.Replace(v, "\ngen 1 ", fmt.Sprintf("\ngen %d ", g), 1)
		}
		return out
	}
	if d := treeDiff(after(1), gen1); d != "" {
		t.Fatalf("the model of a generation is wrong: %s", d)
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d; one call takes %s", seed, whole)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	before := gen1
	applied := []int{1}
	var outcomes []string
	for g := 2; g <= 31; g++ {
		known := changeSets(t, cpDir)
		cmd := call(g) // no stdout: a lingering sandbox child cannot hold Wait
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		var when string
		switch g % 3 {
		case 0: // anywhere in the call
			when = "during the call"
			sleepOrExit(exited, time.Duration(rng.Int64N(int64(whole+whole/5))))
		case 1: // while its change set is being applied
			when = "while applying"
			if waitFor(exited, func() bool { return newChangeSet(cpDir, known, "") }) {
				sleepOrExit(exited, time.Duration(rng.Int64N(int64(whole/5))))
			}
		case 2: // after the journal says applied, before the audit record
			when = "after the journal said applied"
			if waitFor(exited, func() bool { return newChangeSet(cpDir, known, "applied") }) {
				sleepOrExit(exited, time.Duration(rng.Int64N(int64(time.Millisecond))))
			}
		}
		cmd.Process.Signal(syscall.SIGKILL) // may have exited already
		<-exited

		// No process of the killed run outlives it (the sandbox dies with
		// its parent); a bounded wait, as the kernel reaps them.
		if pids := outliving(script, 10*time.Second); len(pids) > 0 {
			t.Errorf("generation %d, killed %s: processes of the run outlived it: %v\n%s", g, when, pids, procStatus(pids))
		}
		// The next start recovers.
		doctor, _ := homard("doctor", "--offline").CombinedOutput()
		changes := doctorLine(string(doctor), "changes")
		rolledBack := strings.Contains(changes, "rolled back")
		if strings.HasPrefix(changes, "FAIL") || strings.Contains(changes, "could not be fully") {
			t.Errorf("generation %d, killed %s: doctor says %q; want a clean recovery", g, when, changes)
		}
		now := snapshot(t, ws)
		var outcome string
		switch {
		case treeDiff(before, now) == "":
			outcome = "nothing applied"
			if rolledBack {
				outcome = "rolled back at the next start"
			}
		case treeDiff(after(g), now) == "" && !rolledBack:
			outcome = "applied"
			applied = append(applied, g)
		default:
			t.Fatalf("generation %d, killed %s: the tree is neither the one before nor the one after the call\nnot as before: %s\nnot as after: %s\ndoctor:\n%s",
				g, when, treeDiff(before, now), treeDiff(after(g), now), doctor)
		}
		records := checkCommandAudit(t, homard, g, outcome == "applied", before, now, cpDir)
		if outcome == "applied" && !strings.Contains(changes, "no change set was left half-applied") {
			t.Errorf("generation %d applied, but doctor's changes line says %q", g, changes)
		}
		checkChangeCheckpoints(t, cpDir, len(applied))
		checkNoRunning(t, rawStore(t, home, env))
		if out, err := homard("audit", "--verify").CombinedOutput(); err != nil {
			t.Fatalf("generation %d: homard audit --verify after the crash: %v\n%s", g, err, out)
		}
		if t.Failed() {
			t.Fatalf("generation %d, killed %s (%s); doctor:\n%s", g, when, outcome, doctor)
		}
		outcomes = append(outcomes, fmt.Sprintf("%d killed %s: %s; audit %v", g, when, outcome, records))
		before = now
	}
	t.Logf("outcomes:\n%s", strings.Join(outcomes, "\n"))

	// A command after the crashes works: nothing is held.
	if out, err := call(100).CombinedOutput(); err != nil || !strings.Contains(string(out), "applied 11 created, 30 modified, 11 deleted") {
		t.Errorf("run_command after the crashes: %v\n%s", err, out)
	}
}

// doctorLine returns doctor's first line about check name ("" if none).
func doctorLine(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == name {
			return l
		}
	}
	return ""
}

// outliving lists the processes whose command line names script, waiting
// up to limit for them to go.
func outliving(script string, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		var pids []string
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(script)) {
				pids = append(pids, strings.Split(p, "/")[2])
			}
		}
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sleepOrExit waits d or until the process exits.
func sleepOrExit(exited <-chan struct{}, d time.Duration) {
	select {
	case <-exited:
	case <-time.After(d):
	}
}

// waitFor polls cond until it holds (true), or the process exits or a
// minute passes (false: the kill then falls wherever the call is).
func waitFor(exited <-chan struct{}, cond func() bool) bool {
	deadline := time.After(time.Minute)
	for {
		if cond() {
			return true
		}
		select {
		case <-exited:
			return false
		case <-deadline:
			return false
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// changeSets lists the ids of the change-set folders in the checkpoint dir.
func changeSets(t *testing.T, cpDir string) map[string]bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(cpDir, "*.changes"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, n := range names {
		ids[strings.TrimSuffix(filepath.Base(n), ".changes")] = true
	}
	return ids
}

// newChangeSet reports a change set not in known, whose journal is in
// state (any state, or no journal yet, when state is "").
func newChangeSet(cpDir string, known map[string]bool, state string) bool {
	names, _ := filepath.Glob(filepath.Join(cpDir, "*.changes"))
	for _, n := range names {
		id := strings.TrimSuffix(filepath.Base(n), ".changes")
		if known[id] {
			continue
		}
		if state == "" {
			return true
		}
		var j struct{ State string }
		if b, err := os.ReadFile(filepath.Join(cpDir, id+".journal")); err == nil && json.Unmarshal(b, &j) == nil && j.State == state {
			return true
		}
	}
	return false
}

// snapshot maps every path under dir to its kind, mode and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel] = fmt.Sprintf("folder %v", fi.Mode().Perm())
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v\n%s", fi.Mode().Perm(), b)
		default:
			out[rel] = fmt.Sprintf("%v", fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// treeDiff names the paths where got differs from want ("" when none).
func treeDiff(want, got map[string]string) string {
	var d []string
	for rel, w := range want {
		if g, ok := got[rel]; !ok {
			d = append(d, "missing "+rel)
		} else if g != w {
			d = append(d, fmt.Sprintf("%s holds %.40q, want %.40q", rel, g, w))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			d = append(d, "extra "+rel)
		}
	}
	slices.Sort(d)
	if len(d) > 12 {
		d = append(d[:12], fmt.Sprintf("… and %d more", len(d)-12))
	}
	return strings.Join(d, "; ")
}

// checkCommandAudit checks generation g's audit records: if the call was
// applied, one of them lists every path that changed and names a
// checkpoint that exists; if not, none claims it was applied. It returns
// the records' decisions and rules.
func checkCommandAudit(t *testing.T, homard func(...string) *exec.Cmd, g int, applied bool, before, now map[string]string, cpDir string) (records []string) {
	t.Helper()
	out, err := homard("audit", "--json", "--limit", "1000").Output()
	if err != nil {
		t.Fatalf("homard audit --json: %v", err)
	}
	marker := fmt.Sprintf(`"args":["%d"]`, g)
	var mine []string
	claimed := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct{ Tool, Decision, Rule, Args, Effects string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if rec.Tool != "run_command" || !strings.Contains(rec.Args, marker) {
			continue
		}
		mine = append(mine, rec.Decision+" "+rec.Rule)
		if id, ok := strings.CutPrefix(rec.Effects, "applied as checkpoint "); ok {
			id, _, _ = strings.Cut(id, ":")
			claimed = id
			for rel := range changedPaths(before, now) {
				if !strings.Contains(rec.Effects, fmt.Sprintf("%q", filepath.ToSlash(rel))) {
					t.Errorf("generation %d: the audit record of the applied call does not list %q:\n%s", g, rel, rec.Effects)
				}
			}
		}
	}
	switch {
	case applied && claimed == "":
		t.Errorf("generation %d was applied, but no audit record lists its changes (its records: %v)", g, mine)
	case !applied && claimed != "":
		t.Errorf("generation %d: an audit record says it was applied as checkpoint %s, but the tree is as before", g, claimed)
	case claimed != "":
		if _, err := os.Stat(filepath.Join(cpDir, claimed+".json")); err != nil {
			t.Errorf("generation %d: the audit names checkpoint %s, which is not there: %v", g, claimed, err)
		}
	}
	return mine
}

// changedPaths lists the paths whose entry differs between a and b.
func changedPaths(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for rel, v := range a {
		if b[rel] != v {
			out[rel] = true
		}
	}
	for rel, v := range b {
		if a[rel] != v {
			out[rel] = true
		}
	}
	return out
}

// checkChangeCheckpoints checks that the checkpoint dir holds exactly
// want change sets, each listed (<id>.json), with a journal that says
// applied and every old content its steps saved, hash for hash.
func checkChangeCheckpoints(t *testing.T, cpDir string, want int) {
	t.Helper()
	sets := changeSets(t, cpDir)
	if len(sets) != want {
		t.Errorf("%d change sets in the checkpoint dir; want %d, one per applied call", len(sets), want)
	}
	for id := range sets {
		if _, err := os.Stat(filepath.Join(cpDir, id+".json")); err != nil {
			t.Errorf("change set %s is not listed as a checkpoint: %v", id, err)
		}
		b, err := os.ReadFile(filepath.Join(cpDir, id+".journal"))
		if err != nil {
			t.Errorf("checkpoint %s has no journal: %v", id, err)
			continue
		}
		var j struct {
			State string
			Steps []struct {
				Rel       string
				Saved     string
				OldSHA256 string `json:"old_sha256"`
			}
		}
		if err := json.Unmarshal(b, &j); err != nil {
			t.Errorf("checkpoint %s: journal: %v", id, err)
			continue
		}
		if j.State != "applied" {
			t.Errorf("checkpoint %s: journal state %q after the next start; want applied", id, j.State)
		}
		for _, s := range j.Steps {
			if s.Saved == "" {
				continue
			}
			content, err := os.ReadFile(filepath.Join(cpDir, id+".changes", s.Saved))
			if err != nil {
				t.Errorf("checkpoint %s: the old content of %s is missing: %v", id, s.Rel, err)
				continue
			}
			if sum := sha256.Sum256(content); hex.EncodeToString(sum[:]) != s.OldSHA256 {
				t.Errorf("checkpoint %s: the old content of %s does not match its hash", id, s.Rel)
			}
		}
	}
}

// checkNoRunning checks that no tool run in db is left "running"; it
// closes db.
func checkNoRunning(t *testing.T, db *sql.DB) {
	t.Helper()
	defer db.Close()
	var running int
	if err := db.QueryRow(`SELECT count(*) FROM tool_runs WHERE status = 'running'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if running != 0 {
		t.Errorf("%d tool runs are still 'running' after the next start; want them marked interrupted", running)
	}
}

// procStatus shows what the kernel says of each pid (for a failure).
func procStatus(pids []string) string {
	var b strings.Builder
	for _, pid := range pids {
		st, _ := os.ReadFile("/proc/" + pid + "/status")
		cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		fmt.Fprintf(&b, "pid %s: %q\n", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		for _, line := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(line, "State:") || strings.HasPrefix(line, "PPid:") || strings.HasPrefix(line, "TracerPid:") || strings.HasPrefix(line, "NSpid:") || strings.HasPrefix(line, "SigBlk:") || strings.HasPrefix(line, "SigPnd:") || strings.HasPrefix(line, "ShdPnd:") {
				b.WriteString("  " + line + "\n")
			}
		}
	}
	return b.String()
}
