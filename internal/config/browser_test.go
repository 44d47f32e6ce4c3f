package config

import (
	"strings"
	"testing"
	"time"
)

// TestBrowserSection: [browser] is off by default with a 10-minute idle
// close and a 4 KB snapshot; what is out of bounds is refused with the
// key, the value and what to write instead.
func TestBrowserSection(t *testing.T) {
	for _, tt := range []struct {
		name, section string
		want          Browser // when ok
		err           []string
	}{
		{"defaults", "", Browser{IdleTimeout: Duration(10 * time.Minute), SnapshotBytes: 4096}, nil},
		{"on", "enabled = true\nchrome_path = \"/usr/bin/chromium\"\nidle_timeout = \"1m\"\nsnapshot_bytes = 65536",
			Browser{Enabled: true, ChromePath: "/usr/bin/chromium", IdleTimeout: Duration(time.Minute), SnapshotBytes: 65536}, nil},
		{"relative program", `chrome_path = "chromium"`, Browser{}, []string{`browser.chrome_path = "chromium": want an absolute path`}},
		{"idle too short", `idle_timeout = "10s"`, Browser{}, []string{`browser.idle_timeout = "10s": want a duration from "1m" to "24h"`}},
		{"snapshot too small", "snapshot_bytes = 100", Browser{}, []string{"browser.snapshot_bytes = 100: want from 1024 to 65536"}},
		{"unknown key", "headless = false", Browser{}, []string{"unknown key browser.headless"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, baseConfig+"\n[browser]\n"+tt.section+"\n"))
			if tt.err != nil {
				if err == nil {
					t.Fatalf("Load with [browser] %q = %+v; want an error", tt.section, c.Browser)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Load with [browser] %q: error\n%s\ndoes not contain %q", tt.section, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load with [browser] %q: %v", tt.section, err)
			}
			if c.Browser != tt.want {
				t.Errorf("Load with [browser] %q = %+v; want %+v", tt.section, c.Browser, tt.want)
			}
		})
	}
}
