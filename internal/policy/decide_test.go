package policy

import (
	"fmt"
	"testing"
)

// in builds an Input from a base (the owner reading a file in safe mode)
// and changes.
func in(changes ...func(*Input)) Input {
	i := Input{Tool: "read_file", Action: ActionRead, Risk: RiskLow, ReadOnly: true,
		Targets: []string{"notes/a.md"}, Trust: TrustOwner, Mode: ModeSafe}
	for _, c := range changes {
		c(&i)
	}
	return i
}

func trust(t Trust) func(*Input)       { return func(i *Input) { i.Trust = t } }
func mode(m Mode) func(*Input)         { return func(i *Input) { i.Mode = m } }
func risk(r Risk) func(*Input)         { return func(i *Input) { i.Risk = r } }
func targets(t ...string) func(*Input) { return func(i *Input) { i.Targets = t } }
func rules(r ...Rule) func(*Input)     { return func(i *Input) { i.Rules = r } }
func guests(g ...string) func(*Input)  { return func(i *Input) { i.Guest = g } }

// write makes the Input a medium-risk file write.
func write(i *Input) {
	i.Tool, i.Action, i.Risk, i.ReadOnly = "write_file", ActionWrite, RiskMedium, false
}

func allowRule(id, tool, path string) Rule {
	return Rule{ID: id, Tool: tool, Path: path, Effect: Allow}
}
func askRule(id, tool, path string) Rule  { return Rule{ID: id, Tool: tool, Path: path, Effect: Ask} }
func denyRule(id, tool, path string) Rule { return Rule{ID: id, Tool: tool, Path: path, Effect: Deny} }

type decideCase struct {
	name    string
	in      Input
	verdict Verdict
	rule    string
}

func checkDecide(t *testing.T, tests []decideCase) {
	t.Helper()
	for _, tt := range tests {
		got := Decide(tt.in)
		if got.Verdict != tt.verdict || got.Rule != tt.rule {
			t.Errorf("%s: Decide(%+v) = %v; want %s (%s)", tt.name, tt.in, got, tt.verdict, tt.rule)
		}
		if got.Reason == "" {
			t.Errorf("%s: Decide(%+v) gave no reason", tt.name, tt.in)
		}
	}
}

func TestDecideTrust(t *testing.T) {
	checkDecide(t, []decideCase{
		{"owner read", in(), Allow, "mode.safe.read"},
		{"guest listed read", in(trust(TrustGuest), guests("list_dir", "read_file")), Allow, "trust.guest-tools"},
		{"guest unlisted read", in(trust(TrustGuest), guests("list_dir")), Deny, "trust.guest-tools"},
		{"guest with no list", in(trust(TrustGuest)), Deny, "trust.guest-tools"},
		{"guest listed write tool", in(trust(TrustGuest), write, guests("write_file")), Deny, "trust.guest-readonly"},
		{"guest listed read-only medium risk", in(trust(TrustGuest), risk(RiskMedium), guests("read_file")), Deny, "trust.guest-readonly"},
		{"guest listed read-only critical", in(trust(TrustGuest), risk(RiskCritical), guests("read_file")), Deny, "trust.guest-readonly"},
		{"guest listed not read-only low risk", in(trust(TrustGuest), func(i *Input) { i.ReadOnly = false }, guests("read_file")), Deny, "trust.guest-readonly"},
		{"guest listed, deny rule", in(trust(TrustGuest), guests("read_file"), rules(denyRule("no-notes", "read_file", "notes/**"))), Deny, "rule.no-notes"},
		{"guest listed, ask rule", in(trust(TrustGuest), guests("read_file"), rules(askRule("ask-notes", "read_file", ""))), Ask, "rule.ask-notes"},
		{"guest listed, allow rule", in(trust(TrustGuest), guests("read_file"), rules(allowRule("r", "read_file", ""))), Allow, "trust.guest-tools"},
		{"guest listed, invalid mode", in(trust(TrustGuest), guests("read_file"), mode("")), Deny, "mode.unknown"},
		{"guest listed, invalid risk", in(trust(TrustGuest), guests("read_file"), risk(0)), Deny, "risk.unknown"},
		{"guest list is exact", in(trust(TrustGuest), guests("read_file ", "Read_file")), Deny, "trust.guest-tools"},
		{"unknown", in(trust(TrustUnknown)), Deny, "trust.unknown"},
		{"unknown in yolo with allow rule", in(trust(TrustUnknown), mode(ModeYolo), rules(allowRule("r", "read_file", ""))), Deny, "trust.unknown"},
		{"empty trust", in(trust("")), Deny, "trust.unknown"},
		{"trust is case-sensitive", in(trust("Owner")), Deny, "trust.unknown"},
		{"unknown trust beats invalid mode", in(trust("admin"), mode("root")), Deny, "trust.unknown"},
	})
	// A paired MCP client is decided as the owner in its mode, but never
	// above smart: a write asks in autopilot and yolo (decided as smart),
	// while the same write runs for the owner in yolo (the twin), and a
	// read runs for both.
	checkDecide(t, []decideCase{
		{"paired read", in(trust(TrustPaired)), Allow, "mode.safe.read"},
		{"paired write in yolo", in(trust(TrustPaired), write, risk(RiskMedium), mode(ModeYolo)), Ask, "mode.smart"},
		{"paired write in autopilot", in(trust(TrustPaired), write, risk(RiskMedium), mode(ModeAutopilot)), Ask, "mode.smart"},
		{"owner write in yolo", in(write, risk(RiskMedium), mode(ModeYolo)), Allow, "mode.yolo"},
		{"paired read in yolo", in(trust(TrustPaired), mode(ModeYolo)), Allow, "mode.smart.read"},
	})
	if _, err := ParseTrust(string(TrustPaired)); err == nil {
		t.Error("ParseTrust accepts paired: only `homard mcp serve` may set it, never a channel")
	}
	// A listed guest's read-only low-risk tool runs in every mode.
	for _, m := range Modes {
		checkDecide(t, []decideCase{{"guest in " + string(m), in(trust(TrustGuest), guests("read_file"), mode(m)), Allow, "trust.guest-tools"}})
	}
}

// TestDecideModeMatrix covers each mode × risk × read-only for the owner
// without operator rules.
func TestDecideModeMatrix(t *testing.T) {
	// want[mode][risk-1] for a Plan that is not a read-only low-risk one.
	want := map[Mode][4]Verdict{
		ModeSafe:      {Ask, Ask, Ask, Ask},
		ModeSmart:     {Ask, Ask, Ask, Ask},
		ModeAutopilot: {Allow, Allow, Ask, Ask},
		ModeYolo:      {Allow, Allow, Allow, Ask},
	}
	for _, m := range Modes {
		for r := RiskLow; r <= RiskCritical; r++ {
			for _, ro := range []bool{true, false} {
				input := in(mode(m), risk(r), func(i *Input) { i.ReadOnly = ro })
				verdict, rule := want[m][r-1], "mode."+string(m)
				switch {
				case r == RiskCritical:
					rule = "risk.critical"
				case ro && r == RiskLow:
					verdict, rule = Allow, "mode."+string(m)+".read"
				}
				checkDecide(t, []decideCase{{fmt.Sprintf("%s/%s/read-only=%v", m, r, ro), input, verdict, rule}})
			}
		}
	}
}

func TestDecideInvalid(t *testing.T) {
	checkDecide(t, []decideCase{
		{"empty mode", in(mode("")), Deny, "mode.unknown"},
		{"mode is case-sensitive", in(mode("YOLO")), Deny, "mode.unknown"},
		{"made-up mode", in(mode("root")), Deny, "mode.unknown"},
		{"risk zero", in(risk(0)), Deny, "risk.unknown"},
		{"risk negative", in(risk(-1)), Deny, "risk.unknown"},
		{"risk above critical", in(risk(RiskCritical+1), mode(ModeYolo)), Deny, "risk.unknown"},
		{"invalid risk with allow rule", in(risk(9), mode(ModeYolo), rules(allowRule("r", "read_file", ""))), Deny, "risk.unknown"},
	})
}

func TestDecideRules(t *testing.T) {
	notesAllow := allowRule("notes", "write_file", "notes/**")
	checkDecide(t, []decideCase{
		// Allow rules: only smart mode (and autopilot above medium) uses them.
		{"smart allow rule", in(write, mode(ModeSmart), rules(allowRule("w", "write_file", ""))), Allow, "rule.w"},
		{"smart allow rule for another tool", in(write, mode(ModeSmart), rules(allowRule("w", "read_file", ""))), Ask, "mode.smart"},
		{"smart allow rule, path matches", in(write, mode(ModeSmart), rules(notesAllow)), Allow, "rule.notes"},
		{"smart allow rule, path does not match", in(write, mode(ModeSmart), targets("secret/k"), rules(notesAllow)), Ask, "mode.smart"},
		{"smart allow rule, one target outside", in(write, mode(ModeSmart), targets("notes/a.md", "secret/k"), rules(notesAllow)), Ask, "mode.smart"},
		{"smart allow rule, every target inside", in(write, mode(ModeSmart), targets("notes/a.md", "notes/b/c.md"), rules(notesAllow)), Allow, "rule.notes"},
		{"smart allow rule with path, plan without targets", in(write, mode(ModeSmart), targets(), rules(notesAllow)), Ask, "mode.smart"},
		{"smart allow rule, unclean target", in(write, mode(ModeSmart), targets("notes/../secret/k"), rules(notesAllow)), Ask, "mode.smart"},
		{"safe ignores allow rules", in(write, mode(ModeSafe), rules(allowRule("w", "write_file", ""))), Ask, "mode.safe"},
		{"autopilot high with allow rule", in(write, risk(RiskHigh), mode(ModeAutopilot), rules(allowRule("w", "write_file", ""))), Allow, "rule.w"},
		{"autopilot high without rule", in(write, risk(RiskHigh), mode(ModeAutopilot)), Ask, "mode.autopilot"},
		{"autopilot medium with allow rule", in(write, mode(ModeAutopilot), rules(allowRule("w", "write_file", ""))), Allow, "mode.autopilot"},

		// Ask rules ask in every mode, even for a safe read.
		{"ask rule on a safe read", in(rules(askRule("ask", "read_file", ""))), Ask, "rule.ask"},
		{"ask rule in yolo", in(write, mode(ModeYolo), rules(askRule("ask", "write_file", "notes/**"))), Ask, "rule.ask"},
		{"ask rule path does not match", in(write, mode(ModeYolo), targets("x"), rules(askRule("ask", "write_file", "notes/**"))), Allow, "mode.yolo"},
		{"ask rule, one target inside", in(write, mode(ModeSmart), targets("notes/a.md", "private/k"),
			rules(askRule("private", "write_file", "private/**"), allowRule("all", "write_file", "**"))), Ask, "rule.private"},

		// Deny rules beat everything.
		{"deny rule in yolo", in(write, mode(ModeYolo), rules(denyRule("d", "write_file", ""))), Deny, "rule.d"},
		{"deny rule on a safe read", in(rules(denyRule("d", "read_file", "notes/**"))), Deny, "rule.d"},
		{"deny rule on critical", in(write, risk(RiskCritical), mode(ModeYolo), rules(denyRule("d", "write_file", ""))), Deny, "rule.d"},
		{"deny rule, one target inside", in(write, mode(ModeYolo), targets("notes/a.md", "secret/k"), rules(denyRule("secret", "write_file", "secret/**"))), Deny, "rule.secret"},
		{"deny rule, unclean target", in(write, mode(ModeYolo), targets("notes/../secret/k"), rules(denyRule("secret", "write_file", "secret/**"))), Deny, "rule.secret"},
		{"deny rule with path, plan without targets", in(write, mode(ModeYolo), targets(), rules(denyRule("secret", "write_file", "secret/**"))), Allow, "mode.yolo"},
		{"deny rule for another tool", in(write, mode(ModeYolo), rules(denyRule("d", "read_file", ""))), Allow, "mode.yolo"},

		// First match wins.
		{"ask before deny", in(write, mode(ModeYolo), rules(askRule("a", "write_file", ""), denyRule("d", "write_file", ""))), Ask, "rule.a"},
		{"deny before allow", in(write, mode(ModeSmart), rules(denyRule("d", "write_file", ""), allowRule("w", "write_file", ""))), Deny, "rule.d"},
		{"allow before deny", in(write, mode(ModeSmart), rules(allowRule("w", "write_file", ""), denyRule("d", "write_file", ""))), Allow, "rule.w"},
		{"allow before ask", in(write, mode(ModeYolo), rules(allowRule("w", "write_file", ""), askRule("a", "write_file", ""))), Allow, "mode.yolo"},
		{"non-matching rule skipped", in(write, mode(ModeSmart), targets("secret/k"), rules(notesAllow, denyRule("d", "write_file", ""))), Deny, "rule.d"},

		// A rule with a misspelt effect fails closed and shadows later rules.
		{"unknown effect", in(write, mode(ModeYolo), rules(Rule{ID: "typo", Tool: "write_file", Effect: "alow"})), Deny, "rule.typo"},
		{"empty effect", in(mode(ModeYolo), rules(Rule{ID: "e", Tool: "read_file"})), Deny, "rule.e"},
		{"unknown effect before allow", in(write, mode(ModeSmart), rules(Rule{ID: "typo", Tool: "write_file", Effect: "ALLOW"}, allowRule("w", "write_file", ""))), Deny, "rule.typo"},
	})
}

// TestCriticalAlwaysAsks: no mode and no allow rule runs a critical action
// unasked.
func TestCriticalAlwaysAsks(t *testing.T) {
	for _, m := range Modes {
		for _, rs := range [][]Rule{nil, {allowRule("w", "write_file", "")}, {allowRule("w", "write_file", "notes/**")}} {
			checkDecide(t, []decideCase{{
				fmt.Sprintf("critical in %s with rules %v", m, rs),
				in(write, risk(RiskCritical), mode(m), rules(rs...)), Ask, "risk.critical",
			}})
		}
		checkDecide(t, []decideCase{{"critical read-only in " + string(m), in(risk(RiskCritical), mode(m)), Ask, "risk.critical"}})
	}
}

func TestDecisionString(t *testing.T) {
	d := Decision{Ask, "operator rule x asks", "rule.x"}
	if got, want := d.String(), "ask (rule.x: operator rule x asks)"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}

func TestParse(t *testing.T) {
	for r := RiskLow; r <= RiskCritical; r++ {
		if got, err := ParseRisk(r.String()); err != nil || got != r {
			t.Errorf("ParseRisk(%q) = %v, %v", r.String(), got, err)
		}
	}
	for _, s := range []string{"", "Low", "risk(1)", "extreme"} {
		if _, err := ParseRisk(s); err == nil {
			t.Errorf("ParseRisk(%q) succeeded", s)
		}
	}
	if got := Risk(7).String(); got != "risk(7)" {
		t.Errorf("Risk(7).String() = %q", got)
	}
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	for _, s := range []string{"", "Safe", "auto", "yolo "} {
		if _, err := ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q) succeeded", s)
		}
	}
	for _, tr := range []Trust{TrustOwner, TrustGuest, TrustUnknown} {
		if got, err := ParseTrust(string(tr)); err != nil || got != tr {
			t.Errorf("ParseTrust(%q) = %v, %v", tr, got, err)
		}
	}
	for _, s := range []string{"", "OWNER", "admin"} {
		if _, err := ParseTrust(s); err == nil {
			t.Errorf("ParseTrust(%q) succeeded", s)
		}
	}
}

// command makes the Input a run_command Plan of a class, with the risk
// the catalog gives that class.
func command(c Class) func(*Input) {
	return func(i *Input) {
		i.Tool, i.Action, i.Class, i.ReadOnly, i.Risk = "run_command", ActionExec, c, c == ClassRead, RiskMedium
		if c == ClassRead {
			i.Risk = RiskLow
		}
		i.Targets, i.Command = []string{"."}, []string{"/usr/bin/x"}
	}
}

func unknownCommands(s string) func(*Input) { return func(i *Input) { i.UnknownCommands = s } }

// TestDecideCommandTable: every cell of the mode table for commands.
func TestDecideCommandTable(t *testing.T) {
	type cell struct {
		verdict Verdict
		rule    string
	}
	table := map[Class]map[Mode]cell{
		ClassRead: {ModeSafe: {Allow, "mode.safe.read"}, ModeSmart: {Allow, "mode.smart.read"},
			ModeAutopilot: {Allow, "mode.autopilot.read"}, ModeYolo: {Allow, "mode.yolo.read"}},
		ClassWrite: {ModeSafe: {Ask, "mode.safe"}, ModeSmart: {Ask, "mode.smart"},
			ModeAutopilot: {Allow, "mode.autopilot"}, ModeYolo: {Allow, "mode.yolo"}},
		ClassRunsCode: {ModeSafe: {Ask, "mode.safe.runs-code"}, ModeSmart: {Ask, "mode.smart.runs-code"},
			ModeAutopilot: {Allow, "mode.autopilot.runs-code"}, ModeYolo: {Allow, "mode.yolo"}},
	}
	for class, row := range table {
		for m, want := range row {
			checkDecide(t, []decideCase{{fmt.Sprintf("%v in %s", class, m),
				in(command(class), mode(m), unknownCommands(UnknownSandbox)), want.verdict, want.rule}})
		}
	}
	checkDecide(t, []decideCase{
		// commands.unknown = ask (or unset) makes autopilot ask before code.
		{"runs code, autopilot, unknown=ask", in(command(ClassRunsCode), mode(ModeAutopilot), unknownCommands(UnknownAsk)), Ask, "mode.autopilot.runs-code"},
		{"runs code, autopilot, unknown unset", in(command(ClassRunsCode), mode(ModeAutopilot)), Ask, "mode.autopilot.runs-code"},
		{"runs code, autopilot, high risk", in(command(ClassRunsCode), risk(RiskHigh), mode(ModeAutopilot), unknownCommands(UnknownSandbox)), Ask, "mode.autopilot"},
		{"runs code, yolo, unknown=ask", in(command(ClassRunsCode), mode(ModeYolo), unknownCommands(UnknownAsk)), Allow, "mode.yolo"},
		// Critical asks in every mode, operator deny rules deny.
		{"critical runs code in yolo", in(command(ClassRunsCode), risk(RiskCritical), mode(ModeYolo), unknownCommands(UnknownSandbox)), Ask, "risk.critical"},
		{"critical write in yolo", in(command(ClassWrite), risk(RiskCritical), mode(ModeYolo)), Ask, "risk.critical"},
		{"deny rule on a read command", in(command(ClassRead), rules(Rule{ID: "no", Tool: "run_command", Effect: Deny})), Deny, "rule.no"},
		{"deny rule on code in yolo", in(command(ClassRunsCode), mode(ModeYolo), rules(Rule{ID: "no", Tool: "run_command", Effect: Deny})), Deny, "rule.no"},
		// Smart: a rule lets a write run; only a rule naming the command lets code run.
		{"write, smart, allow rule", in(command(ClassWrite), mode(ModeSmart), rules(allowRule("w", "run_command", ""))), Allow, "rule.w"},
		{"runs code, smart, tool-wide allow rule", in(command(ClassRunsCode), mode(ModeSmart), rules(allowRule("w", "run_command", ""))), Ask, "mode.smart.runs-code"},
		{"runs code, smart, command allow rule", in(command(ClassRunsCode), mode(ModeSmart),
			rules(Rule{ID: "gotest", Tool: "run_command", Effect: Allow, Command: []string{"/usr/bin/x"}})), Allow, "rule.gotest"},
		// A command that says read-only but is not of class read is not a read.
		{"write class claiming read-only", in(command(ClassWrite), func(i *Input) { i.ReadOnly, i.Risk = true, RiskLow }), Ask, "mode.safe"},
		{"runs code claiming read-only", in(command(ClassRunsCode), func(i *Input) { i.ReadOnly, i.Risk = true, RiskLow }), Ask, "mode.safe.runs-code"},
		// A guest never runs code.
		{"guest, runs code", in(command(ClassRunsCode), trust(TrustGuest), guests("run_command"), mode(ModeYolo)), Deny, "trust.guest-readonly"},
		{"guest, read command", in(command(ClassRead), trust(TrustGuest), guests("run_command")), Allow, "trust.guest-tools"},
	})
}
