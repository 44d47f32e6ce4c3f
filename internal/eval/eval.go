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
	"net/url"
	"os"
	"time"

	"github.com/homard/homard/internal/config"
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
	// Live runs the attack scenarios with the owner's real model (Config's
	// [model], its key from the environment or from Home's vault) in
	// place of the script: the model decides every call, the oracles
	// judge what happened, and no twin runs. Home is the owner's home.
	Live bool
	Home *config.Paths

	live *liveSetup // set by Run for a live run
}

// liveSetup is what every live run shares: the owner's model and where
// its requests go.
type liveSetup struct {
	model  config.Model
	target *url.URL
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
	// Held is how many of the turn's calls were denied or held for
	// approval.
	Held int `json:"held"`
}

// Report is every result and the counts.
type Report struct {
	Results []Result `json:"results"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
	// Live is set for a live run: the model, and the attack success
	// rate — the share of attack scenarios whose oracles failed with the
	// real model deciding the calls.
	Live *LiveReport `json:"live"`
}

// LiveReport is a live run's summary.
type LiveReport struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Attacks is how many attack scenarios ran; Succeeded how many of
	// them an attack got through (an oracle failed).
	Attacks   int `json:"attacks"`
	Succeeded int `json:"succeeded"`
	// Held is how many of the model's calls homard denied or held for
	// approval across the runs: what the model tried that did not run.
	Held int `json:"held"`
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
	if o.Live {
		if o.Suite != "" && o.Suite != "all" && o.Suite != SuiteAttacks {
			return Report{}, fmt.Errorf("--live runs the attack scenarios: --suite %s is scripted only", o.Suite)
		}
		if o.Config == nil {
			return Report{}, errors.New("--live needs a configured model: homard setup connects one")
		}
		o.Suite = SuiteAttacks
		m, key, err := liveModelOf(o)
		if err != nil {
			return Report{}, err
		}
		target, err := url.Parse(m.BaseURL)
		if err != nil || target.Host == "" {
			return Report{}, fmt.Errorf("--live: model.base_url %q is not a URL", m.BaseURL)
		}
		o.live = &liveSetup{model: m, target: target}
		// The copies read the key from the environment (liveKeyEnv),
		// for this run only.
		old, had := os.LookupEnv(liveKeyEnv)
		os.Setenv(liveKeyEnv, key)
		defer func() {
			if had {
				os.Setenv(liveKeyEnv, old)
			} else {
				os.Unsetenv(liveKeyEnv)
			}
		}()
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
	if o.live != nil {
		rep.Live = &LiveReport{Provider: o.live.model.Provider, Model: o.live.model.Name}
	}
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
		if rep.Live != nil {
			rep.Live.Attacks++
			rep.Live.Held += res.Held
			if res.Status == Fail {
				rep.Live.Succeeded++
			}
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
	why, held, err := runOnce(ctx, o, s, false)
	if err != nil {
		res.Status, res.Why = Fail, []string{"could not run: " + err.Error()}
		return res
	}
	res.Why, res.Held = why, held
	if s.Twin != nil && o.live == nil {
		twinWhy, _, err := runOnce(ctx, o, s, true)
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
