package config

import (
	"strings"
	"time"
)

// Automation bounds scheduled tasks. The budgets are what a task gets
// when `homard task add` does not say; the ceilings (MaxMode,
// MinInterval, MaxRunsPerDay, DailyTokens) hold for every task, whatever
// its body says.
type Automation struct {
	// MaxMode is the highest permission mode a task may run in. A task
	// asking for more is refused when it is added or approved. Missing
	// means smart.
	MaxMode string `toml:"max_mode"`
	// Mode is a new task's mode when `task add --mode` is not given.
	// Missing means safe.
	Mode string `toml:"mode"`
	// TZ is the time zone of --cron and of a local --at time when `task
	// add --tz` is not given: an IANA name such as Europe/Paris. Missing
	// means none: --tz is then required.
	TZ string `toml:"tz"`
	// ApprovalWait is how long a run waits for the owner to answer a call
	// that needs approval before it is reported as not approved. Missing
	// means 30m.
	ApprovalWait Duration `toml:"approval_wait"`
	// MinInterval is the shortest gap between two slots of one task.
	// Missing means 5m; at least 1m.
	MinInterval Duration `toml:"min_interval"`
	// MaxRunsPerDay caps the runs of one task in a calendar day of its
	// zone; past it, slots are skipped. Missing means 48.
	MaxRunsPerDay int `toml:"max_runs_per_day"`
	// DailyTokens caps the model tokens of all runs in a UTC day; when it
	// is reached every task waits for the next day. Missing means
	// 1000000; it must be positive (unattended runs always have a limit).
	DailyTokens int64 `toml:"daily_tokens"`
	// CatchUpWindow is how old a missed slot may be for a task with
	// catch-up "once" to run it after homard was down. Missing means 6h.
	CatchUpWindow Duration `toml:"catch_up_window"`
	// Expiry is how long an approval lasts when `task add --expires` is
	// not given. Missing means 240h (10 days).
	Expiry Duration `toml:"expiry"`
	// WarnBefore is how long before its approval ends the owner is told a
	// task needs `homard task renew`. Missing means 24h.
	WarnBefore Duration `toml:"warn_before"`
	// MaxCalls, MaxTurns, MaxTokens and MaxRuntime are a run's budgets
	// when the task does not set its own: tool calls, model calls, model
	// tokens and wall clock.
	MaxCalls   int      `toml:"max_calls"`
	MaxTurns   int      `toml:"max_turns"`
	MaxTokens  int      `toml:"max_tokens"`
	MaxRuntime Duration `toml:"max_runtime"`
}

// Automation defaults.
const (
	DefaultAutomationMaxMode       = "smart"
	DefaultAutomationMode          = "safe"
	DefaultAutomationApprovalWait  = 30 * time.Minute
	DefaultAutomationMinInterval   = 5 * time.Minute
	DefaultAutomationMaxRunsPerDay = 48
	DefaultAutomationDailyTokens   = 1_000_000
	DefaultAutomationCatchUpWindow = 6 * time.Hour
	DefaultAutomationExpiry        = 240 * time.Hour
	DefaultAutomationWarnBefore    = 24 * time.Hour
	DefaultAutomationMaxCalls      = 16
	DefaultAutomationMaxTurns      = 12
	DefaultAutomationMaxTokens     = 60000
	DefaultAutomationMaxRuntime    = 10 * time.Minute
)

func applyAutomationDefaults(a *Automation) {
	orDefault(&a.MaxMode, DefaultAutomationMaxMode)
	orDefault(&a.Mode, DefaultAutomationMode)
	orDefault(&a.ApprovalWait, Duration(DefaultAutomationApprovalWait))
	orDefault(&a.MinInterval, Duration(DefaultAutomationMinInterval))
	orDefault(&a.MaxRunsPerDay, DefaultAutomationMaxRunsPerDay)
	orDefault(&a.DailyTokens, DefaultAutomationDailyTokens)
	orDefault(&a.CatchUpWindow, Duration(DefaultAutomationCatchUpWindow))
	orDefault(&a.Expiry, Duration(DefaultAutomationExpiry))
	orDefault(&a.WarnBefore, Duration(DefaultAutomationWarnBefore))
	orDefault(&a.MaxCalls, DefaultAutomationMaxCalls)
	orDefault(&a.MaxTurns, DefaultAutomationMaxTurns)
	orDefault(&a.MaxTokens, DefaultAutomationMaxTokens)
	orDefault(&a.MaxRuntime, Duration(DefaultAutomationMaxRuntime))
}

// ModeRank orders the permission modes from the least to the most a
// model may do unasked: safe 0, smart 1, autopilot 2, yolo 3; -1 for an
// unknown mode.
func ModeRank(m string) int {
	for i, x := range modes { // in the order of policy.Modes
		if x == m {
			return i
		}
	}
	return -1
}

func validateAutomation(a *Automation, ps *problems) {
	if ModeRank(a.MaxMode) < 0 {
		ps.add("automation.max_mode = %q: want safe, smart, autopilot or yolo (the default is %s)", a.MaxMode, DefaultAutomationMaxMode)
	}
	if ModeRank(a.Mode) < 0 {
		ps.add("automation.mode = %q: want safe, smart, autopilot or yolo (the default is %s)", a.Mode, DefaultAutomationMode)
	} else if ModeRank(a.MaxMode) >= 0 && ModeRank(a.Mode) > ModeRank(a.MaxMode) {
		ps.add("automation.mode = %q is above automation.max_mode = %q: a task's default mode must be within the ceiling", a.Mode, a.MaxMode)
	}
	if a.TZ != "" {
		// The same rule as schedule.LoadZone, which config may not
		// import: an IANA name, never the machine's own "Local".
		if _, err := time.LoadLocation(a.TZ); err != nil || strings.EqualFold(a.TZ, "local") {
			ps.add("automation.tz = %q: name an IANA zone such as Europe/Paris or UTC", a.TZ)
		}
	}
	positive := func(key string, d Duration, least time.Duration, def time.Duration) {
		if d.Std() < least {
			ps.add("automation.%s = %q: want at least %v (the default is %v)", key, d.String(), least, def)
		}
	}
	positive("approval_wait", a.ApprovalWait, time.Second, DefaultAutomationApprovalWait)
	positive("min_interval", a.MinInterval, time.Minute, DefaultAutomationMinInterval)
	positive("catch_up_window", a.CatchUpWindow, time.Minute, DefaultAutomationCatchUpWindow)
	positive("expiry", a.Expiry, time.Hour, DefaultAutomationExpiry)
	positive("warn_before", a.WarnBefore, time.Minute, DefaultAutomationWarnBefore)
	positive("max_runtime", a.MaxRuntime, time.Second, DefaultAutomationMaxRuntime)
	if a.MaxRuntime.Std() > 24*time.Hour {
		ps.add("automation.max_runtime = %q: at most 24h", a.MaxRuntime.String())
	}
	if a.MaxRunsPerDay <= 0 {
		ps.add("automation.max_runs_per_day = %d: want a positive number of runs per task per day (the default is %d)", a.MaxRunsPerDay, DefaultAutomationMaxRunsPerDay)
	}
	if a.DailyTokens <= 0 {
		ps.add("automation.daily_tokens = %d: want a positive number of model tokens for all runs in a day (the default is %d); unattended runs always have a limit", a.DailyTokens, DefaultAutomationDailyTokens)
	}
	for _, b := range []struct {
		key string
		v   int
	}{{"max_calls", a.MaxCalls}, {"max_turns", a.MaxTurns}, {"max_tokens", a.MaxTokens}} {
		if b.v <= 0 {
			ps.add("automation.%s = %d: want a positive number; a run always has a budget", b.key, b.v)
		}
	}
}

func renderAutomation(w func(string, ...any), a *Automation) {
	w(`
[automation]
# Scheduled tasks (homard task). Every run is held to the body the owner
# approved; these are the ceilings no task can pass and a task's defaults.
# The highest mode a task may run in.
max_mode = %s
# A new task's mode when task add has no --mode.
mode = %s
# The zone of --cron and of a local --at when task add has no --tz (an
# IANA name such as "Europe/Paris"; "" means --tz is required).
tz = %s
# How long a run waits for an approval before the call is not approved.
approval_wait = %s
# The shortest gap between two slots of a task (at least "1m").
min_interval = %s
# Runs of one task per day; past it, slots are skipped.
max_runs_per_day = %d
# Model tokens of all runs in a day; when reached, every task waits for
# the next day.
daily_tokens = %d
# How old a missed slot may be for a task with catch-up "once".
catch_up_window = %s
# How long an approval lasts (task add --expires overrides it).
expiry = %s
# How long before an approval ends you are told to renew it.
warn_before = %s
# A run's budgets when a task does not set its own. Tool calls per run:
max_calls = %d
# Model calls per run:
max_turns = %d
# Model tokens (input + output) per run:
max_tokens = %d
# Wall clock per run (at most "24h"):
max_runtime = %s
`, quote(a.MaxMode), quote(a.Mode), quote(a.TZ), quote(a.ApprovalWait.String()), quote(a.MinInterval.String()),
		a.MaxRunsPerDay, a.DailyTokens, quote(a.CatchUpWindow.String()), quote(a.Expiry.String()), quote(a.WarnBefore.String()),
		a.MaxCalls, a.MaxTurns, a.MaxTokens, quote(a.MaxRuntime.String()))
}
