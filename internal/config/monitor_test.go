package config

import (
	"strings"
	"testing"
	"time"
)

func TestMonitorDefaults(t *testing.T) {
	c, err := Load(writeConfig(t, baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Monitor
	if !m.On() || m.Window.Std() != 10*time.Minute || m.DeniedRepeat != 3 || m.FetchBurst != 3 || m.WriteSpread != 5 {
		t.Errorf("Load without [monitor] = %+v (on %v); want on, 10m, 3, 3, 5", m, m.On())
	}
	if !(Monitor{}).On() {
		t.Error("Monitor{}.On() = false; a missing enabled means true")
	}
}

func TestMonitorSection(t *testing.T) {
	for _, tt := range []struct {
		name, section string
		want          Monitor // when ok
		err           []string
	}{
		{"off", "enabled = false", Monitor{Enabled: ptrTo(false), Window: Duration(10 * time.Minute), DeniedRepeat: 3, FetchBurst: 3, WriteSpread: 5}, nil},
		{"a rule off, the others kept", "fetch_burst = 0\nwindow = \"1h\"",
			Monitor{Enabled: ptrTo(true), Window: Duration(time.Hour), DeniedRepeat: 3, FetchBurst: 0, WriteSpread: 5}, nil},
		{"bounds", "window = \"1m\"\ndenied_repeat = 1\nwrite_spread = 256",
			Monitor{Enabled: ptrTo(true), Window: Duration(time.Minute), DeniedRepeat: 1, FetchBurst: 3, WriteSpread: 256}, nil},
		{"window too short", `window = "30s"`, Monitor{}, []string{`monitor.window = "30s": want a duration from "1m" to "24h"`}},
		{"window zero", `window = "0s"`, Monitor{}, []string{`monitor.window = "0s"`}},
		{"window too long", `window = "25h"`, Monitor{}, []string{`monitor.window = "25h"`}},
		{"negative", "denied_repeat = -1", Monitor{}, []string{"monitor.denied_repeat = -1: want a number of calls from 1 to 256, or 0 to turn the rule off"}},
		{"too large", "fetch_burst = 1000\nwrite_spread = 257", Monitor{}, []string{"monitor.fetch_burst = 1000", "monitor.write_spread = 257"}},
		{"unknown key", "burst = 2", Monitor{}, []string{"unknown key monitor.burst", "enabled, window, denied_repeat, fetch_burst, write_spread"}},
		{"wrong type", `enabled = "yes"`, Monitor{}, []string{"enabled"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, baseConfig+"\n[monitor]\n"+tt.section+"\n"))
			if tt.err != nil {
				if err == nil {
					t.Fatalf("Load with [monitor] %q = %+v; want an error", tt.section, c.Monitor)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Load with [monitor] %q: error\n%s\ndoes not contain %q", tt.section, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load with [monitor] %q: %v", tt.section, err)
			}
			got := c.Monitor
			if got.On() != tt.want.On() || got.Window != tt.want.Window || got.DeniedRepeat != tt.want.DeniedRepeat ||
				got.FetchBurst != tt.want.FetchBurst || got.WriteSpread != tt.want.WriteSpread {
				t.Errorf("Load with [monitor] %q = %+v (on %v); want %+v (on %v)", tt.section, got, got.On(), tt.want, tt.want.On())
			}
		})
	}
}
