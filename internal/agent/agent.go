// Package agent runs the tool loop of one turn: it assembles the request
// (a stable prefix of system prompt and tool definitions, then history, then
// the user message), streams the model, sends every tool call the model
// proposes to the arbiter as a Proposal, and returns each Outcome to the model
// as a tool message, until the model gives a final answer or a budget is
// spent.
//
// Contract: the agent never runs a tool itself; it only asks a Decider. The
// system prompt and tool definitions are byte-identical from call to call
// and from turn to turn (tools sorted by name), so provider prompt caches
// hold. Untrusted tool output reaches the model only between per-turn nonce
// markers, with marker look-alikes in the content neutralised. A tool call is
// never separated from its result in TurnResult.Messages. Turn starts no
// goroutines; when ctx ends it closes the model stream and returns ctx.Err().
//
// Every request stays within a ContextBudget (context.go): when it would
// not, the oldest whole turns are folded into an incremental summary by a
// model call without tool calls, or by rules when that call fails, and the
// turn goes on; the summary re-enters the context as labelled data, never
// as instructions. Notes recalled from the owner's memory (Conversation.Memory)
// enter the same way: a labelled data block before the owner's message,
// capped at MemoryChars, counted against the budget, never stored with the
// turn. A tool call is never separated from its result in any
// request. If the turn's own messages are still too big, only the copy sent
// to the model is shrunk. When the provider still refuses a request as
// longer than the model's window, the turn folds to a smaller budget and
// tries once more, then ends with ErrContextTooLong (overflow.go). The caller stores the turn and the summary
// (internal/app). Large results arrive already cut to a preview by the
// arbiter (stage 10 stores the whole text as an artifact); an Asker lets
// a channel with the owner present answer approval cards mid-turn.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// Decider decides one proposal; *arbiter.Arbiter is one.
type Decider interface {
	Decide(ctx context.Context, p arbiter.Proposal) (arbiter.Outcome, error)
}

var _ Decider = (*arbiter.Arbiter)(nil)

// Options configure an Agent. Model, Decider and Caller are required.
type Options struct {
	Model llm.Model
	// ModelName is sent as llm.Request.Model.
	ModelName string
	// SummaryModel, when set, writes the conversation summary when older
	// turns are folded (summary.go), in place of Model: a cheaper model
	// may do it ([models.roles] summary). Its requests are the same, as
	// large as Context allows. Nil means Model.
	SummaryModel llm.Model
	// SummaryModelName is sent as llm.Request.Model with SummaryModel.
	SummaryModelName string
	Decider          Decider
	// Tools are the tools offered to the model, usually Registry.Specs().
	// Name, Description and Schema are sent; Action and ReadOnly weigh the
	// budget. The order does not matter: they are sent sorted by name.
	Tools []tool.Spec
	// System is the system prompt, sent unchanged on every call.
	System string
	// Caller is who this agent acts for; it comes from the channel's
	// authentication and is put on every Proposal.
	Caller arbiter.Caller
	Budget Budget
	// Ask, when set, is called for each call the arbiter leaves pending,
	// so a channel with the owner present can ask at once. Without it the
	// call stays pending and the model is told so.
	Ask Asker
	// Context caps the size of every request (see context.go).
	Context ContextBudget
	// EndTool, when set, names the tool whose call, once the decider ran
	// it, ends the turn: later calls of that answer are not run and no
	// further model call is made (TurnResult.Ended). A scheduled run ends
	// with complete_task this way.
	EndTool string
	// Forward, when set, is given every call the model makes before
	// anything else sees it, and returns the call to handle in its place:
	// a proxy such as call_tool{name, arguments} becomes the named tool's
	// own call (same id), so the budget, the events, the Asker's card and
	// the Decider all see the real tool. A call it does not rewrite comes
	// back unchanged. A non-nil Refusal refuses the call as the model made
	// it (audited under its rule; the model reads its reason).
	Forward func(llm.ToolCall) (llm.ToolCall, *tool.Refusal)
	// Callable are tools not offered (not sent) that Forward may turn a
	// call into: their specs weigh such a call in the budget.
	Callable []tool.Spec
	// OnModelCall, when set, is told of every model call of a turn once
	// it has ended (a summary's too), on the turn's goroutine: app
	// traces it (internal/telemetry). Nil means nobody is told.
	OnModelCall func(ModelCall)
}

// ModelCall is one model call of a turn, as OnModelCall reports it.
type ModelCall struct {
	// Model is the model name sent.
	Model string
	// Step is the turn's model call it belongs to, from 1 (a summary's:
	// the step that folded); Final says it was the tool-less final answer,
	// Summary that it wrote the conversation summary.
	Step           int
	Final, Summary bool
	// Start is when the request was sent; Took how long until the stream
	// ended or failed.
	Start time.Time
	Took  time.Duration
	// Usage is this call's usage as the provider reported it.
	Usage llm.Usage
	// Err is why the call failed; nil when it answered.
	Err error
}

// Agent runs turns. It holds no per-turn state and is safe for concurrent
// use if its Model and Decider are.
type Agent struct {
	model    llm.Model
	name     string
	summary  llm.Model // writes the summary of folded turns
	sumName  string
	decider  Decider
	system   string
	caller   arbiter.Caller
	budget   Budget
	ask      Asker
	endTool  string
	forward  func(llm.ToolCall) (llm.ToolCall, *tool.Refusal)
	onModel  func(ModelCall)
	window   ContextBudget
	prefix   int                  // estimated tokens of system prompt and tools
	specs    []llm.ToolSpec       // sorted by name; never modified after New
	byName   map[string]tool.Spec // for weights and read-only checks
	newNonce func() string
}

// New builds an Agent.
func New(o Options) *Agent {
	a := &Agent{
		model:    o.Model,
		name:     o.ModelName,
		summary:  o.Model,
		sumName:  o.ModelName,
		decider:  o.Decider,
		system:   o.System,
		caller:   o.Caller,
		budget:   o.Budget.withDefaults(),
		ask:      o.Ask,
		endTool:  o.EndTool,
		forward:  o.Forward,
		onModel:  o.OnModelCall,
		window:   o.Context.withDefaults(),
		byName:   make(map[string]tool.Spec, len(o.Tools)),
		newNonce: randomNonce,
	}
	if o.SummaryModel != nil {
		a.summary, a.sumName = o.SummaryModel, o.SummaryModelName
	}
	specs := slices.Clone(o.Tools)
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	for _, s := range specs {
		if _, dup := a.byName[s.Name]; dup {
			continue // the registry refuses duplicates; keep the first
		}
		a.byName[s.Name] = s
		a.specs = append(a.specs, llm.ToolSpec{
			Name:        s.Name,
			Description: s.Description,
			Schema:      bytes.Clone(s.Schema),
		})
	}
	for _, s := range o.Callable {
		if _, dup := a.byName[s.Name]; !dup {
			a.byName[s.Name] = s // weighed, never sent
		}
	}
	a.prefix = prefixTokens(a.system, a.specs)
	return a
}

// EventKind says which fields of an Event are set.
type EventKind int

const (
	// EventText carries Text, a fragment of the model's answer.
	EventText EventKind = iota + 1
	// EventToolCall carries Call, a proposal about to be decided.
	EventToolCall
	// EventToolResult carries Call and Outcome. When the agent did not
	// propose the call (budget spent or loop stopped), Outcome is the
	// refusal recorded for it (Denied, with the rule, such as
	// "budget.calls") and Text says why.
	EventToolResult
	// EventStopped carries Text, why the loop stopped early.
	EventStopped
	// EventCompacted carries Text, which earlier turns were folded into the
	// summary and how.
	EventCompacted
)

// Event is something a channel may show while a turn runs.
type Event struct {
	Kind    EventKind
	Text    string
	Call    llm.ToolCall
	Outcome *arbiter.Outcome
	// Step is the model call of the turn, from 1, that proposed Call; set
	// on EventToolCall and EventToolResult. A channel separates steps by it.
	Step int
}

// TurnResult is what one turn produced.
type TurnResult struct {
	// Text is the final answer.
	Text string
	// Messages are the messages this turn added to the conversation, the
	// user message first. Every assistant tool call is followed by its
	// tool message.
	Messages []llm.Message
	// Pending lists the approval ids the turn is waiting for.
	Pending []string
	// Usage sums every model call of the turn.
	Usage llm.Usage
	// Calls and Units are the tool budget spent.
	Calls int
	Units int
	// Stopped says why the loop stopped early; empty when the model
	// answered on its own.
	Stopped string
	// Ended says a call of Options.EndTool ran and ended the turn.
	Ended bool
	// Summary is the conversation summary after this turn: the one given,
	// or a new one when earlier turns were folded.
	Summary string
	// SummarizedThrough is how many messages of the given history Summary
	// now covers; the next turn continues from the rest.
	SummarizedThrough int
}

// Turn runs one turn: user is the owner's message, history the earlier
// conversation (not modified). It is Continue with no summary yet. onEvent may be nil; it is called on the
// calling goroutine. On error the TurnResult holds what the turn had done.
func (a *Agent) Turn(ctx context.Context, history []llm.Message, user string, onEvent func(Event)) (TurnResult, error) {
	return a.Continue(ctx, Conversation{History: history}, user, onEvent)
}

func (a *Agent) runTurn(ctx context.Context, conv Conversation, user string, onEvent func(Event)) (TurnResult, error) {
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	t := &turn{
		a:      a,
		window: a.window,
		nonce:  a.newNonce(),
		cs:     contextState{summary: conv.Summary, history: conv.History},
	}
	if m, ok := memoryMessage(conv.Memory); ok {
		t.cs.memory, t.cs.memoryLen = m, messageTokens(m)
	}
	t.onEvent = func(e Event) {
		if e.Kind == EventToolCall || e.Kind == EventToolResult {
			e.Step = t.step
		}
		onEvent(e)
	}
	t.res.Summary = conv.Summary
	t.res.Messages = []llm.Message{{Role: llm.RoleUser, Content: user}}
	err := t.run(ctx)
	return t.res, err
}

// turn is the state of one Turn; it is used by one goroutine.
type turn struct {
	a       *Agent
	onEvent func(Event)
	nonce   string
	cs      contextState // summary and the history not folded
	res     TurnResult
	// window is the context budget of this turn's requests: the agent's,
	// until the provider says a request was too long (overflow.go).
	window   ContextBudget
	sent     int  // estimated tokens of the last request sent
	refitted bool // window was shrunk once after a context-length refusal

	step    int    // model calls of the turn so far, summaries not counted
	ended   bool   // a call of the end tool ran
	warned  bool   // the half-budget note was given
	lastKey string // tool + args of the last failing call
	streak  int    // how many times in a row lastKey failed

	// list is the message list assemble made for the request in flight
	// (a list of lists, returned when it is over); sizes its estimates,
	// reused by the turn's next request.
	list  []llm.Message
	sizes []int
}

func (t *turn) run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop := t.stepsSpent(); stop != "" {
			t.res.Stopped = stop
			t.onEvent(Event{Kind: EventStopped, Text: stop})
			return nil
		}
		t.step++
		got, err := t.streamFitting(ctx, false)
		if err != nil {
			return err
		}
		if len(got.ToolCalls) == 0 {
			t.res.Messages = append(t.res.Messages, llm.Message{Role: llm.RoleAssistant, Content: got.Text})
			t.res.Text = got.Text
			return nil
		}
		t.res.Messages = append(t.res.Messages, llm.Message{Role: llm.RoleAssistant, Content: got.Text, ToolCalls: got.ToolCalls})
		if stop := t.tokensSpent(); stop != "" {
			return t.endSpent(ctx, got, stop)
		}
		stop, err := t.handleCalls(ctx, got.ToolCalls)
		if err != nil {
			return err
		}
		if t.ended {
			t.res.Ended = true
			t.res.Text = got.Text
			return nil
		}
		if stop != "" {
			return t.finish(ctx, stop)
		}
	}
}

// finish records why the loop stopped, tells the model in the last tool
// message, and asks it, with no tools offered, for a final answer.
func (t *turn) finish(ctx context.Context, stop string) error {
	t.res.Stopped = stop
	t.onEvent(Event{Kind: EventStopped, Text: stop})
	last := &t.res.Messages[len(t.res.Messages)-1]
	last.Content += "\n\n[homard note: " + stop + ". No more tools can be called in this turn. " +
		"Give your final answer now: say what the tool results above confirm, and what is not confirmed or not done.]"
	t.step++
	got, err := t.streamFitting(ctx, true)
	if err != nil {
		return err
	}
	// Tool calls in this answer are not run: none were offered, and a call
	// without a result must not enter the conversation. Each is still
	// recorded as a denial, so the audit holds every call the model made.
	for _, c := range got.ToolCalls {
		_, err := t.a.decider.Decide(ctx, arbiter.Proposal{Tool: c.Name, Args: c.Args, Caller: t.a.caller,
			Refuse: &tool.Refusal{Rule: policy.RuleLoopFinalAnswer, Reason: "not run: tools cannot be called in the final answer of a turn (" + stop + ")"}})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("record refused %s: %w", c.Name, err)
		}
	}
	t.res.Messages = append(t.res.Messages, llm.Message{Role: llm.RoleAssistant, Content: got.Text})
	t.res.Text = got.Text
	return nil
}

// stream makes one model call and gathers its answer, passing text deltas
// on. When ctx ends it returns ctx.Err(); the stream is always closed.
func (t *turn) stream(ctx context.Context, final bool) (_ llm.Result, err error) {
	msgs, size, err := t.assemble(ctx)
	if err != nil {
		return llm.Result{}, err
	}
	defer func() { putList(t.list); t.list = nil }() // after s.Close, deferred below
	// The final answer keeps the same tools (a stable, cacheable prefix)
	// but may not call them.
	req := llm.Request{Model: t.a.name, System: t.a.system, Messages: msgs, Tools: t.a.specs, NoToolCalls: final}
	t.sent = t.a.prefix + size
	mc := ModelCall{Model: t.a.name, Step: t.step, Final: final, Start: time.Now()}
	defer func() { t.reportModel(mc, err) }()
	s, err := t.a.model.Stream(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return llm.Result{}, ctx.Err()
		}
		return llm.Result{}, fmt.Errorf("model: %w", err)
	}
	defer s.Close()
	var r llm.Result
	var text strings.Builder
	for {
		ev, err := s.Next()
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		if errors.Is(err, io.EOF) {
			r.Text = text.String()
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("model stream: %w", err)
		}
		switch ev.Kind {
		case llm.EventText:
			text.WriteString(ev.Text)
			t.onEvent(Event{Kind: EventText, Text: ev.Text})
		case llm.EventToolCall:
			r.ToolCalls = append(r.ToolCalls, ev.ToolCall)
		case llm.EventUsage:
			mc.Usage.Input += ev.Usage.Input
			mc.Usage.Output += ev.Usage.Output
			mc.Usage.Cached += ev.Usage.Cached
			mc.Usage.CacheWrite += ev.Usage.CacheWrite
			t.res.Usage.Input += ev.Usage.Input
			t.res.Usage.Output += ev.Usage.Output
			t.res.Usage.Cached += ev.Usage.Cached
			t.res.Usage.CacheWrite += ev.Usage.CacheWrite
		case llm.EventDone:
			r.StopReason = ev.StopReason
		}
	}
}

// reportModel tells Options.OnModelCall that the call mc ended with err.
func (t *turn) reportModel(mc ModelCall, err error) {
	if t.a.onModel == nil {
		return
	}
	mc.Took, mc.Err = time.Since(mc.Start), err
	t.a.onModel(mc)
}

// handleCalls decides each call in order and appends one tool message per
// call. It returns a non-empty reason when the loop must stop; calls after
// that point are answered "not run" so that none is left without a result.
func (t *turn) handleCalls(ctx context.Context, calls []llm.ToolCall) (string, error) {
	stop := ""
	for _, c := range calls {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		var content string
		if stop != "" {
			var err error
			if content, err = t.refuse(ctx, c, policy.RuleLoopStopped, stop); err != nil {
				return "", err
			}
		} else {
			var err error
			content, stop, err = t.handleCall(ctx, c)
			if err != nil {
				return "", err
			}
		}
		t.res.Messages = append(t.res.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: content})
	}
	return stop, nil
}

// handleCall checks the budget, proposes c to the decider and renders the
// tool message. stop is set when this call spent a hard budget or was the
// third identical failure in a row.
func (t *turn) handleCall(ctx context.Context, c llm.ToolCall) (content, stop string, err error) {
	b := t.a.budget
	if t.a.forward != nil {
		fc, ref := t.a.forward(c)
		if ref != nil {
			// Counted as a call, so a model that keeps asking still ends.
			t.res.Calls++
			content, err = t.refuse(ctx, c, ref.Rule, ref.Reason)
			return content + t.note(), "", err
		}
		c = fc
	}
	w, readOnly := t.a.weigh(c.Name)
	switch {
	case t.res.Calls >= b.MaxCalls:
		stop = fmt.Sprintf("the tool-call budget of this turn is spent (%d calls)", b.MaxCalls)
		content, err = t.refuse(ctx, c, policy.RuleBudgetCalls, stop)
		return content, stop, err
	case t.res.Units+w > b.MaxUnits:
		stop = fmt.Sprintf("the tool budget of this turn is spent (%d of %d units used; this call needs %d)", t.res.Units, b.MaxUnits, w)
		content, err = t.refuse(ctx, c, policy.RuleBudgetUnits, stop)
		return content, stop, err
	case !readOnly && t.res.Units+w > b.MaxUnits-b.Reserve:
		// Counted as a call (so a model that keeps asking still ends) but
		// spends no units; read-only tools may still use the reserve.
		t.res.Calls++
		content, err = t.refuse(ctx, c, policy.RuleBudgetReserve, fmt.Sprintf("only read-only tools may use the last %d units of this turn's budget (%d of %d used)", b.Reserve, t.res.Units, b.MaxUnits))
		return content + t.note(), "", err
	}

	t.onEvent(Event{Kind: EventToolCall, Call: c})
	out, err := t.a.decider.Decide(ctx, arbiter.Proposal{Tool: c.Name, Args: c.Args, Caller: t.a.caller})
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return "", "", fmt.Errorf("decide %s: %w", c.Name, err)
	}
	t.res.Calls++
	t.res.Units += w
	t.onEvent(Event{Kind: EventToolResult, Call: c, Outcome: &out})
	if out, err = t.ask(ctx, c, out); err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return "", "", fmt.Errorf("ask about %s: %w", c.Name, err)
	}
	if out.Decision == arbiter.Pending && out.ApprovalID != "" {
		t.res.Pending = append(t.res.Pending, out.ApprovalID)
	}
	content = t.render(out) + t.note()

	if out.Decision == arbiter.Error || out.Decision == arbiter.Denied {
		key := c.Name + "\x00" + compactArgs(c.Args)
		if key == t.lastKey {
			t.streak++
		} else {
			t.lastKey, t.streak = key, 1
		}
		if t.streak >= repeatLimit {
			return content, fmt.Sprintf("the same failing call (%s with the same arguments) was made %d times in a row", c.Name, repeatLimit), nil
		}
	} else {
		t.lastKey, t.streak = "", 0
	}
	if t.a.endTool != "" && c.Name == t.a.endTool && out.Decision == arbiter.Ran {
		t.ended = true
		return content, "the turn ended with " + c.Name, nil
	}
	if t.res.Calls >= b.MaxCalls || t.res.Units >= b.MaxUnits {
		stop = fmt.Sprintf("the tool budget of this turn is spent (%d of %d calls, %d of %d units)", t.res.Calls, b.MaxCalls, t.res.Units, b.MaxUnits)
	}
	return content, stop, nil
}

// refuse answers a call the agent will not propose (why is the reason):
// the arbiter records it as a denial under rule, so the audit holds every
// call the model made, and the model reads "not run: " + why.
func (t *turn) refuse(ctx context.Context, c llm.ToolCall, rule, why string) (string, error) {
	out, err := t.a.decider.Decide(ctx, arbiter.Proposal{Tool: c.Name, Args: c.Args, Caller: t.a.caller,
		Refuse: &tool.Refusal{Rule: rule, Reason: "not run: " + why}})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("record refused %s: %w", c.Name, err)
	}
	content := "not run: " + why
	t.onEvent(Event{Kind: EventToolResult, Call: c, Text: content, Outcome: &out})
	return content, nil
}

// repeatLimit is how many identical failing calls in a row stop the loop.
const repeatLimit = 3

// note returns the half-budget warning the first time half of a budget is
// spent, and "" otherwise.
func (t *turn) note() string {
	b := t.a.budget
	if t.warned || (2*t.res.Calls < b.MaxCalls && 2*t.res.Units < b.MaxUnits) {
		return ""
	}
	t.warned = true
	return fmt.Sprintf("\n\n[homard note: half of this turn's tool budget is spent (%d of %d calls, %d of %d units). Plan to finish soon.]",
		t.res.Calls, b.MaxCalls, t.res.Units, b.MaxUnits)
}

// render is the tool message for an outcome: decision and reason, the
// approval to wait for, and the result, wrapped when untrusted.
func (t *turn) render(out arbiter.Outcome) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "decision: %s\n", out.Decision)
	if out.Reason != "" {
		fmt.Fprintf(&sb, "reason: %s\n", oneLine(out.Reason))
	}
	if out.Decision == arbiter.Pending {
		fmt.Fprintf(&sb, "waiting for approval %s; do not retry in this turn. If the owner later says it is approved, propose exactly the same call again: it then runs once\n", out.ApprovalID)
	}
	if out.Result != nil && (out.Decision == arbiter.Ran || out.Decision == arbiter.Error) {
		if out.Result.IsError {
			sb.WriteString("the tool reported an error:\n")
		}
		if out.Result.Untrusted {
			sb.WriteString(wrapUntrusted(t.nonce, out.Result.Text))
		} else {
			sb.WriteString(out.Result.Text)
		}
	}
	return strings.TrimRight(sb.String(), "\n")
}

// compactArgs normalises whitespace in JSON arguments so that the same call
// with different spacing counts as the same call.
func compactArgs(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
