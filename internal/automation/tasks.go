package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/schedule"
	"github.com/homard/homard/internal/split"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// ForbiddenTools are the memory tools and the tools that propose tasks:
// no task may use them (runs neither recall nor capture memory, and a
// run never proposes a task, whatever a profile says), nor a client of
// `homard mcp serve`.
var ForbiddenTools = []string{"remember", "recall", "forget", "propose_task"}

// CompleteTaskTool is the tool a run ends with; homard offers it to every
// run and handles it itself (run.go). It is not in the registry, so
// no turn but a task's can call it, and no profile needs to name it.
const CompleteTaskTool = "complete_task"

// TaskSpec is what `homard task add` asks for. Zero values mean the
// [automation] defaults.
type TaskSpec struct {
	Name   string
	Prompt string
	// Exactly one of At, Every and Cron.
	At    string // RFC 3339, or a local "YYYY-MM-DDTHH:MM" in TZ
	Every string // "90m", "1d"; slots count from when the task is added
	Cron  string // 5 fields, in TZ
	TZ    string // IANA zone; "" means automation.tz
	// CatchUp is "skip" (the default) or "once".
	CatchUp string
	// Tools is the tool profile; nil means the read-only tools.
	Tools      []string
	Mode       string
	MaxCalls   int64
	MaxTurns   int64
	MaxTokens  int64
	MaxRuntime time.Duration
	// Deliver is "web" (the default) or an enabled chat channel.
	Deliver string
	// Expires is how long the approval lasts; 0 means automation.expiry.
	Expires time.Duration
	// Ceiling is the blast ceiling (policy.ParseCeiling): read, write,
	// network, network:HOSTS or send. "" means the lowest class that
	// covers every tool of the profile (CeilingFor).
	Ceiling string
	// Split makes a split task: the planner plans Prompt once, at Add,
	// and the plan is sealed in the body; every run runs its workers
	// and the planner's answer (internal/split). Tools must be nil: each
	// worker's tools are its item's kind's.
	Split bool
	// Reminder makes a reminder: each run delivers Prompt as it is, with
	// no model and no tools (Tools must be nil, Split false).
	Reminder bool
	// ID and Since are a proposal's (Draft): the task's id, and the time
	// its approval period and an --every schedule count from, instead of
	// a new id and now. Derived from the call, they make the same call
	// prepared again give the same body, so the owner's approval of its
	// hash holds when the arbiter prepares it again to run it.
	ID    string
	Since time.Time
	// Origin is where the task is added from, recorded beside it (not
	// sealed): store.TaskFromCLI (the default, "") or store.TaskFromWeb.
	// A task from a conversation is added by AddApproved, not Add.
	Origin string
}

// TaskInfo is a task as the CLI and the web UI show it. Body is what the
// owner approves; every other field is derived or bookkeeping.
type TaskInfo struct {
	ID, Owner, Name, Status string
	// Origin is where the task came from: cli, web or chat
	// (store.TaskFrom…). Bookkeeping, not part of the body.
	Origin string
	Body   task.Body
	// Canonical is the exact sealed text; Hash its SHA-256 (hex).
	Canonical string
	Hash      string
	// Seal is the first 16 hex digits of the stored seal ("" until
	// approved); SealIfApproved is what approving now would store, for
	// the owner to compare before approving.
	Seal           string
	SealIfApproved string
	Schedule       string // the schedule for a person
	ApprovedAt     time.Time
	ExpiresAt      time.Time
	NextRunAt      time.Time
	Next           []time.Time // the next 3 slots (none unless active)
	// Problem says why the task will not run as things are ("" when it
	// will): not approved, paused, changed since approval, expired.
	Problem string
	LastRun *store.TaskRun
	// Warning, from Add only, says what the task's own ceiling keeps its
	// tools from doing ("" when the ceiling covers them all).
	Warning string
}

// sealPrefix is how much of a seal people see.
const sealPrefix = 16

func (s *Service) taskKey() ([]byte, error) {
	return s.o.Keys.DerivedKey(task.KeyPurpose)
}

// defaultTaskTools is the profile of a task added without --tools: the
// registry's read-only tools but memory.
func (s *Service) defaultTaskTools() []string {
	var out []string
	for _, t := range s.o.Tools.Specs() {
		if t.ReadOnly && !slices.Contains(ForbiddenTools, t.Name) {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return out
}

// CeilingFor is the lowest blast ceiling that lets a task use every
// tool of this profile: the highest effect class among them (a tool the
// registry lacks counts as send: checkTaskRules refuses it anyway).
func (s *Service) CeilingFor(tools []string) policy.Ceiling {
	return policy.Covers(s.toolReaches(tools)...)
}

func (s *Service) toolReaches(tools []string) []policy.Reach {
	specs := map[string]policy.Reach{}
	for _, t := range s.o.Tools.Specs() {
		specs[t.Name] = policy.ReachOf(t.Action, t.ReadOnly, policy.ClassNone)
	}
	out := make([]policy.Reach, 0, len(tools))
	for _, name := range tools {
		r, ok := specs[name]
		if !ok {
			r = policy.ReachSend
		}
		out = append(out, r)
	}
	return out
}

// ceilingWarning says which of the profile's tools the body's ceiling
// keeps from their effect, "" when it covers them all. A lower ceiling
// is allowed (a task may list write_file yet be meant only to read, or
// run_command for read-only commands); the owner should know.
func (s *Service) ceilingWarning(b task.Body) string {
	if b.Ceiling.IsZero() {
		return ""
	}
	var above []string
	for i, r := range s.toolReaches(b.Tools) {
		if r > b.Ceiling.Reach {
			above = append(above, b.Tools[i]+" ("+r.String()+")")
		}
	}
	if len(above) == 0 {
		return ""
	}
	return fmt.Sprintf("the ceiling %s is below what %s can do: runs will be refused any call above it", b.Ceiling, strings.Join(above, ", "))
}

// checkTaskRules holds a body to the rules of this homard's config, at
// add, approval and before every run: the mode within automation.max_mode,
// tools that exist and may be used by tasks, a delivery target that
// exists, a schedule that parses and is not denser than
// automation.min_interval.
func (s *Service) checkTaskRules(b task.Body) error {
	a := s.o.Config.Automation
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if config.ModeRank(string(b.Mode)) > config.ModeRank(a.MaxMode) {
		return bad("mode %s is above automation.max_mode (%s): choose --mode %s or lower, or raise the ceiling in config.toml", b.Mode, a.MaxMode, a.MaxMode)
	}
	known := map[string]bool{}
	for _, t := range s.o.Tools.Specs() {
		known[t.Name] = true
	}
	for _, name := range b.Tools {
		switch {
		case slices.Contains(ForbiddenTools, name):
			return bad("tool %s: scheduled runs never use memory (remember, recall, forget)", name)
		case name == CompleteTaskTool:
			return bad("tool %s is always offered to a run; leave it out of --tools", name)
		case !known[name]:
			return bad("tool %q does not exist; `homard tool list` shows the tools", name)
		}
	}
	if b.Deliver != "web" {
		ch, ok := s.o.Config.Channels.ByName()[b.Deliver]
		if !ok {
			return bad("deliver %q: want web, %s", b.Deliver, config.PlatformList("or"))
		}
		if !ch.Enabled {
			return bad("deliver %s: the %s channel is not enabled (docs/CHANNELS.md), so results could not reach you", b.Deliver, b.Deliver)
		}
	}
	spec, err := b.Spec()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if gap := schedule.MinInterval(spec, s.now()); gap > 0 && gap < a.MinInterval.Std() {
		return bad("the schedule runs %v apart at its closest; automation.min_interval is %v", gap, a.MinInterval.Std())
	}
	return nil
}

// pendingTask builds the body of a new task from spec (see taskBody) and
// the row, not yet approved, that stores it in its canonical form.
func (s *Service) pendingTask(spec TaskSpec, id string, now time.Time, plan *split.Plan, origin string) (store.Task, task.Body, error) {
	b, err := s.taskBody(spec, id, now, plan)
	if err != nil {
		return store.Task{}, task.Body{}, err
	}
	c, err := b.Canonical()
	if err != nil {
		return store.Task{}, task.Body{}, err
	}
	return store.Task{ID: id, Owner: b.Owner, Name: b.Name, Body: c, Status: store.TaskPending, CreatedAt: now, Origin: origin}, b, nil
}

// taskBody builds the body of a new task from spec; plan, when set, is a
// split task's plan (its tools none, its default ceiling the plan's).
func (s *Service) taskBody(spec TaskSpec, id string, now time.Time, plan *split.Plan) (task.Body, error) {
	a := s.o.Config.Automation
	bad := func(format string, args ...any) (task.Body, error) {
		return task.Body{}, fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	n := 0
	for _, x := range []string{spec.At, spec.Every, spec.Cron} {
		if x != "" {
			n++
		}
	}
	if n != 1 {
		return bad("say when the task runs with exactly one of --at, --every or --cron")
	}
	tz := spec.TZ
	if tz == "" {
		tz = a.TZ
	}
	var loc *time.Location
	if tz != "" {
		l, err := schedule.LoadZone(tz)
		if err != nil {
			return bad("%v", err)
		}
		loc = l
	}
	var sched task.Schedule
	switch {
	case spec.At != "":
		t, err := schedule.ParseAt(spec.At, loc)
		if err != nil {
			return bad("%v", err)
		}
		if !t.After(s.now()) {
			return bad("--at %s is in the past", spec.At)
		}
		sched = task.Schedule{Kind: task.KindAt, Expr: task.AtExpr(t)}
	case spec.Every != "":
		d, err := schedule.ParseEvery(spec.Every)
		if err != nil {
			return bad("%v", err)
		}
		sched = task.Schedule{Kind: task.KindEvery, Expr: task.EveryExpr(d, now)}
	default:
		if loc == nil {
			return bad("--cron needs a time zone: add --tz Europe/Paris (an IANA name), or set automation.tz in config.toml")
		}
		e, err := schedule.ParseCron(spec.Cron)
		if err != nil {
			return bad("%v", err)
		}
		sched = task.Schedule{Kind: task.KindCron, Expr: e.String(), TZ: tz}
	}
	catchUp := spec.CatchUp
	if catchUp == "" {
		catchUp = task.CatchUpSkip
	}
	tools := spec.Tools
	need := s.CeilingFor(tools)
	switch {
	case spec.Reminder && (tools != nil || spec.Split):
		return bad("a reminder takes no --tools and no --split: its text is delivered as it is, with no model")
	case spec.Reminder:
		tools, need = []string{}, s.CeilingFor(nil)
	case plan != nil:
		tools, need = []string{}, s.CeilingFor(s.splitTools(plan))
	case tools == nil:
		tools = s.defaultTaskTools()
		need = s.CeilingFor(tools)
	}
	mode := spec.Mode
	if mode == "" {
		mode = a.Mode
	}
	m, err := policy.ParseMode(mode)
	if err != nil {
		return bad("%v", err)
	}
	deliver := spec.Deliver
	if deliver == "" {
		deliver = "web"
	}
	expires := spec.Expires
	if expires == 0 {
		expires = a.Expiry.Std()
	}
	if expires < time.Hour || expires > 366*24*time.Hour {
		return bad("--expires %v: want between 1h and 366 days", expires)
	}
	ceiling := need
	if spec.Ceiling != "" {
		if ceiling, err = policy.ParseCeiling(spec.Ceiling); err != nil {
			return bad("--ceiling: %v", err)
		}
	}
	b := task.Body{
		ID: id, Owner: s.o.Config.Owner, Name: spec.Name, Prompt: spec.Prompt,
		Sched: sched, CatchUp: catchUp, Tools: tools, Mode: m, Ceiling: ceiling,
		Budgets: task.Budgets{
			MaxCalls: orDefault(spec.MaxCalls, int64(a.MaxCalls)), MaxTurns: orDefault(spec.MaxTurns, int64(a.MaxTurns)),
			MaxTokens: orDefault(spec.MaxTokens, int64(a.MaxTokens)), MaxRuntime: orDefault(spec.MaxRuntime, a.MaxRuntime.Std()),
		},
		Deliver: deliver, Expires: now.Add(expires).UTC().Truncate(time.Second), Split: plan, Reminder: spec.Reminder,
	}
	// Canonical form, as Decode would give it back: the profile sorted
	// without repeats, never nil (the expiry is UTC already).
	b.Tools = slices.Compact(slices.Sorted(slices.Values(b.Tools)))
	if b.Tools == nil {
		b.Tools = []string{}
	}
	return b, s.checkTaskRules(b)
}

func orDefault[T int64 | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// Add stores a new task, pending the owner's approval. Nothing runs
// until `task approve`.
func (s *Service) Add(ctx context.Context, spec TaskSpec) (TaskInfo, error) {
	reason := "added, waiting for approval"
	switch spec.Origin {
	case "", store.TaskFromCLI:
		spec.Origin = store.TaskFromCLI
	case store.TaskFromWeb:
		reason = "added in the web UI, waiting for approval"
	default:
		return TaskInfo{}, fmt.Errorf("%w: origin %q: a task is added from the cli or the web (a conversation's go through AddApproved)", ErrInvalid, spec.Origin)
	}
	if !validTaskName(spec.Name) {
		return TaskInfo{}, fmt.Errorf("%w: task name %q: use 1 to 64 letters, digits, '-', '_' or '.'", ErrInvalid, spec.Name)
	}
	var plan *split.Plan
	if spec.Split {
		if spec.Tools != nil {
			return TaskInfo{}, fmt.Errorf("%w: a split task takes no --tools: its plan gives each worker its kind's tools", ErrInvalid)
		}
		// The rest of the spec is checked first: no model call for a
		// task that would be refused anyway.
		if _, err := s.taskBody(spec, task.NewID(), s.now(), nil); err != nil {
			return TaskInfo{}, err
		}
		var err error
		if plan, err = s.planTask(ctx, spec.Prompt); err != nil {
			return TaskInfo{}, err
		}
	}
	row, b, err := s.pendingTask(spec, task.NewID(), s.now(), plan, spec.Origin)
	if err != nil {
		return TaskInfo{}, err
	}
	err = s.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.InsertTask(row); err != nil {
			return err
		}
		return s.auditTask(tx, b.Owner, row.ID, policy.RuleTaskAdded, reason, "")
	})
	if err != nil {
		return TaskInfo{}, err
	}
	// The row just written: no need to read it back, nor its runs.
	in, err := s.describeTask(row, b, nil)
	in.Warning = s.ceilingWarning(b)
	return in, err
}

func validTaskName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// auditTask appends a record of a task's life (Tool "task", decision ran)
// or of a refused run (denied, with why).
func (s *Service) auditTask(tx *store.Tx, owner, id, rule, reason, why string) error {
	d := audit.Ran
	if why != "" {
		d = audit.Denied
		reason = why
	}
	_, err := audit.Append(tx, audit.Record{
		Time: s.now(), Owner: owner, Session: "task-" + id, Trust: policy.TrustOwner,
		Tool: "task", Decision: d, Rule: rule, Reason: s.o.Redactor.Redact(reason),
		Args: `{"task":` + strconv.Quote(id) + `}`,
	})
	return err
}

// taskOf reads task id of this owner; another owner's is not found.
func (s *Service) taskOf(ctx context.Context, id string) (store.Task, error) {
	t, err := s.o.Store.Task(ctx, id)
	if err == nil && t.Owner != s.o.Config.Owner {
		err = fmt.Errorf("get task %s: %w", id, store.ErrNotFound)
	}
	return t, err
}

// Info returns one task as people see it.
func (s *Service) Info(ctx context.Context, id string) (TaskInfo, error) {
	t, err := s.taskOf(ctx, id)
	if err != nil {
		return TaskInfo{}, err
	}
	return s.taskInfo(ctx, t)
}

func (s *Service) taskInfo(ctx context.Context, t store.Task) (TaskInfo, error) {
	runs, err := s.o.Store.RecentRuns(ctx, t.ID, 1)
	if err != nil {
		return TaskInfo{}, err
	}
	var last *store.TaskRun
	if len(runs) > 0 {
		last = &runs[0]
	}
	b, err := task.Decode(t.Body)
	if err != nil {
		in := TaskInfo{ID: t.ID, Owner: t.Owner, Name: t.Name, Status: t.Status, Origin: t.Origin, Canonical: string(t.Body),
			ApprovedAt: t.ApprovedAt, ExpiresAt: t.ExpiresAt, NextRunAt: t.NextRunAt, LastRun: last,
			Problem: "its stored body does not decode: it changed since it was added"}
		if len(t.MAC) >= sealPrefix {
			in.Seal = t.MAC[:sealPrefix]
		}
		return in, nil
	}
	return s.describeTask(t, b, last)
}

// describeTask is TaskInfo of row t whose stored body decoded to b.
func (s *Service) describeTask(t store.Task, b task.Body, last *store.TaskRun) (TaskInfo, error) {
	in := TaskInfo{ID: t.ID, Owner: t.Owner, Name: t.Name, Status: t.Status, Origin: t.Origin, Canonical: string(t.Body), Body: b,
		ApprovedAt: t.ApprovedAt, ExpiresAt: t.ExpiresAt, NextRunAt: t.NextRunAt, LastRun: last}
	if len(t.MAC) >= sealPrefix {
		in.Seal = t.MAC[:sealPrefix]
	}
	var err error
	if in.Hash, err = task.Hash(b); err != nil {
		return TaskInfo{}, err
	}
	if spec, err := b.Spec(); err == nil {
		in.Schedule = spec.String()
		if t.Status == store.TaskActive && !t.NextRunAt.IsZero() {
			in.Next = append([]time.Time{t.NextRunAt}, schedule.Upcoming(spec, t.NextRunAt, 2)...)
		}
	}
	key, err := s.taskKey()
	if err != nil {
		return TaskInfo{}, err
	}
	if s, err := task.Seal(key, b); err == nil {
		in.SealIfApproved = s[:sealPrefix]
	}
	in.Problem = taskProblem(key, t, s.now())
	return in, nil
}

// taskProblem says why t will not run now, or "".
func taskProblem(key []byte, t store.Task, now time.Time) string {
	switch t.Status {
	case store.TaskPending:
		return "waiting for approval: homard task approve " + t.ID
	case store.TaskRemoved:
		return "removed"
	}
	_, err := task.Check(key, t, now)
	switch {
	case errors.Is(err, task.ErrExpired):
		return "its approval expired: homard task renew " + t.ID
	case errors.Is(err, task.ErrBodyChanged):
		return "it changed since it was approved: homard task show " + t.ID + ", then approve it again"
	case err != nil:
		return err.Error()
	case t.Status == store.TaskPaused:
		return "paused: homard task resume " + t.ID
	case t.NextRunAt.IsZero():
		return "no slot left to run"
	}
	return ""
}

// List lists the owner's tasks that are not removed, oldest first.
func (s *Service) List(ctx context.Context) ([]TaskInfo, error) {
	ts, err := s.o.Store.Tasks(ctx, s.o.Config.Owner)
	if err != nil {
		return nil, err
	}
	out := make([]TaskInfo, 0, len(ts))
	for _, t := range ts {
		in, err := s.taskInfo(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// Approve seals task id's stored body: from now on its runs are held
// to exactly it. shownHash, when set, is the body hash (or a prefix of at
// least 12 digits) the owner was shown; a body that differs is refused
// (ErrTaskChanged). The body is checked again against this config. Only
// the CLI and the web UI call this: no tool can.
func (s *Service) Approve(ctx context.Context, id, shownHash string) (TaskInfo, error) {
	t, err := s.taskOf(ctx, id)
	if err != nil {
		return TaskInfo{}, err
	}
	if t.Status == store.TaskRemoved {
		return TaskInfo{}, fmt.Errorf("approve task %s: %w: it was removed", id, ErrTaskState)
	}
	b, err := task.Decode(t.Body)
	if err != nil {
		return TaskInfo{}, fmt.Errorf("approve task %s: %w", id, err)
	}
	hash, err := task.Hash(b)
	if err != nil {
		return TaskInfo{}, err
	}
	if shownHash != "" && (len(shownHash) < 12 || !strings.HasPrefix(hash, strings.ToLower(shownHash))) {
		return TaskInfo{}, fmt.Errorf("approve task %s: %w (its hash is %s)", id, ErrTaskChanged, hash[:12])
	}
	now := s.now()
	if !now.Before(b.Expires) {
		return TaskInfo{}, fmt.Errorf("approve task %s: %w: its approval would end on %s, already past; renew it instead: homard task renew %s", id, ErrTaskState, b.Expires.Format(time.RFC3339), id)
	}
	return s.seal(ctx, t, b, now, policy.RuleTaskApproved, "approved body "+hash[:12])
}

// seal stores b sealed for t and sets its next run.
func (s *Service) seal(ctx context.Context, t store.Task, b task.Body, now time.Time, rule, reason string) (TaskInfo, error) {
	if err := s.checkTaskRules(b); err != nil {
		return TaskInfo{}, err
	}
	key, err := s.taskKey()
	if err != nil {
		return TaskInfo{}, err
	}
	mac, err := task.Seal(key, b)
	if err != nil {
		return TaskInfo{}, err
	}
	c, err := b.Canonical()
	if err != nil {
		return TaskInfo{}, err
	}
	next, err := nextSlot(b, now)
	if err != nil {
		return TaskInfo{}, err
	}
	err = s.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.ApproveTask(t.ID, c, mac, now, b.Expires); err != nil {
			return err
		}
		if err := tx.SetNextRun(t.ID, next); err != nil {
			return err
		}
		return s.auditTask(tx, t.Owner, t.ID, rule, reason, "")
	})
	if err != nil {
		return TaskInfo{}, err
	}
	s.wakeScheduler()
	return s.Info(ctx, t.ID)
}

// nextSlot is the first slot of b after now (zero when none is left).
func nextSlot(b task.Body, now time.Time) (time.Time, error) {
	spec, err := b.Spec()
	if err != nil {
		return time.Time{}, err
	}
	next, _ := schedule.Next(spec, now)
	return next, nil
}

// Renew re-approves an unchanged task for d more (0 means
// automation.expiry): the stored body must still carry its seal, expired
// or not; only its expiry changes.
func (s *Service) Renew(ctx context.Context, id string, d time.Duration) (TaskInfo, error) {
	t, err := s.taskOf(ctx, id)
	if err != nil {
		return TaskInfo{}, err
	}
	if t.Status == store.TaskPending || t.Status == store.TaskRemoved {
		return TaskInfo{}, fmt.Errorf("renew task %s: %w: it is %s; only an approved task is renewed", id, ErrTaskState, t.Status)
	}
	key, err := s.taskKey()
	if err != nil {
		return TaskInfo{}, err
	}
	// The seal must hold at the sealed expiry's eve: renewing never
	// launders a changed body.
	b, err := task.Decode(t.Body)
	if err == nil {
		_, err = task.Check(key, t, b.Expires.Add(-time.Second))
	}
	if err != nil {
		return TaskInfo{}, fmt.Errorf("renew task %s: %w", id, err)
	}
	if d == 0 {
		d = s.o.Config.Automation.Expiry.Std()
	}
	if d < time.Hour || d > 366*24*time.Hour {
		return TaskInfo{}, fmt.Errorf("%w: --expires %v: want between 1h and 366 days", ErrInvalid, d)
	}
	now := s.now()
	b.Expires = now.Add(d).UTC().Truncate(time.Second)
	return s.seal(ctx, t, b, now, policy.RuleTaskRenewed, "renewed until "+b.Expires.Format(time.RFC3339))
}

// Pause stops a task's slots; a run in progress stops before its
// next tool call.
func (s *Service) Pause(ctx context.Context, id string) (TaskInfo, error) {
	return s.setTaskStatus(ctx, id, store.TaskPaused, policy.RuleTaskPaused)
}

// Resume makes a paused task active again, from its next slot after
// now (slots missed while paused are not caught up).
func (s *Service) Resume(ctx context.Context, id string) (TaskInfo, error) {
	return s.setTaskStatus(ctx, id, store.TaskActive, policy.RuleTaskResumed)
}

// Remove ends a task for good; its runs stay readable.
func (s *Service) Remove(ctx context.Context, id string) (TaskInfo, error) {
	return s.setTaskStatus(ctx, id, store.TaskRemoved, policy.RuleTaskRemoved)
}

func (s *Service) setTaskStatus(ctx context.Context, id, status, rule string) (TaskInfo, error) {
	t, err := s.taskOf(ctx, id)
	if err != nil {
		return TaskInfo{}, err
	}
	if status == store.TaskActive && t.Status != store.TaskPaused {
		return TaskInfo{}, fmt.Errorf("resume task %s: %w: it is %s, not paused", id, ErrTaskState, t.Status)
	}
	if status == store.TaskPaused && t.Status != store.TaskActive {
		return TaskInfo{}, fmt.Errorf("pause task %s: %w: it is %s, not active", id, ErrTaskState, t.Status)
	}
	var next time.Time
	if status == store.TaskActive {
		if b, err := task.Decode(t.Body); err == nil {
			next, _ = nextSlot(b, s.now())
		}
	}
	err = s.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.SetTaskStatus(id, status); err != nil {
			return err
		}
		if status == store.TaskActive {
			if err := tx.SetNextRun(id, next); err != nil {
				return err
			}
		}
		return s.auditTask(tx, t.Owner, id, rule, status, "")
	})
	if err != nil {
		if errors.Is(err, store.ErrTaskStatus) {
			return TaskInfo{}, fmt.Errorf("%w: %w", ErrTaskState, err)
		}
		return TaskInfo{}, err
	}
	s.wakeScheduler()
	return s.Info(ctx, id)
}

// Runs returns task id's last n runs, newest first.
func (s *Service) Runs(ctx context.Context, id string, n int) ([]store.TaskRun, error) {
	if _, err := s.taskOf(ctx, id); err != nil {
		return nil, err
	}
	return s.o.Store.RecentRuns(ctx, id, n)
}

// usageJSON is a run's usage as stored.
func usageJSON(input, output, cached int) []byte {
	b, _ := json.Marshal(map[string]int{"input": input, "output": output, "cached": cached})
	return b
}
