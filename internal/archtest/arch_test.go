package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/homard/homard"

// allowed maps a package (relative to the module) to the internal packages
// it may import. "*" means any. A package missing here fails the test: a
// new package must be placed on the map first.
var allowed = map[string][]string{
	// audit: `homard audit verify --file` checks an export with no home
	// and no runtime.
	// memreview: `homard memory review` prints a proposal as the card does
	// (memreview.Line) and tells its errors apart.
	"cmd/homard": {"internal/app", "internal/audit", "internal/automation", "internal/channel", "internal/config", "internal/eval", "internal/service", "internal/setup", "internal/split", "internal/store", "internal/store/pgstore", "internal/termtext", "internal/lang",
		"internal/memreview"},
	// homard eval (issue 25): scenarios run through the composed runtime
	// in a throw-away home, as a command drives it (app, the one other
	// importer of app besides cmd/homard); config to edit the copy's
	// config, secrets to put canaries in its vault, sandbox to skip what
	// cannot run here, llmtest for the scripted model on the real wire,
	// memory for the notes a world holds before its turn, provider to
	// release the owner's model key for --live as homard releases it.
	"internal/eval": {"internal/app", "internal/channel", "internal/config", "internal/memory", "internal/provider", "internal/secrets", "internal/sandbox", "internal/llm/llmtest"},
	"internal/app":  {"*"},
	// Per-value taint: a session's private text, found again in outbound
	// values (pure: no I/O, no clock).
	"internal/taint": {},
	// Planner and workers (issue 23): the plan, its sanitisers, the run
	// over Planner and Workers interfaces (tool for strict decoding), and
	// the Workers that run items as agent turns under arbiter.Limit.
	"internal/split": {"internal/tool", "internal/policy", "internal/agent", "internal/arbiter", "internal/llm"},
	// Memory capture: batches of the owner's turns, one model call without
	// tools, offers to memory's candidate buffer; recall before a turn.
	"internal/capture": {"internal/store", "internal/memory", "internal/config", "internal/llm", "internal/agent", "internal/channel"},
	// The weekly memory review: a tool-less model call over the owner's
	// units, its checked proposals stored and queued as one card (the
	// card's buttons are channel/chat's plain type; its text goes through
	// lang); schedule for the weekly slot.
	"internal/memreview": {"internal/store", "internal/memory", "internal/config", "internal/llm", "internal/schedule",
		"internal/lang", "internal/channel/chat"},
	// The owner's second factor: authenticators kept in the store.
	"internal/totp": {"internal/store"},
	// Monitors over a session's trajectory: pure (times passed in); policy
	// for the rule ids and actions.
	"internal/monitor": {"internal/policy"},
	// config validates [channels.NAME] against the platform table.
	"internal/config": {"internal/channel/chat", "internal/channel/platforms", "internal/policy", "internal/lang", "internal/atomicfile"},
	// The language a person reads (issue 26): the setting, the catalog,
	// dates and numbers; stdlib only. langscan is its tests' reader.
	"internal/lang":          {},
	"internal/lang/langscan": {},
	// `homard service`: the systemd unit that runs serve (the bubblewrap check from sandbox).
	"internal/service": {"internal/config", "internal/sandbox", "internal/atomicfile"},
	// `homard setup` and `init`: the config, the key in the vault, the
	// provider test, the database created; run_command's program folders
	// (tools) for the toolchain check.
	"internal/setup":     {"internal/config", "internal/secrets", "internal/provider", "internal/llm", "internal/store", "internal/tools", "internal/policy", "internal/lang"},
	"internal/policy":    {},
	"internal/tool":      {"internal/policy"},
	"internal/changeset": {"internal/workspace", "internal/policy"}, // the one gate for every write
	"internal/tools":     {"internal/tool", "internal/policy", "internal/workspace", "internal/changeset", "internal/egress", "internal/sandbox", "internal/secrets", "internal/memory", "internal/skill"},
	"internal/skill":     {"internal/store", "internal/tool", "internal/termtext"}, // trust pins, strict decoding, readable names
	"internal/workspace": {"internal/atomicfile"},
	"internal/egress":    {},
	// The isolated browser (issue 24): every request a page makes is
	// checked by egress (its open proxy and Client.Check).
	"internal/browser": {"internal/egress"},
	// What each model request contained (homard logs, issue 25).
	"internal/reqlog": {"internal/llm"},
	// Policy replay (issue 25): recorded calls decided again under a
	// proposed configuration (policy), read from the store.
	"internal/replay": {"internal/policy", "internal/store", "internal/config"},
	// propose_reminder and propose_task (issue 26): the model proposes a
	// task's exact body as its plan, over the Tasks interface automation
	// implements (Service.Proposals).
	"internal/tasktools": {"internal/tool", "internal/policy"},
	// The browser tools (issue 24): ordinary tools over the engine's
	// Engine interface; egress checks a URL when it is planned.
	"internal/browsertools": {"internal/tool", "internal/policy", "internal/egress", "internal/browser", "internal/channel"},
	"internal/sandbox":      {"internal/workspace"}, // the change-set stream's writer
	"internal/secrets":      {"internal/filelock", "internal/atomicfile"},
	"internal/store":        {"internal/store/engine"},
	// The seam a second database plugs into (issue 27), and PostgreSQL's
	// engine: the one importer of pgx, linked only with -tags postgres.
	"internal/store/engine":  {},
	"internal/store/pgstore": {"internal/store/engine"},
	// Session turn locks: a file lock, and the store's on a shared database.
	"internal/sessionlock": {},
	// Tests' stores on either engine; imported by tests only.
	"internal/store/storetest": {"internal/store", "internal/store/engine", "internal/store/pgstore"},
	"internal/approval":        {"internal/store", "internal/policy"},
	"internal/audit":           {"internal/store", "internal/policy", "internal/tool", "internal/termtext"}, // tool: strict decoding of an export; termtext: hidden characters escaped
	"internal/integrity":       {"internal/store", "internal/audit"},
	"internal/arbiter":         {"internal/tool", "internal/policy", "internal/approval", "internal/audit", "internal/secrets", "internal/store", "internal/taint", "internal/monitor"},
	"internal/archtest":        {},
	"internal/schedule":        {}, // pure slot arithmetic: stdlib only, no clock
	"internal/llm":             {},
	// Reaching the configured model: the key (secrets), the wire clients,
	// the deadlines; agent for the context error Explain passes through.
	"internal/provider": {"internal/agent", "internal/config", "internal/llm", "internal/llm/openai", "internal/llm/anthropic", "internal/secrets"},
	"internal/history":  {}, // recent sessions' decoded messages: generic, stdlib only
	"internal/memtrim":  {}, // gives back start-up memory (madvise)
	// OpenTelemetry export (issue 25): hand-rolled OTLP/HTTP JSON on the
	// standard library alone (no SDK: binary size).
	"internal/telemetry": {},
	// Agent turns followed into spans and counters (the attribute
	// allowlist), exported by telemetry; app wires it into every turn.
	"internal/turntrace":  {"internal/telemetry", "internal/agent", "internal/arbiter", "internal/config", "internal/llm", "internal/policy"},
	"internal/memory":     {"internal/store", "internal/filelock", "internal/atomicfile"},
	"internal/filelock":   {}, // flock on one file, for memory.md and the vault
	"internal/atomicfile": {}, // a file replaced whole: config, memory.md, vault, checkpoints, unit
	// The one facade for the owner's own actions, used by the CLI and the
	// gateway alike (approvals, grants, audit, memory, sessions, tokens,
	// secrets, rollbacks through the gate, the authenticator).
	"internal/owner": {"internal/store", "internal/approval", "internal/audit", "internal/memory", "internal/secrets",
		"internal/changeset", "internal/channel", "internal/policy", "internal/tool", "internal/totp"},
	"internal/agent":        {"internal/llm", "internal/tool", "internal/policy", "internal/arbiter", "internal/store", "internal/memory"},
	"internal/channel":      {},
	"internal/channel/chat": {}, // the chat-platform adapter contract: plain types
	// lang: the TUI's and the web UI's labels and notices in the owner's
	// language (issue 26 point 3).
	"internal/channel/tui": {"internal/channel", "internal/termtext", "internal/lang"},
	"internal/channel/web": {"internal/channel", "internal/channel/web/wire", "internal/lang"},
	// The gateway's JSON shapes, shared by the gateway and app's attach client.
	"internal/channel/web/wire": {"internal/channel"},
	"internal/termtext":         {},
	"internal/llm/openai":       {"internal/llm"},
	"internal/llm/anthropic":    {"internal/llm"},
	"internal/llm/llmtest":      {"internal/llm"},

	// The chat adapters (internal/channel/telegram, discord, feishu and
	// their codecs and fakes) need no row: see checkImports.
	// The one platform table: each row builds its adapter.
	"internal/channel/platforms": {"internal/channel/chat", adapters},

	// Scheduled tasks' sealed bodies (tool.Canonical, policy.Mode), the
	// schedule they seal (Body.Spec) and a split task's plan (split.Plan,
	// one type wherever a plan goes).
	"internal/task": {"internal/store", "internal/tool", "internal/policy", "internal/schedule", "internal/split"},

	// Scheduled tasks: the task service, the runner and the scheduler.
	// Beyond the design's agent, arbiter, store, llm, task and schedule:
	// config (the [automation] limits, the channels a run may deliver to),
	// policy and tool (modes, rule ids, the complete_task spec), audit (a
	// task's life is audited), channel (run-now's tool events, approval
	// cards, the web's channel.TaskAdmin), approval (the task session's
	// prefix, which no session grant covers), sandbox (a run that may
	// run commands is refused without a confining backend) and split (a
	// split task's plan, made at add and run by split.RunPlan). It
	// reaches app's turns, outbox, approval waiter and the planner and
	// worker models through its own interfaces.
	"internal/automation": {"internal/agent", "internal/arbiter", "internal/store", "internal/llm", "internal/task", "internal/schedule",
		"internal/config", "internal/policy", "internal/tool", "internal/audit", "internal/channel", "internal/approval", "internal/sandbox",
		"internal/split", "internal/tasktools"},

	// The MCP client: the only importer of the go-sdk (see exclusive).
	"internal/mcp": {"internal/tool", "internal/policy"},
	// A hand-written stdio MCP server for tests outside internal/mcp.
	"internal/mcp/mcptest": {},

	// The glue between the extension adapters and the rest of homard: the
	// MCP servers homard uses (mcp, started with sandbox, url servers and
	// proxies through egress, tokens and proxy credentials from secrets,
	// trust pins in store, a changed listing audited with audit and
	// policy's rule), homard serving its tools to a paired client (each
	// call an arbiter proposal in a paired session of approval's,
	// untrusted results wrapped as the agent wraps them), and skills
	// (skill's library, tools' run_skill over changeset's gate). Its
	// config is config's; termtext makes names shown to doctor readable.
	"internal/extensions": {"internal/agent", "internal/approval", "internal/arbiter", "internal/audit", "internal/changeset",
		"internal/config", "internal/egress", "internal/mcp", "internal/policy", "internal/sandbox", "internal/secrets",
		"internal/skill", "internal/store", "internal/termtext", "internal/tool", "internal/tools"},
	// The chat core (app implements its Turner and Approvals): config for
	// the channels' sections, audit and policy for a refused delivery's
	// record in the delivery's own transaction, secrets for ErrNoSecret of
	// a missing bot token; lang for cards and notices in the chat's
	// language.
	"internal/chats": {"internal/store", "internal/approval", "internal/channel", "internal/channel/chat",
		"internal/config", "internal/audit", "internal/policy", "internal/secrets", "internal/lang"},
}

// adapters, in an allowed list, stands for every chat adapter package: a
// package below internal/channel/ with no row of its own.
const adapters = "<adapters>"

// isAdapter reports whether target is a chat adapter package.
func isAdapter(target string) bool {
	rest, ok := strings.CutPrefix(target, "internal/channel/")
	_, known := allowed[target]
	return ok && !known && !strings.Contains(rest, "/")
}

// exclusive names third-party import prefixes only one package may use.
var exclusive = map[string]string{
	"modernc.org/sqlite":                     "internal/store",
	"github.com/jackc/pgx":                   "internal/store/pgstore",
	"github.com/charmbracelet/bubbletea":     "internal/channel/tui",
	"charm.land/bubbletea":                   "internal/channel/tui",
	"github.com/charmbracelet/huh":           "cmd/homard", // the setup wizard's forms
	"github.com/modelcontextprotocol/go-sdk": "internal/mcp",
	"github.com/bwmarrin/discordgo":          "internal/channel/discord",
	// river runs scheduled slots as jobs on PostgreSQL, linked only with
	// -tags postgres (TestPostgresOnlyWithItsTag).
	"github.com/riverqueue": "internal/automation",
}

// banned names third-party import prefixes no production package may
// import, directly or through another module, with why. Tests may: only
// production imports are checked.
var banned = map[string]string{
	// chromedp, its protocol types and the JSON v2 library they use.
	"github.com/chromedp": "the binary must stay under 25 MB (cdproto's types and JSON v2 cost 0.7 MB; chromedp would add 1.5 MB) and chromedp drives Chromium over a TCP port any local process can reach; " +
		"internal/browser speaks the DevTools protocol over its pipe with the plain structs of its protocol.go",
	"github.com/go-json-experiment/json": "JSON v2 and the cdproto types that used it cost 0.7 MB of a binary held under 25 MB; use encoding/json",
}

// bannedPrefix returns the banned prefix imp falls under, or "".
func bannedPrefix(imp string) string {
	for prefix := range banned {
		if imp == prefix || strings.HasPrefix(imp, prefix+"/") {
			return prefix
		}
	}
	return ""
}

type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	Doc        string
	Imports    []string
	Deps       []string // every package it needs, its imports' imports too (tests' not)
	GoFiles    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	// With the build tags of every optional part, so that their files
	// are held to the table too.
	cmd := exec.Command("go", "list", "-tags", "postgres", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages; is the module path %s?", len(pkgs), module)
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func TestImportsFollowThePackageTable(t *testing.T) {
	for _, p := range listPackages(t) {
		name := rel(p.ImportPath)
		if err := checkImports(name, p.Imports); err != "" {
			t.Error(err)
		}
		for _, d := range p.Deps {
			if prefix := bannedPrefix(d); prefix != "" {
				t.Errorf("%s: depends on %s through its imports; no production package may: %s", name, d, banned[prefix])
				break
			}
		}
	}
}

// checkImports returns a description of the first rule name breaks.
func checkImports(name string, imports []string) string {
	may, known := allowed[name]
	if !known && strings.HasPrefix(name, "internal/channel/") {
		// A chat platform's adapter (a row of internal/channel/platforms)
		// and its own subpackages (a codec, a fake of the platform): the
		// adapter contract and each other only, so that adding a platform
		// needs no row here.
		root := "internal/channel/" + strings.SplitN(strings.TrimPrefix(name, "internal/channel/"), "/", 2)[0]
		may, known = []string{"internal/channel/chat", root + "/..."}, true
	}
	if !known {
		return name + ": package is not in the architecture table (internal/archtest and docs/ARCHITECTURE.md)"
	}
	for _, imp := range imports {
		if imp == "testing" || strings.HasPrefix(imp, "testing/") {
			return name + ": production code imports " + imp
		}
		if prefix := bannedPrefix(imp); prefix != "" {
			return name + ": imports " + imp + "; no production package may: " + banned[prefix]
		}
		for prefix, owner := range exclusive {
			if (imp == prefix || strings.HasPrefix(imp, prefix+"/")) && name != owner {
				return name + ": imports " + imp + "; only " + owner + " may"
			}
		}
		if name == "internal/policy" && pureForbidden(imp) {
			return name + ": imports " + imp + "; policy is pure (no I/O, no clock, no third-party code)"
		}
		if !strings.HasPrefix(imp, module+"/") {
			continue
		}
		target := rel(imp)
		if target == "internal/app" || strings.HasPrefix(target, "cmd/") {
			// Only the two drivers of the composed runtime: the command
			// and homard eval's scenario runner, which only the command
			// imports.
			if (name != "cmd/homard" && name != "internal/eval") || target != "internal/app" {
				return name + ": imports " + target + "; nothing imports app or cmd"
			}
		}
		if target == "internal/eval" && name != "cmd/homard" {
			return name + ": imports internal/eval; only cmd/homard may"
		}
		ok := false
		for _, m := range may {
			switch {
			case m == "*", m == target,
				m == adapters && isAdapter(target),
				strings.HasSuffix(m, "/...") && strings.HasPrefix(target, strings.TrimSuffix(m, "...")):
				ok = true
			}
		}
		if !ok {
			return name + ": imports " + target + ", which the package table does not allow"
		}
	}
	return ""
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.Name == "main" {
			if !strings.HasPrefix(p.Doc, "Homard ") && !strings.HasPrefix(p.Doc, "Command ") {
				t.Errorf("%s: command doc comment should start with \"Command homard\" or \"Homard\", got %q", rel(p.ImportPath), p.Doc)
			}
			continue
		}
		if !strings.HasPrefix(p.Doc, "Package "+p.Name+" ") {
			t.Errorf("%s: missing package doc comment starting with \"Package %s \"", rel(p.ImportPath), p.Name)
		}
	}
}

// pureForbidden reports imports that would let policy do I/O or read the
// clock or environment, or pull in third-party code.
func pureForbidden(imp string) bool {
	switch imp {
	case "os", "os/exec", "io", "io/fs", "io/ioutil", "net", "net/http", "time", "syscall", "database/sql", "unsafe":
		return true
	}
	first, _, _ := strings.Cut(imp, "/")
	return strings.Contains(first, ".") && !strings.HasPrefix(imp, module+"/")
}

// TestCheckImportsCatchesViolations proves the checker is not vacuous.
func TestCheckImportsCatchesViolations(t *testing.T) {
	bad := []struct {
		name    string
		imports []string
	}{
		{"internal/policy", []string{module + "/internal/store"}},
		{"internal/policy", []string{"os", module + "/internal/tool"}},
		{"internal/tool", []string{"modernc.org/sqlite"}},
		{"internal/arbiter", []string{module + "/internal/app"}},
		{"internal/workspace", []string{"testing"}},
		{"internal/nosuch", nil},
		{"internal/policy", []string{"time"}},
		{"internal/policy", []string{"github.com/BurntSushi/toml"}},
		// A new chat adapter needs no row, but stays an adapter: no
		// store, no app-side channel contract, no other adapter.
		{"internal/channel/matrix", []string{module + "/internal/store"}},
		{"internal/channel/matrix", []string{module + "/internal/channel"}},
		{"internal/channel/matrix", []string{module + "/internal/channel/telegram"}},
		{"internal/channel/matrix/matrixtest", []string{module + "/internal/channel/web"}},
		{"internal/channel/platforms", []string{module + "/internal/channel/web"}},
		{"internal/channel/platforms", []string{module + "/internal/store"}},
		// Not even the browser: it speaks the protocol with its own structs.
		{"internal/browser", []string{"github.com/chromedp/cdproto/page"}},
		{"internal/browser", []string{"github.com/chromedp/chromedp"}},
		{"internal/app", []string{"github.com/go-json-experiment/json/jsontext"}},
		// eval may drive app, but nothing below reaches eval, and eval
		// reaches no command.
		{"internal/app", []string{module + "/internal/eval"}},
		{"internal/eval", []string{module + "/cmd/homard"}},
		// river's jobs are the scheduler's: not the store's, nor app's.
		{"internal/store/pgstore", []string{"github.com/riverqueue/river"}},
		{"internal/app", []string{"github.com/riverqueue/river/rivermigrate"}},
	}
	for _, b := range bad {
		if checkImports(b.name, b.imports) == "" {
			t.Errorf("checkImports(%s, %v) accepted a forbidden import", b.name, b.imports)
		}
	}
	good := []struct {
		name    string
		imports []string
	}{
		{"internal/arbiter", []string{module + "/internal/tool", "context"}},
		{"internal/eval", []string{module + "/internal/app"}},
		// The twins: a new platform's adapter, its codec and its fake,
		// and its row in the platform table, with no archtest row.
		{"internal/channel/matrix", []string{module + "/internal/channel/chat", module + "/internal/channel/matrix/codec"}},
		{"internal/channel/matrix/matrixtest", []string{module + "/internal/channel/matrix/codec"}},
		{"internal/channel/platforms", []string{module + "/internal/channel/chat", module + "/internal/channel/matrix"}},
		{"internal/automation", []string{"github.com/riverqueue/river", "github.com/riverqueue/river/riverdriver/riverdatabasesql"}},
	}
	for _, g := range good {
		if got := checkImports(g.name, g.imports); got != "" {
			t.Errorf("checkImports rejected an allowed import: %s", got)
		}
	}
}

// TestPostgresOnlyWithItsTag: the default binary links no PostgreSQL
// driver and no river (pgx would push it past its 25 MB limit, and river
// runs only on PostgreSQL; issue 27), and its twin, a build with -tags
// postgres links the engine and river's scheduler.
func TestPostgresOnlyWithItsTag(t *testing.T) {
	deps := func(tags ...string) string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, module+"/cmd/homard")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", tags, err, out)
		}
		return string(out)
	}
	if d := deps(); strings.Contains(d, "github.com/jackc/pgx") || strings.Contains(d, "/internal/store/pgstore\n") {
		t.Error("the default build of cmd/homard links pgx or the PostgreSQL engine; only -tags postgres may")
	}
	if d := deps(); strings.Contains(d, "github.com/riverqueue") {
		t.Error("the default build of cmd/homard links river; only -tags postgres may")
	}
	d := deps("-tags", "postgres")
	if !strings.Contains(d, "github.com/jackc/pgx/v5/stdlib\n") || !strings.Contains(d, module+"/internal/store/pgstore\n") {
		t.Error("a -tags postgres build of cmd/homard does not link the PostgreSQL engine")
	}
	if !strings.Contains(d, "github.com/riverqueue/river\n") || !strings.Contains(d, "github.com/riverqueue/river/riverdriver/riverdatabasesql\n") {
		t.Error("a -tags postgres build of cmd/homard does not link river's scheduler")
	}
}
