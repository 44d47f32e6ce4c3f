// Package eval runs homard's security and usability scenarios (homard
// eval): each scenario is a world (files, a vault secret holding a canary,
// pages on loopback servers), a scripted model's steps and oracles, run
// through the real runtime — the agent loop, the arbiter, the tools, the
// audit — in a throw-away home built from the owner's config (or a
// proposed one), never the owner's workspace or vault. An attack scenario
// counts as passed only when its vacuity twin, run under a deliberately
// weakened config or world, fails: an oracle that cannot fail proves
// nothing.
//
// eval drives the composed runtime the way a command does, so it is the
// one package besides cmd/homard that imports internal/app (archtest's
// table says so); nothing imports eval but cmd/homard, and app knows
// nothing of it, which keeps app to wiring.
package eval

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Options says what to run and against which config.
type Options struct {
	// Suite is "all" (or empty), "attacks", "benign" or "robustness".
	Suite string
	// Only, when set, runs the scenario of that name alone.
	Only string
	// Dir adds the owner's scenario files (*.toml) to the embedded ones.
	Dir string
	// Config is the owner's config.toml text the runs start from, and
	// ConfigPath its file (relative paths in it are read against its
	// folder). Nil means homard's default config.
	Config     []byte
	ConfigPath string
	// Timeout bounds one run of one scenario. Zero means 2 minutes.
	Timeout time.Duration
	// Progress, when set, is told each result as it is known.
	Progress func(Result)
}

// Result statuses.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Result is one scenario's verdict.
type Result struct {
	Name   string `json:"name"`
	Suite  string `json:"suite"`
	Class  string `json:"class"`
	Status string `json:"status"` // pass, fail or skip
	// Why lists what failed (an oracle and what it saw), or why the
	// scenario was skipped; empty for a pass.
	Why []string `json:"why"`
	// Twin says how the vacuity twin ended: "failed" (as it must, for
	// an attack), "passed" (the scenario proves nothing), "error" (it
	// could not run) or "" (no twin).
	Twin string `json:"twin"`
	// TwinWhy is what the twin's oracles saw fail: the proof that they
	// can.
	TwinWhy []string `json:"twin_why"`
}

// Report is every result and the counts.
type Report struct {
	Results []Result `json:"results"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
}

// ErrNoScenario is returned when the suite or name selects nothing.
var ErrNoScenario = errors.New("no scenario matches")

// Run runs the selected scenarios one after another and returns the
// report. An error means eval itself could not run (a scenario file
// refused, no temporary folder); a scenario that fails is a Result.
func Run(ctx context.Context, o Options) (Report, error) {
	switch o.Suite {
	case "", "all", SuiteAttacks, SuiteBenign, SuiteRobustness:
	default:
		return Report{}, fmt.Errorf("unknown suite %q: want attacks, benign, robustness or all", o.Suite)
	}
	all, err := Load(o.Dir)
	if err != nil {
		return Report{}, err
	}
	var picked []*Scenario
	for _, s := range all {
		if (o.Suite == "" || o.Suite == "all" || s.Suite == o.Suite) && (o.Only == "" || s.Name == o.Only) {
			picked = append(picked, s)
		}
	}
	if len(picked) == 0 {
		return Report{}, ErrNoScenario
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	var rep Report
	for _, s := range picked {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		res := runScenario(ctx, o, s)
		switch res.Status {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		default:
			rep.Skipped++
		}
		if res.Why == nil {
			res.Why = []string{}
		}
		if res.TwinWhy == nil {
			res.TwinWhy = []string{}
		}
		rep.Results = append(rep.Results, res)
		if o.Progress != nil {
			o.Progress(res)
		}
	}
	return rep, nil
}

// runScenario runs s, then its twin when it has one.
func runScenario(ctx context.Context, o Options, s *Scenario) Result {
	res := Result{Name: s.Name, Suite: s.Suite, Class: s.Class}
	if s.Needs == "sandbox" && !sandboxWorks() {
		res.Status, res.Why = Skip, []string{"no sandbox: run_command cannot run on this machine"}
		return res
	}
	why, err := runOnce(ctx, o, s, false)
	if err != nil {
		res.Status, res.Why = Fail, []string{"could not run: " + err.Error()}
		return res
	}
	res.Why = why
	if s.Twin != nil {
		twinWhy, err := runOnce(ctx, o, s, true)
		switch {
		case err != nil:
			res.Twin = "error"
			res.TwinWhy = []string{"could not run: " + err.Error()}
			res.Why = append(res.Why, "vacuity twin could not run: "+err.Error())
		case len(twinWhy) == 0:
			res.Twin = "passed"
			res.Why = append(res.Why, "vacuity twin passed under its weakened config: the oracles prove nothing")
		default:
			res.Twin, res.TwinWhy = "failed", twinWhy
		}
	}
	res.Status = Pass
	if len(res.Why) > 0 {
		res.Status = Fail
	}
	return res
}
