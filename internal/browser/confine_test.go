package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestConfinedAsRoot: where homard runs as root (CI does), Chromium runs
// inside homard's bwrap: in Chromium's mount namespace a hidden folder is
// an empty tmpfs and its profile is bound writable, and it is user 1000
// in its own user namespace (so its own sandbox starts, nested). The
// twin: the page still loads and the profile is written. Not root: the
// mode says Chromium's own sandbox, with no bwrap.
func TestConfinedAsRoot(t *testing.T) {
	s, _ := fixture(t)
	dir := t.TempDir()
	hidden := filepath.Join(dir, "homard-data")
	if err := os.MkdirAll(hidden, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hidden, "vault.key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(hidden, "browser", "profile")
	b, err := New(Options{ChromePath: chromiumPath(), ProfileDir: profile, DownloadDir: filepath.Join(hidden, "browser", "downloads"),
		Egress: s.client, Hide: []string{hidden}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !runningAsRoot() {
		if mode := b.SandboxMode(); mode != "chromium's own sandbox" {
			t.Errorf("SandboxMode = %q; want Chromium's own sandbox", mode)
		}
		t.Skip("not root: Chromium confines itself")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed; under CI Chromium must run inside homard's bwrap")
		}
		t.Skip("bubblewrap is not installed")
	}
	if mode := b.SandboxMode(); !strings.Contains(mode, "inside homard's bwrap") {
		t.Errorf("SandboxMode = %q; want inside homard's bwrap", mode)
	}
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/form")); err != nil {
		t.Fatalf("the page does not load inside the bwrap: %v", err)
	}
	pid := chromiumIn(t, b.PID())
	mounts, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var hiddenFS, profileMounted bool
	for _, l := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		switch f[4] {
		case hidden:
			hiddenFS = strings.Contains(l, " - tmpfs ")
		case profile:
			profileMounted = true
		}
	}
	if !hiddenFS || !profileMounted {
		t.Errorf("in Chromium's mount namespace: %s a tmpfs %v, its profile bound %v; want both", hidden, hiddenFS, profileMounted)
	}
	uidMap, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/uid_map")
	if f := strings.Fields(string(uidMap)); len(f) < 1 || f[0] != sandboxUID {
		t.Errorf("Chromium's uid map %q; want it user %s in its own user namespace", uidMap, sandboxUID)
	}
	if entries, err := os.ReadDir(profile); err != nil || len(entries) == 0 {
		t.Errorf("the profile holds %d entries (%v); want Chromium to have written it", len(entries), err)
	}
}

// chromiumIn finds a Chromium process in the process group of pid (the
// bwrap homard started).
func chromiumIn(t *testing.T, pgid int) int {
	t.Helper()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == pgid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		f := strings.Fields(rest) // state ppid pgrp ...
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + p.Name() + "/comm"); strings.HasPrefix(string(comm), "chrom") {
			return pid
		}
	}
	t.Fatalf("no Chromium process in the group of %d", pgid)
	return 0
}
