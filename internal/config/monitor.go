package config

import "time"

// Monitor configures the monitors over each session's recent tool calls
// (internal/monitor): a pattern no single call shows makes the next call
// ask the owner, with the evidence, in every permission mode. A monitor
// never allows anything and never lowers a denial.
type Monitor struct {
	// Enabled turns the monitors on. Missing means true (after Load it is
	// never nil).
	Enabled *bool `toml:"enabled"`
	// Window is how far back the monitors look: at least "1m", at most
	// "24h". Missing means "10m".
	Window Duration `toml:"window"`
	// DeniedRepeat: after this many denied calls within the window, the
	// session's next call asks (monitor.denied-repeat). 0 turns the rule
	// off; missing means 3.
	DeniedRepeat int `toml:"denied_repeat"`
	// FetchBurst: once the session has read private data, its
	// FetchBurst-th outbound call (http_get, web_search, a send) within
	// the window asks (monitor.fetch-burst). 0 turns the rule off;
	// missing means 3.
	FetchBurst int `toml:"fetch_burst"`
	// WriteSpread: after writes into this many distinct folders within
	// the window, the session's next write asks (monitor.write-spread). 0
	// turns the rule off; missing means 5.
	WriteSpread int `toml:"write_spread"`
}

// On reports monitor.enabled (true when missing).
func (m Monitor) On() bool { return m.Enabled == nil || *m.Enabled }

// Monitor defaults, as internal/monitor has them.
const (
	DefaultMonitorWindow       = 10 * time.Minute
	DefaultMonitorDeniedRepeat = 3
	DefaultMonitorFetchBurst   = 3
	DefaultMonitorWriteSpread  = 5
	// maxMonitorThreshold bounds each threshold: past it a rule could
	// never trip within the calls a session keeps (monitor.MaxCalls).
	maxMonitorThreshold = 256
)

// monitorSection prefixes the section's keys in messages. It is not
// written out as a literal "monitor.<key>": rule ids of the monitors
// start that way, and a test keeps rule ids out of literals.
const monitorSection = "monitor"

func applyMonitorDefaults(m *Monitor) {
	if m.Enabled == nil {
		on := true
		m.Enabled = &on
	}
	orDefault(&m.Window, Duration(DefaultMonitorWindow))
	orDefault(&m.DeniedRepeat, DefaultMonitorDeniedRepeat)
	orDefault(&m.FetchBurst, DefaultMonitorFetchBurst)
	orDefault(&m.WriteSpread, DefaultMonitorWriteSpread)
}

func validateMonitor(m *Monitor, ps *problems) {
	if m.Window.Std() < time.Minute || m.Window.Std() > 24*time.Hour {
		ps.add("%s.window = %q: want a duration from \"1m\" to \"24h\" (the default is %v)", monitorSection, m.Window.String(), DefaultMonitorWindow)
	}
	for _, t := range []struct {
		key string
		v   int
		def int
	}{
		{"denied_repeat", m.DeniedRepeat, DefaultMonitorDeniedRepeat},
		{"fetch_burst", m.FetchBurst, DefaultMonitorFetchBurst},
		{"write_spread", m.WriteSpread, DefaultMonitorWriteSpread},
	} {
		if t.v < 0 || t.v > maxMonitorThreshold {
			ps.add("%s.%s = %d: want a number of calls from 1 to %d, or 0 to turn the rule off (the default is %d)", monitorSection, t.key, t.v, maxMonitorThreshold, t.def)
		}
	}
}

func renderMonitor(w func(string, ...any), m *Monitor) {
	w(`
[monitor]
# Monitors watch each session's recent tool calls for a pattern no single
# call shows, and make the next call ask you, with what they saw, in every
# mode (yolo too). They never allow anything nor lower a denial. false
# turns them all off.
enabled = %t
# How far back they look (from "1m" to "24h").
window = %s
# After this many denied calls, the session's next call asks
# (monitor.denied-repeat; 0 turns it off).
denied_repeat = %d
# Once the session has read your private data, its outbound call number
# fetch_burst (http_get, web_search) asks (monitor.fetch-burst; 0 turns it
# off). Approving the card starts the count again.
fetch_burst = %d
# After writes into this many folders, the session's next write asks
# (monitor.write-spread; 0 turns it off).
write_spread = %d
`, m.On(), quote(m.Window.String()), m.DeniedRepeat, m.FetchBurst, m.WriteSpread)
}
