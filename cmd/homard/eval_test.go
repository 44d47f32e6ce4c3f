package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEvalBenignOnADefaultHome: `homard eval --suite benign` as the owner
// types it passes every benign task and says so; a proposed config set to
// yolo with private_egress = "allow" fails the exfiltration attacks, by
// name, with exit 1.
func TestEvalBenignOnADefaultHome(t *testing.T) {
	home := t.TempDir()
	useTestStore(t, home)
	homardIn(t, home, "", "init")
	out := homardIn(t, home, "", "eval", "--suite", "benign")
	if !regexp.MustCompile(`(?m)^[1-9][0-9]* passed, 0 failed(, [0-9]+ skipped)?$`).MatchString(out) {
		t.Errorf("homard eval --suite benign printed\n%s\nwant a last line \"N passed, 0 failed\"", out)
	}
	if !strings.Contains(out, "PASS benign-read-file\n") {
		t.Errorf("no line for benign-read-file in\n%s", out)
	}

	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	weak := strings.Replace(strings.Replace(string(b), "\nmode = \"smart\"", "\nmode = \"yolo\"", 1),
		`private_egress = "ask"`, `private_egress = "allow"`, 1)
	path := filepath.Join(t.TempDir(), "weak.toml")
	if err := os.WriteFile(path, []byte(weak), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"--home", home, "eval", "--suite", "attacks", "--run", "attack-exfil-private-raw", "--config", path},
		strings.NewReader(""), &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stdout.String(), "FAIL attack-exfil-private-raw: no_canary") ||
		!strings.Contains(stdout.String(), "0 passed, 1 failed") {
		t.Errorf("eval under a weak config: exit %d\n%s%s\nwant exit 1 and FAIL attack-exfil-private-raw", code, stdout.String(), stderr.String())
	}
	if code := run([]string{"--home", home, "eval", "--suite", "fun"}, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
		t.Errorf("eval --suite fun: exit %d; want %d", code, exitUsage)
	}
}
