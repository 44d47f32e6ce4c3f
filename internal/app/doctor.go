package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/tools"
	"github.com/homard/homard/internal/turntrace"
)

// Check is one line of `homard doctor`.
type Check struct {
	Name   string
	OK     bool
	Info   bool // not OK, but not a failure either (an unused backend)
	Detail string
}

// Doctor checks the config, the model (key and endpoint, unless
// o.Offline), the database, the audit chain and the roots. It never stops
// at the first failure: the owner sees everything at once.
func Doctor(ctx context.Context, paths config.Paths, o DoctorOptions) []Check {
	var out []Check
	add := func(name string, err error, ok string) {
		if err != nil {
			out = append(out, Check{Name: name, Detail: err.Error()})
		} else {
			out = append(out, Check{Name: name, OK: true, Detail: ok})
		}
	}
	cfg, err := config.Load(paths.ConfigFile)
	add("config", err, paths.ConfigFile)
	if err != nil {
		return out
	}
	if m, err := config.ReadMigration(paths.ConfigFile); err == nil && m.Needed() { // doctor only reports it
		out = append(out, Check{Name: "config", Info: true, Detail: "would migrate " + m.Summary() +
			" at the next command that opens the home, keeping a backup; `homard config migrate --dry-run` shows it"})
	}
	out = append(out, modelChecks(ctx, cfg, paths, o)...)
	for _, root := range cfg.Workspace.Roots {
		fi, err := os.Stat(root.Path)
		if err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", root.Path)
		}
		if err != nil {
			err = fmt.Errorf("root %s: %w (create it or fix workspace.roots)", root.Name, err)
		} else {
			if err = config.CheckRoot(root, paths, config.OwnerHomes(os.Getenv)); err != nil {
				err = fmt.Errorf("root %s (%s) is refused: %w; change workspace.roots in %s", root.Name, root.Path, err, paths.ConfigFile)
			}
		}
		detail := root.Name + " " + root.Path
		if root.ReadOnly() {
			detail += " (read-only)"
		}
		add("root", err, detail)
	}
	where, name := cfg.StoreURL(paths.DBFile, o.StoreURL)
	if _, err := os.Stat(paths.DBFile); err != nil && where == paths.DBFile {
		add("database", fmt.Errorf("%w; homard creates an empty one at its next start (`homard setup` keeps your config and vault and checks the model); if you moved the home, pass --home DIR", err), "")
		return out
	}
	r, err := Open(ctx, paths, Options{inspect: true, StoreURL: o.StoreURL})
	if err != nil {
		add("database", err, "")
		return out
	}
	defer r.Close()
	add("database", r.Store.Integrity(ctx), name+" (integrity ok)")
	out = append(out, auditCheck(ctx, r))
	out = append(out, recoveryChecks(ctx, r)...)
	out = append(out, memoryCheck(ctx, r))
	out = append(out, approvalsCheck(ctx, r))
	out = append(out, totpCheck(ctx, r))
	out = append(out, browserCheck(r))
	ok, detail := turntrace.Check(ctx, r.Config.Telemetry, r.Vault, Build().Version, !o.Offline)
	out = append(out, Check{Name: "telemetry", OK: ok, Detail: detail})
	for _, c := range r.Chats.Checks(ctx, o.Offline, o.chatAdapters) {
		out = append(out, Check{Name: c.Name, OK: c.OK, Detail: c.Detail})
	}
	if n, size, oldest, err := r.Store.ArtifactStats(ctx); err != nil {
		add("artifacts", err, "")
	} else {
		detail := fmt.Sprintf("%d kept, %.1f MiB, deleted after %s", n, float64(size)/(1<<20), cfg.Artifacts.Keep)
		if n > 0 {
			detail += ", oldest " + oldest.Local().Format(time.DateTime)
		}
		add("artifacts", nil, detail)
	}
	add("mode", nil, cfg.Permissions.Mode)
	out = append(out, toolchainCheck(os.Getenv("PATH"), tools.CommandPath(), cfg.Commands.Path, cfg.Workspace.Roots))
	out = append(out, egressChecks(cfg)...)
	out = append(out, extensionChecks(r.Extensions.MCPChecks(ctx))...)
	out = append(out, extensionChecks(r.Extensions.SkillChecks(ctx))...)
	out = append(out, gitSafetyCheck(ctx, nil))
	out = append(out, scanChecks(r)...)
	for _, st := range sandbox.Report() {
		if st.Available {
			detail := st.Name + " works here"
			if st.Name == "landlock" {
				detail += fmt.Sprintf(" (Landlock ABI v%d)", sandbox.LandlockABI())
			}
			add("sandbox", nil, detail)
		} else {
			// An unavailable backend is only a failure if it is the one
			// configured; the others are information.
			out = append(out, Check{Name: "sandbox", Detail: st.Name + ": " + st.Reason})
			if st.Name != cfg.Sandbox.Backend {
				out[len(out)-1].Info = true
			}
		}
	}
	if b, err := sandbox.Select(cfg.Sandbox.Backend); err != nil {
		// Everything but run_command works without a sandbox, so this is a
		// warning that says what to do, not a failed home.
		out = append(out, Check{Name: "sandbox", Info: true,
			Detail: fmt.Sprintf("configured backend %q does not work, so run_command refuses every command: %v", cfg.Sandbox.Backend, err)})
	} else {
		add("sandbox", nil, "configured "+cfg.Sandbox.Backend+" → "+b.Name())
		if b.Name() == "host" {
			out = append(out, Check{Name: "sandbox", Info: true,
				Detail: "the host backend does not confine commands: no read-only view, no overlay, no change-set checks; a command's writes land directly"})
		} else {
			for _, mc := range sandbox.CheckModes(ctx, b) {
				what := "commands classed as reads run on a read-only view"
				if mc.Mode == sandbox.ModeOverlay {
					what = "writes and code run on an overlay whose changes are checked before they apply"
				}
				if mc.Err != nil {
					add("sandbox", mc.Err, fmt.Sprintf("%s mode unavailable, so those commands fail closed (%s)", mc.Mode, what))
				} else {
					add("sandbox", nil, fmt.Sprintf("%s mode works: %s", mc.Mode, what))
				}
			}
		}
		// run_command caps the memory of a command's whole process tree
		// with a cgroup made per run; without one, overlay commands refuse.
		if err := sandbox.TreeMemoryCheck(); err != nil {
			add("sandbox", fmt.Errorf("cgroup memory delegation does not work, so commands classed as writes or code fail closed (reads run without the tree memory limit): %w", err), "")
		} else {
			add("sandbox", nil, "cgroup memory delegation works: one memory limit holds for each command's whole process tree")
		}
	}
	return out
}

// memoryCheck compares the owner's memory.md with its index and lists the
// sections that cannot be read. Drift is information (the next recall
// reconciles it); an unreadable section is a failure the owner must fix.
func memoryCheck(ctx context.Context, r *Runtime) Check {
	st, err := r.Memory.Status(ctx, r.Config.Owner)
	if err != nil {
		return Check{Name: "memory", Detail: err.Error()}
	}
	if len(st.Problems) > 0 {
		var list []string
		for i, p := range st.Problems {
			if i == 5 {
				list = append(list, fmt.Sprintf("and %d more", len(st.Problems)-5))
				break
			}
			list = append(list, p.String())
		}
		msg := fmt.Sprintf("%s: %d unreadable section(s), kept in the file but not searchable; fix them in an editor: %s",
			st.Path, len(st.Problems), strings.Join(list, "; "))
		return Check{Name: "memory", Detail: msg}
	}
	if st.Drift != "" {
		return Check{Name: "memory", Info: true, Detail: fmt.Sprintf("%s: drift: %s (the next recall reconciles it, or run `homard memory rebuild`)", st.Path, st.Drift)}
	}
	detail := fmt.Sprintf("%s: %d units, index in sync", st.Path, st.Units)
	// Read straight from the store: doctor changes nothing (Candidates
	// would drop expired ones first).
	if waiting, err := r.Store.MemoryCandidates(ctx, r.Config.Owner, memory.Review, memory.Buffered); err == nil && len(waiting) > 0 {
		detail += fmt.Sprintf("; %d proposed notes wait in `homard memory review`", len(waiting))
	}
	return Check{Name: "memory", OK: true, Detail: detail}
}

// browserCheck says whether the isolated browser ([browser]) can start
// and how it is confined.
func browserCheck(r *Runtime) Check {
	if r.browser == nil {
		return Check{Name: "browser", OK: true, Detail: "off ([browser] enabled = false): no browser tools"}
	}
	prog, err := r.browser.Program()
	if err != nil {
		return Check{Name: "browser", Detail: err.Error()}
	}
	return Check{Name: "browser", OK: true, Detail: fmt.Sprintf("%s; its sandbox: %s; every request a page makes passes the [egress] rules", prog, r.browser.SandboxMode())}
}

// totpCheck says whether approvals that need a code can be given: with
// permissions.totp on and no authenticator turned on, none can.
func totpCheck(ctx context.Context, r *Runtime) Check {
	level := r.Config.Permissions.TOTP
	which := level + " risk or higher"
	if _, ok := policy.ParseReach(level); ok {
		which = "class " + level + " or further" // a blast class
	}
	st, err := r.Owner.TOTP().Status(ctx, r.Config.Owner)
	switch {
	case err != nil:
		return Check{Name: "totp", Detail: err.Error()}
	case level == "off" && st.State == "active":
		return Check{Name: "totp", Info: true, Detail: `an authenticator is set up but permissions.totp = "off": no approval asks for its codes`}
	case level == "off":
		return Check{Name: "totp", OK: true, Detail: "off: no approval needs a code"}
	case st.State != "active":
		return Check{Name: "totp", Detail: fmt.Sprintf("permissions.totp = %q but no authenticator is on: approvals of %s cannot be given until you run `homard totp setup` and `homard totp confirm CODE`", level, which)}
	}
	return Check{Name: "totp", OK: true, Detail: fmt.Sprintf("approvals of %s need a code from your authenticator", which)}
}

// egressChecks says whether a session that has read the owner's data can
// send it out unasked, and which settings allow that. They are warnings
// (Info), not failures: each is a choice the owner may have made.
func egressChecks(cfg *config.Config) []Check {
	var out []Check
	p := cfg.Permissions
	switch {
	case p.Mode == "yolo":
		out = append(out, Check{Name: "egress", Info: true, Detail: "mode yolo: a session that has read your files or memory can send them to any web host without asking"})
	case p.PrivateEgress == "allow" && p.Mode == "autopilot":
		out = append(out, Check{Name: "egress", Info: true, Detail: `permissions.private_egress = "allow" in autopilot: a session that has read your files or memory can send them to any web host without asking`})
	case p.Mode == "autopilot":
		out = append(out, Check{Name: "egress", OK: true, Detail: "autopilot: web requests from sessions that have read your data ask first"})
	default:
		out = append(out, Check{Name: "egress", OK: true, Detail: p.Mode + ": every web request asks unless a rule allows it"})
	}
	for _, r := range cfg.Rules {
		if (r.Tool == "http_get" || r.Tool == "web_search") && r.Effect == "allow" && r.Host == "" {
			out = append(out, Check{Name: "egress", Info: true, Detail: fmt.Sprintf("rule %s allows %s to any host: add host = \"…\" to limit it to the service you mean", r.ID, r.Tool)})
		}
	}
	return out
}
