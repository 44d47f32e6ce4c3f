package policy

import "slices"

// Decide applies entry trust, a task's blast ceiling, operator rules, the
// risk class, the session's privacy and the mode, in that order. The order matters: trust limits and operator denials come
// before any mode can allow, and a critical action asks in every mode.
func Decide(in Input) Decision {
	switch in.Trust {
	case TrustOwner:
	case TrustPaired:
		// Another program's model drives these calls: whatever the
		// owner's mode, they are decided as in smart at most.
		if in.Mode == ModeAutopilot || in.Mode == ModeYolo {
			in.Mode = ModeSmart
		}
	case TrustGuest:
		if !in.ReadOnly || in.Risk > RiskLow {
			return Decision{Deny, "a guest may only use read-only low-risk tools", RuleTrustGuestReadOnly}
		}
		if !slices.Contains(in.Guest, in.Tool) {
			return Decision{Deny, "tool " + in.Tool + " is not on the guest tool list (policy.guest_tools)", RuleTrustGuestTools}
		}
	default:
		return Decision{Deny, "the caller's identity is unknown; unknown callers may not use tools", RuleTrustUnknown}
	}
	if !validMode(in.Mode) {
		return Decision{Deny, "unknown permission mode " + string(in.Mode), RuleModeUnknown}
	}
	if in.Risk < RiskLow || in.Risk > RiskCritical {
		return Decision{Deny, "the tool declared no valid risk class", RuleRiskUnknown}
	}

	// A task's blast ceiling is a hard limit of its runs: above it a call
	// is refused, never asked, and no operator rule or mode lifts it.
	if why := in.Ceiling.exceeds(ReachOf(in.Action, in.ReadOnly, in.Class), in.Targets); why != "" {
		return Decision{Deny, why, RuleCeilingExceeded}
	}

	var rule *Rule
	for i := range in.Rules {
		if in.Rules[i].Matches(in.Tool, in.Targets) && in.Rules[i].MatchesCommand(in.Command) {
			rule = &in.Rules[i]
			break
		}
	}
	if rule != nil && rule.Effect == Deny {
		return Decision{Deny, "denied by operator rule " + rule.ID, RuleOperator(rule.ID)}
	}
	if rule != nil && rule.Effect != Allow && rule.Effect != Ask {
		// config validates effects, but policy does not lean on that: a
		// misspelt effect would shadow later rules and fall through to the
		// mode. Fail closed.
		return Decision{Deny, "operator rule " + rule.ID + " has the unknown effect " + string(rule.Effect), RuleOperator(rule.ID)}
	}
	if in.NewRecipient {
		return Decision{Ask, "a message to someone you have not confirmed yet always asks; approving it confirms them for later messages", RuleRecipientNew}
	}
	if in.Risk == RiskCritical {
		return Decision{Ask, "critical actions always need the owner's approval", RuleRiskCritical}
	}
	if rule != nil && rule.Effect == Ask {
		return Decision{Ask, "operator rule " + rule.ID + " asks for approval", RuleOperator(rule.ID)}
	}
	// An outbound request from a session whose context holds the owner's
	// private data could carry that data out, in any encoding the model
	// likes, so the check is on the session, not on the arguments. It
	// comes after the operator's deny and ask rules and before any mode
	// can allow. Autopilot would otherwise run the request unasked; safe
	// and smart ask anyway (below, under their own rule ids), except that
	// the read-only shortcut must not let such a request through; yolo is
	// the owner's choice to be asked only for critical actions.
	privateEgress := in.Private && (in.Action == ActionFetch || in.Action == ActionSend)
	if privateEgress && (in.Mode == ModeAutopilot || in.Trust == TrustGuest) {
		if rule != nil && rule.Effect == Allow {
			return Decision{Allow, "allowed by operator rule " + rule.ID + " although this session holds your private data", RuleOperator(rule.ID)}
		}
		if in.PrivateText != "" {
			return Decision{Ask, "this request carries text read from " + in.PrivateText + "; it could carry your private data out, so it needs your approval", RuleTaintPrivateValue}
		}
		return Decision{Ask, "this session has read your private data (files, command output or memory); an outbound request could carry it out, so it needs your approval (a new session starts without that data)", RuleTaintPrivateEgress}
	}
	if in.Trust == TrustGuest {
		// A guest got here only with a read-only low-risk listed tool.
		return Decision{Allow, "read-only tool on the guest list", RuleTrustGuestTools}
	}
	// A command's class decides with its risk: read runs in every mode;
	// write and runs-code never count as reads whatever ReadOnly says.
	safeRead := in.ReadOnly && in.Risk == RiskLow && (in.Class == ClassNone || in.Class == ClassRead)
	if safeRead && !privateEgress {
		return Decision{Allow, "read-only low-risk action", RuleModeRead(in.Mode)}
	}
	if in.Class == ClassRunsCode {
		return decideRunsCode(in, rule)
	}
	switch in.Mode {
	case ModeSafe:
		return Decision{Ask, "safe mode asks before anything but a read-only low-risk action", RuleModeSafe}
	case ModeSmart:
		if rule != nil && rule.Effect == Allow {
			return Decision{Allow, "allowed by operator rule " + rule.ID, RuleOperator(rule.ID)}
		}
		return Decision{Ask, "smart mode asks unless an operator rule allows the action", RuleModeSmart}
	case ModeAutopilot:
		if in.Risk <= RiskMedium {
			return Decision{Allow, "autopilot runs the owner's " + in.Risk.String() + "-risk actions", RuleModeAutopilot}
		}
		if rule != nil && rule.Effect == Allow {
			return Decision{Allow, "allowed by operator rule " + rule.ID, RuleOperator(rule.ID)}
		}
		return Decision{Ask, "autopilot asks before high-risk actions", RuleModeAutopilot}
	case ModeYolo:
		return Decision{Allow, "yolo mode runs non-critical actions", RuleModeYolo}
	}
	return Decision{Deny, "unknown permission mode", RuleModeUnknown}
}

// Values of Input.UnknownCommands (config commands.unknown).
const (
	UnknownAsk     = "ask"     // autopilot asks before a command that runs code
	UnknownSandbox = "sandbox" // autopilot runs it in the sandbox; its changes are checked before they apply
)

// decideRunsCode is the mode table's row for a command that runs code (an
// unknown program, a build, a test, a script): safe and smart ask,
// autopilot runs it when the operator chose commands.unknown = "sandbox"
// (and it is not high risk), yolo runs it. In smart mode only an operator
// allow rule naming the command (a rule with a Command pattern) lifts the
// question: a rule for a path or for the whole tool was not written for
// code. Where it asks, a session grant covers it only when it runs graded
// (Template.Graded: sandboxed, no network, its change set graded); the
// approval service holds that rule.
func decideRunsCode(in Input, rule *Rule) Decision {
	const why = "this command runs code (an unknown program, a build, a test or a script); it runs in the sandbox and its changes are checked before they apply"
	commandRule := rule != nil && rule.Effect == Allow && len(rule.Command) > 0
	switch in.Mode {
	case ModeSafe:
		return Decision{Ask, "safe mode asks: " + why, RuleModeSafeRunsCode}
	case ModeSmart:
		if commandRule {
			return Decision{Allow, "allowed by operator rule " + rule.ID, RuleOperator(rule.ID)}
		}
		return Decision{Ask, "smart mode asks: " + why, RuleModeSmartRunsCode}
	case ModeAutopilot:
		if in.UnknownCommands == UnknownSandbox && in.Risk <= RiskMedium {
			return Decision{Allow, "autopilot runs code in the sandbox (commands.unknown = sandbox); its changes are checked before they apply", RuleModeAutopilotRunsCode}
		}
		if rule != nil && rule.Effect == Allow {
			return Decision{Allow, "allowed by operator rule " + rule.ID, RuleOperator(rule.ID)}
		}
		if in.Risk > RiskMedium {
			return Decision{Ask, "autopilot asks before high-risk actions", RuleModeAutopilot}
		}
		return Decision{Ask, "autopilot asks before a command that runs code (commands.unknown = ask; set it to sandbox to run such commands in the sandbox unasked)", RuleModeAutopilotRunsCode}
	case ModeYolo:
		return Decision{Allow, "yolo mode runs non-critical actions", RuleModeYolo}
	}
	return Decision{Deny, "unknown permission mode", RuleModeUnknown}
}

// GuestTool reports whether a guest may use a tool: one on the guest list
// (permissions.guest_tools) that is read-only and low-risk. A guest is
// offered only these, and any other call of a guest is refused before
// the tool sees it; Decide checks the guest's Plan again.
func GuestTool(name string, readOnly bool, risk Risk, guest []string) bool {
	return readOnly && risk <= RiskLow && slices.Contains(guest, name)
}

func validMode(m Mode) bool { return slices.Contains(Modes, m) }
