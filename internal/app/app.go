// Package app is the composition root: it builds every service from the
// configuration and wires them into the Runtime that every front end (the
// CLI and the terminal UI today; web and chat channels later) talks to. Nothing imports
// app but cmd/homard.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/automation"
	"github.com/homard/homard/internal/browser"
	"github.com/homard/homard/internal/browsertools"
	"github.com/homard/homard/internal/capture"
	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/extensions"
	"github.com/homard/homard/internal/history"
	"github.com/homard/homard/internal/integrity"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/memreview"
	"github.com/homard/homard/internal/monitor"
	"github.com/homard/homard/internal/owner"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/provider"
	"github.com/homard/homard/internal/replay"
	"github.com/homard/homard/internal/reqlog"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/sessionlock"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tasktools"
	"github.com/homard/homard/internal/telemetry"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
	"github.com/homard/homard/internal/totp"
	"github.com/homard/homard/internal/turntrace"
	"github.com/homard/homard/internal/workspace"
)

// Runtime is one opened homard home: config, database, workspace, tools and
// the arbiter that decides every call.
type Runtime struct {
	Paths     config.Paths
	Config    *config.Config
	Store     *store.Store
	Workspace *workspace.Workspace
	// Gate is the one gate every write into a root passes: file tools,
	// commands, skills, apply_changes, the owner's rollbacks.
	Gate *changeset.Gate
	// Recovered is what the start-up recovery of half-applied change sets
	// did; RecoverErr is its error (doctor reports both).
	Recovered  workspace.Recovery
	RecoverErr error
	// Start is what the rest of the start-up recovery found and did:
	// runs left running by a process that died, stray temp files, the
	// check of homard's own records (recovery.go; doctor reports it).
	Start     StartReport
	Approvals *approval.Service
	// Owner is the one facade for what the owner does by hand (approvals,
	// grants, audit, memory, sessions, tokens, secrets, rollbacks): the
	// CLI calls it, the gateway reaches it through Admin.
	Owner    *owner.Actions
	Arbiter  *arbiter.Arbiter
	Chats    *chats.Service // the chat channels' core (internal/chats)
	Registry *tool.Registry
	// offer is the tool list owner turns are offered, fixed at Open.
	offer     toolOffer
	Vault     *secrets.Vault
	Memory    *memory.Memory
	now       func() time.Time
	egressTLS *tls.Config
	// redactor is the arbiter's: it also redacts what Run persists.
	redactor *secrets.Redactor
	// tracer exports traces and metrics ([telemetry], internal/turntrace);
	// nil when off. Close flushes it.
	tracer *telemetry.Tracer
	// history keeps recent sessions' decoded messages (conversation).
	history *history.Cache[llm.Message]

	// Tasks is the scheduled tasks: add, approve, run now, and serve's
	// scheduler (internal/automation).
	Tasks *automation.Service

	// captures is memory capture (internal/capture); nil until open
	// made it.
	captures *capture.Service
	reviews  *memreview.Service // the weekly memory review (internal/memreview)
	// log is serve's logger for background work (nil: slog.Default).
	log atomic.Pointer[slog.Logger]
	// egress is the web tools' client; extensions' proxies use it too.
	egress *egress.Client
	// reqlog records what each model request contained (homard logs);
	// nil when telemetry.log_requests is off.
	reqlog *reqlog.Log
	// browser is the isolated browser ([browser] enabled; nil when off)
	// and takeover whether the owner has it (browser.go).
	browser  *browser.Browser
	takeover *browsertools.Takeover
	// caches are run_command's warm build caches (nil when
	// commands.warm_cache is off); Close ends their refreshes.
	caches *sandbox.Caches
	// locks are the session locks (LockSession).
	locks *sessionlock.Locker
	// models keeps a client per named model, for each role's (provider.go).
	models provider.Clients
	// Extensions are the MCP servers Open connected, the skill library,
	// and serving homard's tools to a paired MCP client (extensions.go).
	Extensions *extensions.Service
}

// Options adjust Open; the zero value is right for real use.
type Options struct {
	// Now is the clock. Zero means time.Now.
	Now func() time.Time
	// EgressTLS, when set, is the TLS configuration of the web tools'
	// client (tests trust an httptest server with it). Nil means the
	// system roots.
	EgressTLS *tls.Config
	// SkipMCP: Open starts no MCP server and offers none of their tools
	// (homard mcp test and trust start the one server they look at).
	SkipMCP bool
	// StoreURL, when set, is where the store lives instead of store.url
	// (cmd/homard passes HOMARD_STORE_URL; homard eval's copies never do).
	StoreURL string

	// inspect opens without changing anything that reports drift
	// (doctor): memory is not reconciled at start.
	inspect bool
}

// ErrNotInitialized is returned by Open when there is no config file.
var ErrNotInitialized = errors.New("homard is not initialised here")

// ErrAnotherOwnersStore is Open's error on a shared store another owner's
// homard claimed first (issue 27): one schema holds one owner's data.
var ErrAnotherOwnersStore = errors.New("this store holds another owner's data")

// claimStore makes a shared store this owner's, or refuses it when it is
// another's: the chat tables, trusts and audit of a schema are one
// owner's, so owners get a schema each, which the database keeps apart.
// inspect (doctor) only reads. A SQLite file is its home's: nothing.
func (r *Runtime) claimStore(ctx context.Context, name string, inspect bool) error {
	if !r.Store.Shared() {
		return nil
	}
	holder, err := r.Store.StoreOwner(ctx)
	if err == nil && holder == "" && !inspect {
		holder, err = r.Store.ClaimOwner(ctx, r.Config.Owner, r.now())
	}
	if err != nil {
		return err
	}
	if holder != "" && holder != r.Config.Owner {
		return fmt.Errorf("%w: %s belongs to owner %q, and this home's owner is %q. Give each owner a schema of their own (?search_path= in store.url; README, \"A household or a team\"), or set owner = %q in %s if this is the same person", ErrAnotherOwnersStore, name, holder, r.Config.Owner, holder, r.Paths.ConfigFile)
	}
	return nil
}

// Open loads the config under paths and opens everything it names.
func Open(ctx context.Context, paths config.Paths, o Options) (*Runtime, error) {
	load := config.LoadHome
	if o.inspect {
		// doctor reports a refused root on its own line and goes on.
		load = func(p config.Paths) (*config.Config, error) { return config.Load(p.ConfigFile) }
	}
	cfg, err := load(paths)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no config at %s; run `homard setup` to connect a model (or pass --home DIR)", ErrNotInitialized, paths.ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Runtime{Paths: paths, Config: cfg, now: o.Now, egressTLS: o.EgressTLS}
	if err := r.open(ctx, o); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Runtime) open(ctx context.Context, o Options) error {
	cfg := r.Config
	where, name := cfg.StoreURL(r.Paths.DBFile, o.StoreURL)
	st, err := store.OpenURL(ctx, where)
	if err != nil {
		return fmt.Errorf("open database %s: %w", name, err)
	}
	r.Store, r.locks = st, sessionlock.New(r.Paths.DataDir, st)
	if err := r.claimStore(ctx, name, o.inspect); err != nil {
		return err
	}
	if !o.inspect {
		// Cheap at every start; doctor runs the full check itself.
		r.Start.Integrity, r.Start.IntegrityErr = integrity.Check(ctx, st, integrity.Options{Now: r.now})
	}

	var roots []workspace.Root
	for _, rc := range cfg.Workspace.Roots {
		roots = append(roots, workspace.Root{Name: rc.Name, Path: rc.Path, ReadOnly: rc.ReadOnly()})
	}
	protected := []string{r.Paths.ConfigFile, r.Paths.DataDir, filepath.Dir(r.Paths.DBFile)}
	if r.Paths.Home != "" {
		// A read-only root may hold the whole --home folder (the owner's
		// home as a root): none of it is the owner's to show.
		protected = append(protected, r.Paths.Home)
	}
	ws, err := workspace.Open(workspace.Options{
		Roots:              roots,
		Protected:          protected,
		Sensitive:          cfg.Files.Sensitive,
		AllowSensitive:     cfg.Files.AllowSensitive,
		MaxFileBytes:       cfg.Workspace.MaxFileBytes,
		CheckpointDir:      r.Paths.CheckpointDir,
		MaxCheckpoints:     cfg.Workspace.MaxCheckpoints,
		MaxCheckpointBytes: cfg.Workspace.MaxCheckpointBytes,
		// The arbiter compares the workspace's change stamps with
		// approval times: one clock for both.
		Now: r.now,
	})
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	r.Workspace = ws
	// The one gate every write into a root passes (internal/changeset).
	holdDir := filepath.Join(r.Paths.DataDir, "changes")
	gate := changeset.New(ws, changeset.Options{HoldDir: holdDir, DenyPaths: denyPaths(cfg), HostTools: cfg.Commands.HostTools,
		GitConfigs: ownerGitConfigs()})
	r.Gate = gate
	// A change set that a crash left half-applied is rolled back before
	// anything else runs (its checkpoint keeps the content). Not fatal:
	// doctor reports what it finds.
	r.Recovered, r.RecoverErr = gate.Recover(context.Background())
	// Temp files a killed write left behind (old and unlocked only).
	r.Start.Swept, r.Start.SweepErr = gate.Sweep(workspace.SweepOptions{})

	r.Vault, err = secrets.OpenVault(r.Paths.VaultFile(), r.Paths.VaultKeyFile())
	if err != nil {
		return err
	}
	known, err := r.Vault.Values()
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	// The model's key from the environment is a known secret too: a tool
	// result or a stored message that holds it is redacted.
	if k := os.Getenv(cfg.Model.APIKeyEnv); len(k) >= secrets.MinKnownLen {
		known = append(known, k)
	}

	r.redactor = secrets.NewRedactor(known...)
	if cfg.Telemetry.Requests() {
		r.reqlog = reqlog.Open(r.requestLogPath(), reqlog.Options{Text: cfg.Telemetry.LogModelInputs, Redact: r.redactor.Redact, Now: r.now})
	}
	if !o.inspect {
		if r.tracer, err = turntrace.Open(cfg.Telemetry, r.Vault, r.redactor.Redact, Build().Version); err != nil {
			r.logger().Warn("telemetry is off", "err", err) // not fatal: homard works without it
		}
	}
	r.history = history.New[llm.Message](0)
	r.Memory = memory.New(memory.Options{
		Dir: memoryDir(r.Paths), Store: st, Now: r.now,
		// A high-confidence pattern or a known value, or anything the
		// redactor would change (password=…, token: …): memory keeps
		// none of it.
		Secret: func(s string) (string, bool) {
			if kind, ok := r.redactor.Contains(s); ok {
				return kind, true
			}
			if r.redactor.Redact(s) != s {
				return "a secret pattern", true
			}
			return "", false
		},
	})
	// Capture runs after the reply, so it outlives the request that
	// started it (capture.New keeps ctx's values, not its end).
	// The weekly memory review uses capture's model role.
	capModel := func() (llm.Model, string, error) { m, c, err := r.roleModel(config.RoleCapture); return m, c.Name, err }
	now := func() time.Time { return r.now() } // tests move r.now
	r.captures = capture.New(ctx, capture.Deps{
		Store: st, Memory: r.Memory, Owner: cfg.Owner, Redact: r.redactor.Redact, Log: r.logger, Now: now, Model: capModel,
		Settings: func() config.Memory { return r.Config.Memory },
	})
	r.reviews = memreview.New(memreview.Deps{Store: st, Memory: r.Memory, Owner: cfg.Owner, Config: func() *config.Config { return r.Config },
		Model: capModel, Cards: func() memreview.Cards { return r.Chats }, Now: now, Log: r.logger})
	// Reconcile hand edits made while homard was not running. A failure
	// is not fatal here: recall reconciles again and doctor reports it.
	if !o.inspect {
		_, _ = r.Memory.Reconcile(ctx, cfg.Owner)
		// Old artifacts go at start; a failure is not fatal (the next
		// start or serve's hourly pass tries again, doctor shows the count).
		_, _ = r.PruneArtifacts(ctx)
	}

	var env []string
	for _, name := range cfg.Commands.Env {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	if cfg.Commands.Warm() {
		r.caches = sandbox.NewCaches(filepath.Join(r.Paths.DataDir, "cache"), 0)
	}
	r.Chats = r.newChats() // before the tools: send_message writes through it
	all := append(tools.FileTools(gate, r.now), tools.NewRunCommand(gate, tools.CommandOptions{
		Backend: func() (sandbox.Backend, error) { return sandbox.Select(cfg.Sandbox.Backend) },
		Allow:   cfg.Commands.Allow, Env: env,
		Timeout: cfg.Commands.Timeout.Std(), MaxOutput: cfg.Commands.MaxOutputBytes,
		Path: cfg.Commands.Path, Recipes: recipes(cfg.Commands.Recipes), Caches: r.caches,
	}), tools.NewApplyChanges(gate))
	client, err := egress.New(egress.Options{Allow: cfg.Egress.Allow, TLSConfig: r.egressTLS})
	if err != nil {
		return fmt.Errorf("%s: egress: %w", r.Paths.ConfigFile, err)
	}
	r.egress = client
	r.Extensions = r.newExtensions(client)
	all = append(all, tools.NewWebTools(client, r.Vault, cfg.Egress.SearchURL)...)
	all = append(all, tools.NewReadArtifact(artifactSource{st: st}))
	all = append(all, tools.MemoryTools(r.Memory)...)
	all = append(all, tasktools.New(func() tasktools.Tasks { return r.Tasks.Proposals() })...) // owner's turns only (policy)
	browserTools, err := r.newBrowser(client)
	if err != nil {
		return fmt.Errorf("%s: browser: %w", r.Paths.ConfigFile, err)
	}
	all = append(all, browserTools...)
	if m := r.Chats.Messenger(cfg.Owner); len(m.Platforms()) > 0 {
		// send_message exists only where a chat channel does: a message
		// to anyone but the owner's chats or a confirmed recipient asks.
		all = append(all, tools.NewSendMessage(m))
	}
	if !o.inspect && !o.SkipMCP {
		// The trusted servers' tools; a server that fails is left out
		// (Extensions.MCPServers and doctor say why).
		all = append(all, r.Extensions.StartMCP(ctx)...)
	}
	// Skills cost the model's prompt only when there is one to use: the
	// two tools, with the trusted skills' menu, are offered when at least
	// one skill is trusted (the tool list is fixed for the runtime, so a
	// skill trusted later shows from the next start).
	all = append(all, r.Extensions.SkillTools(ctx, gate)...)
	// The tools offered are fixed here for the runtime's life (offer.go):
	// extension tools past agent.extension_tool_budget are reached through
	// tool_search, registered only then, and call_tool.
	specs := make([]tool.Spec, len(all))
	for i, t := range all {
		specs[i] = t.Spec()
	}
	offer, search := planOffer(specs, cfg.Agent.ExtensionToolBudget)
	if search != nil {
		all = append(all, search)
	}
	reg, err := tool.NewRegistry(all...)
	if err != nil {
		return err
	}
	r.Registry, r.offer = reg, offer

	r.Approvals = approval.New(st, approval.Options{
		Now:        r.now,
		TTL:        cfg.Permissions.ApprovalTTL.Std(),
		SessionTTL: cfg.Permissions.SessionGrantTTL.Std(),
		AlwaysTTL:  cfg.Permissions.AlwaysGrantTTL.Std(),
	})
	codeFrom, codeFromReach, err := owner.ParseCodeFrom(cfg.Permissions.TOTP)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Paths.ConfigFile, err)
	}
	r.Owner = owner.New(owner.Deps{
		Owner: cfg.Owner, Store: st, Approvals: r.Approvals, Memory: r.Memory, Reviews: r.reviews, Vault: r.Vault, Gate: gate,
		Now: r.now, Redact: r.redactor.Redact, LockSession: r.lockSessionOf, ChannelOfSecret: r.channelOfSecret,
		TOTP:     &totp.Service{Store: st, Key: r.Vault.DerivedKey, Issuer: "homard", Now: r.now},
		CodeFrom: codeFrom, CodeFromReach: codeFromReach,
	})
	r.reviews.SetAudit(r.Owner.Audit) // a chat press on the review card is audited as the CLI's answer

	mode, err := policy.ParseMode(cfg.Permissions.Mode)
	if err != nil {
		return fmt.Errorf("%s: permissions.mode: %w", r.Paths.ConfigFile, err)
	}
	rules := replay.Rules(cfg)
	r.Arbiter = arbiter.New(arbiter.Options{
		Registry:   reg,
		Store:      st,
		Approvals:  r.Approvals,
		Redactor:   r.redactor,
		Mode:       mode,
		Rules:      rules,
		GuestTools: cfg.Permissions.GuestTools,
		Now:        r.now,
		// "allow" turns the private-egress check off; config rejects
		// anything but "ask" and "allow".
		AllowPrivateEgress: cfg.Permissions.PrivateEgress == "allow",
		// Config accepts only "session" and "value".
		TaintByValue: cfg.Permissions.Taint == "value",
		// Config accepts only "sandbox" and "ask" (policy.UnknownSandbox,
		// policy.UnknownAsk).
		UnknownCommands:   cfg.Commands.Unknown,
		CommandSlotInside: slotInside(ws),
		// Results over arbiter.DefaultArtifactChars characters become
		// artifacts read with read_artifact; no config key yet.
		// Approvals to run the workspace's code lapse when it changed.
		Workspace: ws,
		Monitor:   monitorLimits(cfg.Monitor),
	})
	// Runs a process that has since died left running are marked and
	// audited before anything else runs. Not fatal: doctor reports it.
	r.Start.Interrupted, r.Start.InterruptErr = r.Arbiter.RecoverInterrupted(ctx)
	r.Tasks = r.newTasks()
	return nil
}

// denyPaths lists the path patterns of the operator's deny rules, whatever
// their tool: commands may neither read nor change what they match.
func denyPaths(cfg *config.Config) []string {
	var out []string
	for _, rc := range cfg.Rules {
		if rc.Effect == string(policy.Deny) && rc.Path != "" {
			out = append(out, rc.Path)
		}
	}
	return out
}

// recipes are the operator's [[commands.recipes]] as run_command takes them.
func recipes(rs []config.Recipe) []tools.Recipe {
	var out []tools.Recipe
	for _, r := range rs {
		out = append(out, tools.Recipe{Alias: r.Alias, Argv: r.Argv, Description: r.Description})
	}
	return out
}

// logger is where background work logs: serve's log, else slog's default.
func (r *Runtime) logger() *slog.Logger {
	if l := r.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}

func memoryDir(p config.Paths) string { return filepath.Join(p.DataDir, "memory") }

// Close waits for memory captures still running (at most a grace, then
// cancels them), then releases the database and the workspace roots.
func (r *Runtime) Close() error {
	if r.captures != nil {
		r.captures.Close()
	}
	if err := turntrace.Close(r.tracer); err != nil { // the last spans, within a deadline
		r.logger().Warn("telemetry: last export", "err", err)
	}
	r.models.Close()
	errs := []error{r.Extensions.Close(), r.reqlog.Close()}
	if r.browser != nil {
		errs = append(errs, r.browser.Close())
	}
	r.caches.Close() // its refreshes hold workspace root locks
	if r.Workspace != nil {
		errs = append(errs, r.Workspace.Close())
	}
	if r.Store != nil {
		errs = append(errs, r.Store.Close())
	}
	if r.locks != nil {
		errs = append(errs, r.locks.Close())
	}
	return errors.Join(errs...)
}

// Init creates a new home (setup.Init) with its store where store.url
// says: never HOMARD_STORE_URL's (homard eval's copies keep their own;
// `homard init` calls setup.Init with it).
func Init(ctx context.Context, paths config.Paths, o config.InitOptions) (*config.Config, error) {
	return setup.Init(ctx, paths, o, "")
}

// MaybeRunSandboxHelper must be the first call in main: when homard was
// re-executed as the Landlock sandbox helper it confines itself and execs
// the planned program, never returning; otherwise it returns at once.
func MaybeRunSandboxHelper() { sandbox.MaybeRunHelper() }

// monitorLimits is config's [monitor] as the arbiter takes it: the zero
// Limits (every monitor off) when enabled = false.
func monitorLimits(m config.Monitor) monitor.Limits {
	if !m.On() {
		return monitor.Limits{}
	}
	return monitor.Limits{Window: m.Window.Std(), DeniedRepeat: m.DeniedRepeat, FetchBurst: m.FetchBurst, WriteSpread: m.WriteSpread}
}
