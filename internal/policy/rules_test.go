package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ruleTable pins every rule id constant to its wire value. Audit records,
// tool runs and approval rows store these strings: a change here is a
// deliberate change of a stored format, never a side effect of a rename.
var ruleTable = []struct {
	name, got, want string
}{
	{"RuleLimitWorkspace", RuleLimitWorkspace, "limit.workspace"},
	{"RuleLimitProtected", RuleLimitProtected, "limit.protected"},
	{"RuleLimitSensitive", RuleLimitSensitive, "limit.sensitive"},
	{"RuleLimitSymlink", RuleLimitSymlink, "limit.symlink"},
	{"RuleLimitSize", RuleLimitSize, "limit.size"},
	{"RuleLimitRootReadOnly", RuleLimitRootReadOnly, "limit.root-read-only"},
	{"RuleLimitSecretInArgs", RuleLimitSecretInArgs, "limit.secret-in-args"},
	{"RuleLimitSecretHost", RuleLimitSecretHost, "limit.secret-host"},
	{"RuleLimitBrowserOwner", RuleLimitBrowserOwner, "limit.browser-owner"},
	{"RuleLimitBrowser", RuleLimitBrowser, "limit.browser"},
	{"RuleLimitToolsOff", RuleLimitToolsOff, "limit.tools-off"},
	{"RuleLimitSecretHTTP", RuleLimitSecretHTTP, "limit.secret-http"},
	{"RuleLimitEgress", RuleLimitEgress, "limit.egress"},
	{"RuleLimitArtifact", RuleLimitArtifact, "limit.artifact"},
	{"RuleLimitMemoryOwner", RuleLimitMemoryOwner, "limit.memory-owner"},
	{"RuleLimitTaskOwner", RuleLimitTaskOwner, "limit.task-owner"},
	{"RuleLimitSandbox", RuleLimitSandbox, "limit.sandbox"},
	{"RuleLimitSessionOwner", RuleLimitSessionOwner, "limit.session-owner"},
	{"RuleLimitIntegrity", RuleLimitIntegrity, "limit.integrity"},
	{"RuleLimitProgramName", RuleLimitProgramName, "limit.program-name"},
	{"RuleLimitArgv", RuleLimitArgv, "limit.argv"},
	{"RuleLimitInlineCode", RuleLimitInlineCode, "limit.inline-code"},
	{"RuleLimitNetwork", RuleLimitNetwork, "limit.network"},
	{"RuleLimitShell", RuleLimitShell, "limit.shell"},
	{"RuleLimitWrapper", RuleLimitWrapper, "limit.wrapper"},
	{"RuleLimitSkill", RuleLimitSkill, "limit.skill"},
	{"RuleLimitSkillPermission", RuleLimitSkillPermission, "limit.skill-permission"},
	{"RuleTrustUnknown", RuleTrustUnknown, "trust.unknown"},
	{"RuleTrustGuestReadOnly", RuleTrustGuestReadOnly, "trust.guest-readonly"},
	{"RuleTrustGuestTools", RuleTrustGuestTools, "trust.guest-tools"},
	{"RuleRiskUnknown", RuleRiskUnknown, "risk.unknown"},
	{"RuleRiskCritical", RuleRiskCritical, "risk.critical"},
	{"RuleTaintPrivateEgress", RuleTaintPrivateEgress, "taint.private-egress"},
	{"RuleTaintPrivateValue", RuleTaintPrivateValue, "taint.private-value"},
	{"RuleRecipientNew", RuleRecipientNew, "recipient.new"},
	{"RuleSplitTool", RuleSplitTool, "split.worker-tool"},
	{"RuleSplitHost", RuleSplitHost, "split.worker-host"},
	{"RuleSplitSecret", RuleSplitSecret, "split.worker-secret"},
	{"RuleSplitApproved", RuleSplitApproved, "split.approved"},
	{"RuleSplitPlan", RuleSplitPlan, "split.plan"},
	{"RuleMonitorDeniedRepeat", RuleMonitorDeniedRepeat, "monitor.denied-repeat"},
	{"RuleMonitorFetchBurst", RuleMonitorFetchBurst, "monitor.fetch-burst"},
	{"RuleMonitorWriteSpread", RuleMonitorWriteSpread, "monitor.write-spread"},
	{"RuleModeUnknown", RuleModeUnknown, "mode.unknown"},
	{"RuleModeSafe", RuleModeSafe, "mode.safe"},
	{"RuleModeSmart", RuleModeSmart, "mode.smart"},
	{"RuleModeAutopilot", RuleModeAutopilot, "mode.autopilot"},
	{"RuleModeYolo", RuleModeYolo, "mode.yolo"},
	{"RuleModeSafeRunsCode", RuleModeSafeRunsCode, "mode.safe.runs-code"},
	{"RuleModeSmartRunsCode", RuleModeSmartRunsCode, "mode.smart.runs-code"},
	{"RuleModeAutopilotRunsCode", RuleModeAutopilotRunsCode, "mode.autopilot.runs-code"},
	{"RuleApprovalOnce", RuleApprovalOnce, "approval.once"},
	{"RuleApprovalLapsed", RuleApprovalLapsed, "approval.lapsed"},
	{"RuleApprovalTooManyPending", RuleApprovalTooManyPending, "approval.too-many-pending"},
	{"RuleBudgetCalls", RuleBudgetCalls, "budget.calls"},
	{"RuleBudgetUnits", RuleBudgetUnits, "budget.units"},
	{"RuleBudgetReserve", RuleBudgetReserve, "budget.reserve"},
	{"RuleBudgetTokens", RuleBudgetTokens, "budget.tokens"},
	{"RuleLoopStopped", RuleLoopStopped, "loop.stopped"},
	{"RuleLoopFinalAnswer", RuleLoopFinalAnswer, "loop.final-answer"},
	{"RuleLookupUnknown", RuleLookupUnknown, "lookup.unknown"},
	{"RuleLookupProxy", RuleLookupProxy, "lookup.proxy"},
	{"RuleDecodeStrict", RuleDecodeStrict, "decode.strict"},
	{"RuleArgsInvalid", RuleArgsInvalid, "args.invalid"},
	{"RulePrepareFailed", RulePrepareFailed, "prepare.failed"},
	{"RuleRecoveryInterrupted", RuleRecoveryInterrupted, "recovery.interrupted"},
	// The ids built by a function, with a sample argument.
	{"RuleModeRead(ModeSafe)", RuleModeRead(ModeSafe), "mode.safe.read"},
	{"RuleModeRead(ModeSmart)", RuleModeRead(ModeSmart), "mode.smart.read"},
	{"RuleModeRead(ModeAutopilot)", RuleModeRead(ModeAutopilot), "mode.autopilot.read"},
	{"RuleModeRead(ModeYolo)", RuleModeRead(ModeYolo), "mode.yolo.read"},
	{"RuleOperator(\"no-push\")", RuleOperator("no-push"), "rule.no-push"},
	{"RuleGrant(\"g-1\")", RuleGrant("g-1"), "grant.g-1"},
	{"RuleMCPChanged", RuleMCPChanged, "extension.mcp-changed"},
	{"RuleTaskAdded", RuleTaskAdded, "task.added"},
	{"RuleTaskApproved", RuleTaskApproved, "task.approved"},
	{"RuleTaskRenewed", RuleTaskRenewed, "task.renewed"},
	{"RuleTaskPaused", RuleTaskPaused, "task.paused"},
	{"RuleTaskResumed", RuleTaskResumed, "task.resumed"},
	{"RuleTaskRemoved", RuleTaskRemoved, "task.removed"},
	{"RuleTaskRefused", RuleTaskRefused, "task.refused"},
	{"RuleTaskProfile", RuleTaskProfile, "task.profile"},
	{"RuleTaskStopped", RuleTaskStopped, "task.stopped"},
	{"RuleTaskCompleted", RuleTaskCompleted, "task.completed"},
	{"RuleTaskFailed", RuleTaskFailed, "task.failed"},
	{"RuleCeilingExceeded", RuleCeilingExceeded, "ceiling.exceeded"},
}

// ruleFamilies are the prefixes of every rule id; a string literal that
// starts with one belongs in rules.go.
var ruleFamilies = []string{"limit.", "trust.", "budget.", "approval.", "mode.", "risk.", "taint.",
	"rule.", "grant.", "loop.", "lookup.", "decode.", "args.", "prepare.", "recovery.", "task.", "extension.", "split.", "monitor.", "ceiling.", "recipient."}

func TestRuleIDValues(t *testing.T) {
	seen := map[string]string{}
	for _, r := range ruleTable {
		t.Run(r.name, func(t *testing.T) {
			if r.got != r.want {
				t.Errorf("%s = %q; want %q (rule ids are stored in audit records and approval rows: changing one needs a migration)", r.name, r.got, r.want)
			}
			if other, dup := seen[r.got]; dup {
				t.Errorf("%s and %s are both %q; each rule id names one rule", r.name, other, r.got)
			}
			seen[r.got] = r.name
			if !slices.ContainsFunc(ruleFamilies, func(p string) bool { return strings.HasPrefix(r.got, p) }) {
				t.Errorf("%s = %q starts with none of the families %q; add its family to ruleFamilies", r.name, r.got, ruleFamilies)
			}
		})
	}
}

// TestRuleTableComplete keeps ruleTable and rules.go in step: every
// exported constant in rules.go has a row, and every row names one.
func TestRuleTableComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "rules.go", nil, 0)
	if err != nil {
		t.Fatalf("parse rules.go: %v", err)
	}
	var consts []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if n.IsExported() {
					consts = append(consts, n.Name)
				}
			}
		}
	}
	if len(consts) == 0 {
		t.Fatal("found no constants in rules.go")
	}
	var rows []string
	for _, r := range ruleTable {
		if !strings.Contains(r.name, "(") {
			rows = append(rows, r.name)
		}
	}
	for _, c := range consts {
		if !slices.Contains(rows, c) {
			t.Errorf("constant %s in rules.go has no row in ruleTable; add one with its exact value", c)
		}
	}
	for _, r := range rows {
		if !slices.Contains(consts, r) {
			t.Errorf("ruleTable row %s names no constant in rules.go; remove it", r)
		}
	}
}

// TestRuleIDsDocumented: docs/RULES.md has a row for every rule id.
func TestRuleIDsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "RULES.md"))
	if err != nil {
		t.Fatalf("read docs/RULES.md: %v", err)
	}
	ids := []string{"mode.<mode>.read", "rule.<id>", "grant.<id>"}
	for _, r := range ruleTable {
		if !strings.Contains(r.name, "(") {
			ids = append(ids, r.want)
		}
	}
	for _, id := range ids {
		if !strings.Contains(string(doc), "`"+id+"`") {
			t.Errorf("docs/RULES.md does not mention `%s`; add a row saying when it fires and what the owner can do", id)
		}
	}
}

// literalAllowed lists the files outside rules.go that may spell a rule
// id, and why.
var literalAllowed = map[string]string{
	// store imports no internal package, so it keeps its own copy of
	// RuleRecoveryInterrupted for its queries; internal/arbiter's
	// TestRunInterruptedIsARuleID pins the two equal.
	"internal/store/runlock.go": "recovery.interrupted",
}

// ruleLiterals returns the string literals in src that start with a rule
// family, as "line: value".
func ruleLiterals(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		b, ok := n.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(b.Value)
		if err != nil {
			return true
		}
		if slices.ContainsFunc(ruleFamilies, func(p string) bool { return strings.HasPrefix(s, p) }) {
			found = append(found, strconv.Itoa(fset.Position(b.Pos()).Line)+": "+s)
		}
		return true
	})
	return found, nil
}

func TestRuleLiteralsFinder(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"constant", "package p\nconst x = \"limit.workspace\"\n", []string{"2: limit.workspace"}},
		{"argument", "package p\nfunc f() { g(\"approval.once\", 1) }\n", []string{"2: approval.once"}},
		{"built", "package p\nfunc f(m string) string { return \"mode.\" + m + \".read\" }\n", []string{"2: mode."}},
		{"raw string", "package p\nvar x = `budget.calls`\n", []string{"2: budget.calls"}},
		{"format", "package p\nvar x = \"trust.%s\"\n", []string{"2: trust.%s"}},
		{"reason text mentions a mode", "package p\nvar x = \"safe mode asks.\"\n", nil},
		{"config key", "package p\nvar x = \"commands.path\"\n", nil},
		{"comment", "package p\n// \"limit.workspace\"\nvar x = 1\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ruleLiterals(token.NewFileSet(), c.name+".go", c.src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ruleLiterals(%q) = %q; want %q", c.src, got, c.want)
			}
		})
	}
}

// TestNoRuleIDLiteralsOutsideRules: non-test code names rule ids through
// the constants and functions of rules.go, so a rename is one edit and a
// typo is a compile error. Tests may spell ids: they pin the wire value.
func TestNoRuleIDLiteralsOutsideRules(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "internal/policy/rules.go" {
			return nil
		}
		files++
		found, err := ruleLiterals(fset, p, nil)
		if err != nil {
			return err
		}
		for _, f := range found {
			if allowed, ok := literalAllowed[rel]; ok && strings.HasSuffix(f, ": "+allowed) {
				continue
			}
			t.Errorf("%s:%s: a rule id spelled as a literal; use (or add) a constant or function in internal/policy/rules.go", rel, f)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d Go files under %s; the module root is wrong", files, root)
	}
}

// moduleRoot is the folder holding go.mod, found upwards from the test's
// working directory (the package folder).
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}
