package policy

// Rule ids name the rule that decided a tool call. They are stored (audit
// records, tool runs, approval rows) and shown to people and to the
// model, so their values are a wire format: never change one without a
// migration note. rules_test.go pins every value; docs/RULES.md says, for
// each, when it fires and what the owner can do.
//
// Every rule id in the tree is written here and nowhere else: the
// constants for fixed ids, and the functions below for the ids built from
// a mode, an operator rule or a grant. The one copy is store.RunInterrupted
// (see RuleRecoveryInterrupted).

// Hard limits ("limit.*"): the call can never run, in any mode, whatever
// the grants. They are found while a tool prepares its Plan (the tools),
// by the command classifier (ClassifyCommand) or by the arbiter.
const (
	// RuleLimitWorkspace: a path is outside every workspace root, or is
	// malformed (empty, "..", NUL or control characters, percent-encoded,
	// too long, an unknown root, a symlink leading out of its root).
	RuleLimitWorkspace = "limit.workspace"
	// RuleLimitProtected: a path is homard's own data (its database,
	// configuration, checkpoints, or a hard link to one of them), or a
	// write into git metadata (any ".git" element).
	RuleLimitProtected = "limit.protected"
	// RuleLimitSensitive: a path matches a sensitive-file pattern (keys,
	// credentials, browser profiles, …).
	RuleLimitSensitive = "limit.sensitive"
	// RuleLimitSymlink: a write would go through a symlink.
	RuleLimitSymlink = "limit.symlink"
	// RuleLimitSize: a file to read or write is over the size limit.
	RuleLimitSize = "limit.size"
	// RuleLimitRootReadOnly: a change to a read-only root (config access
	// = "ro"): write_file, edit_file, apply_changes, or a command that
	// writes there.
	RuleLimitRootReadOnly = "limit.root-read-only"
	// RuleLimitSecretInArgs: the arguments (raw or decoded) contain a
	// secret; secrets never travel through tool arguments.
	RuleLimitSecretInArgs = "limit.secret-in-args"
	// RuleLimitSecretHost: http_get names a secret that does not exist,
	// or is not bound to the request's host (or there is no vault).
	RuleLimitSecretHost = "limit.secret-host"
	// RuleLimitSecretHTTP: http_get would send a secret over plain HTTP.
	RuleLimitSecretHTTP = "limit.secret-http"
	// RuleLimitEgress: a URL the egress checks refuse (a private or
	// local address, a scheme or port not allowed, an invalid URL or
	// host).
	RuleLimitEgress = "limit.egress"
	// RuleLimitBrowserOwner: a browser tool while the owner has taken the
	// browser over in the web UI.
	RuleLimitBrowserOwner = "limit.browser-owner"
	// RuleLimitBrowser: a browser tool with no page to act on, or a ref
	// that is not on the page.
	RuleLimitBrowser = "limit.browser"
	// RuleLimitToolsOff: a tool call in a turn the owner ran with tools
	// off (/tools off in homard chat): no tool was offered, none runs.
	RuleLimitToolsOff = "limit.tools-off"
	// RuleLimitArtifact: read_artifact for an artifact that does not
	// exist or is not the caller's, or from an unknown caller.
	RuleLimitArtifact = "limit.artifact"
	// RuleLimitMemoryOwner: a memory tool called by anyone but the owner.
	RuleLimitMemoryOwner = "limit.memory-owner"
	// RuleLimitTaskOwner: propose_task (a reminder or a task) called by
	// anyone but the owner in their own conversation.
	RuleLimitTaskOwner = "limit.task-owner"
	// RuleLimitSandbox: run_command when no command sandbox can run.
	RuleLimitSandbox = "limit.sandbox"
	// RuleLimitSessionOwner: the call names a session that belongs to
	// another owner.
	RuleLimitSessionOwner = "limit.session-owner"
	// RuleLimitIntegrity: an action with side effects while homard's own
	// records are damaged and the owner has not acknowledged it.
	RuleLimitIntegrity = "limit.integrity"
	// RuleLimitProgramName: a command's program name is malformed or did
	// not resolve to an absolute path.
	RuleLimitProgramName = "limit.program-name"
	// RuleLimitArgv: a command's arguments are refused (a NUL byte, an
	// option that makes the program run another program).
	RuleLimitArgv = "limit.argv"
	// RuleLimitInlineCode: an interpreter would run code from its
	// arguments or standard input rather than from a script file.
	RuleLimitInlineCode = "limit.inline-code"
	// RuleLimitNetwork: a command, option or subcommand that reaches the
	// network (commands have none; http_get does).
	RuleLimitNetwork = "limit.network"
	// RuleLimitShell: a command is a shell (homard runs argv, never a
	// shell), unless the operator lists it in commands.allow.
	RuleLimitShell = "limit.shell"
	// RuleLimitWrapper: a command runs another program or leaves the
	// sandbox's limits (sudo, env, xargs, docker, …), unless the operator
	// lists it in commands.allow.
	RuleLimitWrapper = "limit.wrapper"
	// RuleLimitSkill: read_skill or run_skill names a skill that is not
	// installed, or whose files are not the ones the owner trusted.
	RuleLimitSkill = "limit.skill"
	// RuleLimitSkillPermission: a skill declares a root or secret this
	// homard cannot grant (not a workspace root, a write to a read-only
	// root, a secret missing or bound to none of its hosts).
	RuleLimitSkillPermission = "limit.skill-permission"
)

// Trust ("trust.*"): who is calling.
const (
	// RuleTrustUnknown: the caller's identity is unknown, or the call
	// names no owner or session.
	RuleTrustUnknown = "trust.unknown"
	// RuleTrustGuestReadOnly: a guest asked for a tool that is not
	// read-only and low-risk.
	RuleTrustGuestReadOnly = "trust.guest-readonly"
	// RuleTrustGuestTools: a guest's call, decided by the guest tool list
	// (permissions.guest_tools): denied when the tool is not on it, allowed
	// when it is (and read-only, low-risk).
	RuleTrustGuestTools = "trust.guest-tools"
)

// Risk and privacy.
const (
	// RuleRiskUnknown: the tool declared no valid risk class (a bug in
	// the tool; denied).
	RuleRiskUnknown = "risk.unknown"
	// RuleRiskCritical: a critical action; it asks in every mode.
	RuleRiskCritical = "risk.critical"
	// RuleTaintPrivateEgress: an outbound request from a session that has
	// read the owner's private data asks first (autopilot, guests).
	RuleTaintPrivateEgress = "taint.private-egress"
	// RuleTaintPrivateValue: with permissions.taint = "value", an
	// outbound request whose arguments carry text the session read from
	// the owner's private data (as it is or encoded) asks first
	// (autopilot, guests), naming where the text came from.
	RuleTaintPrivateValue = "taint.private-value"
)

// Recipient trust.
const (
	// RuleRecipientNew: a message to a recipient the owner has not
	// confirmed yet asks, in every mode (send_message).
	RuleRecipientNew = "recipient.new"
)

// A planner/worker split's workers (internal/split): hard limits of the
// worker's kind, whatever the mode.
const (
	// RuleSplitTool: a worker called a tool its kind does not have.
	RuleSplitTool = "split.worker-tool"
	// RuleSplitHost: a sensitive worker's outbound call to a host its
	// item does not name.
	RuleSplitHost = "split.worker-host"
	// RuleSplitSecret: a public worker's call would send one of the
	// owner's secrets.
	RuleSplitSecret = "split.worker-secret"
	// RuleSplitApproved: the owner approved a split's plan (its audit
	// record, tool "split_plan").
	RuleSplitApproved = "split.approved"
	// RuleSplitPlan: a split's plan waits for the owner's approval, as a
	// card (the chat's /split), once or deny.
	RuleSplitPlan = "split.plan"
)

// Monitors ("monitor.*"): a pattern over a session's recent calls that
// no single call shows (internal/monitor). A monitor only ever asks: it
// never allows a call and never lowers a denial.
const (
	// RuleMonitorDeniedRepeat: the session had [monitor] denied_repeat
	// calls denied within the window; its next call asks.
	RuleMonitorDeniedRepeat = "monitor.denied-repeat"
	// RuleMonitorFetchBurst: after the session read private data, this
	// outbound call would be the [monitor] fetch_burst-th within the
	// window; it asks.
	RuleMonitorFetchBurst = "monitor.fetch-burst"
	// RuleMonitorWriteSpread: the session wrote into [monitor]
	// write_spread distinct folders within the window; its next write
	// asks.
	RuleMonitorWriteSpread = "monitor.write-spread"
)

// The permission mode's row ("mode.*"). The read-only row is built by
// RuleModeRead.
const (
	// RuleModeUnknown: the permission mode is not one homard knows.
	RuleModeUnknown = "mode.unknown"
	// RuleModeSafe: safe mode asks before anything but a read-only
	// low-risk action.
	RuleModeSafe = "mode.safe"
	// RuleModeSmart: smart mode asks unless an operator rule allows.
	RuleModeSmart = "mode.smart"
	// RuleModeAutopilot: autopilot runs low- and medium-risk actions and
	// asks before high-risk ones.
	RuleModeAutopilot = "mode.autopilot"
	// RuleModeYolo: yolo mode runs every non-critical action.
	RuleModeYolo = "mode.yolo"
	// RuleModeSafeRunsCode: safe mode asks before a command that runs code.
	RuleModeSafeRunsCode = "mode.safe.runs-code"
	// RuleModeSmartRunsCode: smart mode asks before a command that runs
	// code, unless an operator rule naming the command allows it.
	RuleModeSmartRunsCode = "mode.smart.runs-code"
	// RuleModeAutopilotRunsCode: autopilot runs a command that runs code
	// in the sandbox (commands.unknown = "sandbox") or asks (= "ask").
	RuleModeAutopilotRunsCode = "mode.autopilot.runs-code"
)

// Approvals ("approval.*"). A grant's id is built by RuleGrant.
const (
	// RuleApprovalOnce: the call runs on the owner's approval of this
	// exact Plan.
	RuleApprovalOnce = "approval.once"
	// RuleApprovalLapsed: the call was approved, but the workspace code
	// it runs changed since; it asks again.
	RuleApprovalLapsed = "approval.lapsed"
	// RuleApprovalTooManyPending: too many approvals are already waiting
	// for the owner; the call is refused rather than queued.
	RuleApprovalTooManyPending = "approval.too-many-pending"
)

// The agent's turn ("budget.*", "loop.*"): calls the agent records as
// refused without running them.
const (
	// RuleBudgetCalls: the turn's tool-call budget ([agent] max_calls) is
	// spent.
	RuleBudgetCalls = "budget.calls"
	// RuleBudgetUnits: the turn's tool-unit budget ([agent] max_units) is
	// spent.
	RuleBudgetUnits = "budget.units"
	// RuleBudgetReserve: a tool that is not read-only would use the
	// units reserved for read-only tools ([agent] reserve_units).
	RuleBudgetReserve = "budget.reserve"
	// RuleBudgetTokens: the turn's model tokens (input + output) reached
	// its token budget ([agent] max_tokens, or guest_max_tokens for a
	// guest); the calls of the last model answer are not run.
	RuleBudgetTokens = "budget.tokens"
	// RuleLoopStopped: the turn stopped (a budget spent, repeated
	// failures); later calls of the same step are not run.
	RuleLoopStopped = "loop.stopped"
	// RuleLoopFinalAnswer: the model called a tool in the tool-less final
	// answer of a turn.
	RuleLoopFinalAnswer = "loop.final-answer"
)

// Extensions ("extension.*"): MCP servers and skills.
const (
	// RuleMCPChanged: a trusted MCP server's tool list or instructions
	// changed since the owner trusted them (a "rug pull"); its tools are
	// withdrawn until `homard mcp trust NAME`. Recorded once per change.
	RuleMCPChanged = "extension.mcp-changed"
)

// Scheduled tasks ("task.*"): the owner's changes to a task, and what an
// unattended run was refused or how it ended.
const (
	// RuleTaskAdded: a task was added, pending the owner's approval.
	RuleTaskAdded = "task.added"
	// RuleTaskApproved: the owner approved (sealed) a task's body.
	RuleTaskApproved = "task.approved"
	// RuleTaskRenewed: the owner renewed an unchanged task's approval.
	RuleTaskRenewed = "task.renewed"
	// RuleTaskPaused, RuleTaskResumed, RuleTaskRemoved: the owner paused,
	// resumed or removed a task.
	RuleTaskPaused  = "task.paused"
	RuleTaskResumed = "task.resumed"
	RuleTaskRemoved = "task.removed"
	// RuleTaskRefused: a run did not start: the task is not approved, its
	// body changed since it was approved, its approval expired, its mode
	// is above automation.max_mode, or the sandbox is missing.
	RuleTaskRefused = "task.refused"
	// RuleTaskProfile: a run proposed a tool outside the task's approved
	// tool profile (or one no task may use); it is not run.
	RuleTaskProfile = "task.profile"
	// RuleTaskStopped: the task was paused or removed while a run ran;
	// the run's later calls are not run.
	RuleTaskStopped = "task.stopped"
	// RuleTaskCompleted: the run called complete_task, its only success
	// exit.
	RuleTaskCompleted = "task.completed"
	// RuleTaskFailed: a run ended without complete_task (the model
	// answered instead, a budget was spent, the model failed).
	RuleTaskFailed = "task.failed"
)

// Blast ceilings ("ceiling.*"): the highest class of effect a scheduled
// task's runs may reach.
const (
	// RuleCeilingExceeded: a task's run proposed a call whose effect class
	// (read < write < network < send) is above the task's sealed ceiling,
	// or a fetch from a host its network ceiling does not name. Refused,
	// never asked, in every mode; no operator rule lifts it.
	RuleCeilingExceeded = "ceiling.exceeded"
)

// Errors the model can fix, and homard's own failures.
const (
	// RuleLookupUnknown: no tool has the name the model used.
	RuleLookupUnknown = "lookup.unknown"
	// RuleLookupProxy: call_tool named a tool it cannot call: a built-in
	// tool, a proxy, or no extension tool homard offers (unknown, or its
	// server is not trusted); or its arguments were not {name, arguments}.
	RuleLookupProxy = "lookup.proxy"
	// RuleDecodeStrict: the arguments do not decode strictly into the
	// tool's parameters (unknown field, wrong type, trailing data).
	RuleDecodeStrict = "decode.strict"
	// RuleArgsInvalid: the arguments decode but are wrong (a malformed
	// regular expression, an offset past the end).
	RuleArgsInvalid = "args.invalid"
	// RulePrepareFailed: homard failed while preparing the call; the
	// turn stops.
	RulePrepareFailed = "prepare.failed"
	// RuleRecoveryInterrupted: a run homard was running when it stopped,
	// marked failed at the next start. internal/store keeps the same
	// value as store.RunInterrupted (it cannot import this package); a
	// test in internal/arbiter pins them equal.
	RuleRecoveryInterrupted = "recovery.interrupted"
)

// RuleModeRead is the rule id of a read-only low-risk action, which runs
// in every mode: "mode.<mode>.read".
func RuleModeRead(m Mode) string { return "mode." + string(m) + ".read" }

// RuleOperator is the rule id of a decision made by the operator rule
// with this id (config [[rules]]): "rule.<id>".
func RuleOperator(id string) string { return "rule." + id }

// RuleGrant is the rule id of a call covered by the session or always
// grant with this id: "grant.<id>".
func RuleGrant(id string) string { return "grant." + id }
