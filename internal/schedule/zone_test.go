package schedule

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestLoadZone(t *testing.T) {
	for _, name := range []string{"Europe/Paris", "America/New_York", "Asia/Shanghai", "UTC", "Australia/Lord_Howe"} {
		loc, err := LoadZone(name)
		if err != nil || loc.String() != name {
			t.Errorf("LoadZone(%q) = %v, %v; want the zone", name, loc, err)
		}
	}
	for _, name := range []string{"", "Local", "local", "Mars/Olympus_Mons", "../../etc/passwd", "Europe/"} {
		if loc, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) = %v; want an error", name, loc)
		} else if !strings.Contains(err.Error(), "Europe/Paris") {
			t.Errorf("LoadZone(%q) error %q; want it to name an example zone", name, err)
		}
	}
	if _, err := Cron("0 9 * * *", nil); err == nil || !strings.Contains(err.Error(), "--tz") {
		t.Errorf("Cron(nil zone) error = %v; want one asking for --tz", err)
	}
}

// zoneDirs are where the standard library looks for zone files on Unix.
var zoneDirs = []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"}

const zoneChildEnv = "HOMARD_SCHEDULE_ZONE_CHILD"

// TestZoneDataEmbedded proves LoadZone works on a machine without zone
// files: it re-runs this test binary in a mount namespace (bwrap) where
// every system zone directory is an empty tmpfs, and ZONEINFO and GOROOT
// name empty directories. The child also checks the files are really gone, so
// the test cannot pass by finding them.
func TestZoneDataEmbedded(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bwrap is needed to hide the system zone files; install bubblewrap")
		}
		t.Skip("bwrap not installed")
	}
	args := []string{"--dev-bind", "/", "/"}
	for _, d := range zoneDirs {
		if _, err := os.Stat(d); err == nil {
			args = append(args, "--tmpfs", d)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "--", exe, "-test.run=^TestZoneChild$", "-test.v")
	cmd := exec.Command(bwrap, args...)
	// GOROOT too: the standard library falls back to $GOROOT/lib/time/zoneinfo.zip.
	cmd.Env = append(os.Environ(), zoneChildEnv+"=1", "ZONEINFO="+t.TempDir(), "GOROOT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestZoneChild") {
		t.Fatalf("child without zone files failed: %v\n%s", err, out)
	}
}

// TestZoneChild is the child of TestZoneDataEmbedded; run alone it only
// checks that zones load (the twin: with the system files present).
func TestZoneChild(t *testing.T) {
	if os.Getenv(zoneChildEnv) != "" {
		if _, err := os.Stat("/usr/share/zoneinfo/Europe/Paris"); err == nil {
			t.Fatal("the system zone files are still visible; the test would prove nothing")
		}
	}
	paris, err := LoadZone("Europe/Paris")
	if err != nil {
		t.Fatalf("LoadZone(Europe/Paris) without zone files: %v", err)
	}
	got, ok := Next(mustCron(t, "30 2 * * *", paris), time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC))
	if want := time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC); !ok || !got.Equal(want) {
		t.Errorf("Next(02:30 Paris) = %s; want %s (the embedded rules know the spring-forward)", got, want)
	}
}

func mustCron(t *testing.T, expr string, loc *time.Location) Spec {
	t.Helper()
	s, err := Cron(expr, loc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
