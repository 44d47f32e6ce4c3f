package arbiter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/monitor"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// call carries one proposal through the stages.
type call struct {
	p      Proposal
	mode   policy.Mode
	tool   tool.Tool
	plan   tool.Plan
	out    Outcome
	runID  string
	status string // ToolRun status when a run row exists
	// taint: the tool ran and its result may hold the owner's private
	// data, so finish marks the session private with the result.
	taint bool
	// ran: the tool was run, and what it returned enters the model's
	// context.
	ran bool
	// artifact is the whole result when it was too long for the model;
	// finish stores it in the audit transaction.
	artifact *store.Artifact
	// trip is the monitor rule that made this call ask (stage 5b), nil
	// when none did; monitorApproved, that it runs on the owner's
	// approval of that rule's card.
	trip            *monitor.Trip
	monitorApproved bool
	// runStart and runDur time stage 9 (Outcome.RunDur); runStart is
	// zero when the tool did not run.
	runStart time.Time
	runDur   time.Duration
}

// Decide runs the whole pipeline for one proposal.
func (a *Arbiter) Decide(ctx context.Context, p Proposal) (Outcome, error) {
	start := time.Now() // durations only (Outcome.DecideDur); records use a.o.Now
	c := &call{p: p, mode: p.Mode}
	if c.mode == "" {
		c.mode = a.o.Mode
	}
	if err := a.decide(ctx, c); err != nil {
		return Outcome{}, err
	}
	c.out.DecideDur, c.out.RunDur = time.Since(start), c.runDur
	if !c.runStart.IsZero() {
		c.out.DecideDur = c.runStart.Sub(start)
	}
	return c.out, nil
}

func (a *Arbiter) decide(ctx context.Context, c *call) error {
	// Prepare and Run learn who is asking from the context, never from the
	// arguments the model wrote.
	ctx = tool.WithCaller(ctx, tool.Caller{Owner: c.p.Caller.Owner, Session: c.p.Caller.Session, Trust: c.p.Caller.Trust, Mode: c.mode})
	// Refused by the caller before it proposed: audited, nothing else.
	if r := c.p.Refuse; r != nil {
		c.out = Outcome{Decision: Denied, Rule: r.Rule, Reason: r.Reason}
		return a.finish(ctx, c)
	}
	// 4a. Entry trust fails closed before anything is looked up, so an
	// unknown caller cannot even probe which tools exist, let alone what
	// is in the workspace.
	if tr := c.p.Caller.Trust; !tr.Known() || tr == policy.TrustUnknown {
		c.out = Outcome{Decision: Denied, Rule: policy.RuleTrustUnknown, Reason: "the caller's identity is unknown; unknown callers may not use tools"}
		return a.finish(ctx, c)
	}
	if c.p.Caller.Owner == "" || c.p.Caller.Session == "" {
		c.out = Outcome{Decision: Denied, Rule: policy.RuleTrustUnknown, Reason: "the call names no owner or session; refusing"}
		return a.finish(ctx, c)
	}

	// 1. Lookup, among the tools the caller's trust allows. A guest's call
	// of any other tool, one of the owner's or one that does not exist,
	// gets one answer that names only the guest's tools, decided before
	// the tool decodes or prepares anything: what a guest is told never
	// depends on the owner's tools or records (a change set id, a path).
	// Policy checks the guest's Plan again (stage 5).
	t, ok := a.o.Registry.Lookup(c.p.Tool)
	if c.p.Caller.Trust == policy.TrustGuest && (!ok || !a.guestMay(t.Spec())) {
		c.out = Outcome{Decision: Denied, Rule: policy.RuleTrustGuestTools, Reason: a.notForGuest(c.p.Tool)}
		return a.finish(ctx, c)
	}
	if !ok {
		c.out = Outcome{Decision: Error, Rule: policy.RuleLookupUnknown, Reason: a.unknownTool(c.p.Tool)}
		return a.finish(ctx, c)
	}
	c.tool = t
	spec := t.Spec()

	// 2. Strict decode.
	params, err := t.Decode(c.p.Args)
	if err != nil {
		c.out = Outcome{Decision: Error, Rule: policy.RuleDecodeStrict, Reason: err.Error()}
		return a.finish(ctx, c)
	}

	// 4b. No secrets in arguments: a proposal carrying a key is an
	// exfiltration attempt whatever the tool.
	if kind, found := a.o.Redactor.Contains(string(c.p.Args)); found {
		c.out = Outcome{Decision: Denied, Rule: policy.RuleLimitSecretInArgs,
			Reason: "the arguments contain a secret (" + kind + "); secrets are never passed through tool arguments"}
		return a.finish(ctx, c)
	}

	// 3. Prepare the immutable Plan; 4c. hard limits found while preparing.
	plan, err := t.Prepare(ctx, params)
	if err != nil {
		var ref *tool.Refusal
		var bad *tool.ArgError
		switch {
		case errors.As(err, &ref):
			c.out = Outcome{Decision: Denied, Rule: ref.Rule, Reason: ref.Reason}
		case errors.As(err, &bad):
			c.out = Outcome{Decision: Error, Rule: policy.RuleArgsInvalid, Reason: bad.Reason}
		default:
			// homard failed, not the model: record it, then abort the turn.
			c.out = Outcome{Decision: Error, Rule: policy.RulePrepareFailed, Reason: "internal error while preparing the call"}
			if ferr := a.finish(ctx, c); ferr != nil {
				return ferr
			}
			return fmt.Errorf("arbiter: prepare %s: %w", spec.Name, err)
		}
		return a.finish(ctx, c)
	}
	c.plan = plan
	c.out.Plan, c.out.PlanHash, c.out.Risk = plan.Display(), plan.Hash(), plan.Risk().String()
	// 4b again, on the decoded Plan: JSON escapes ("\u0073k-…") hide a key
	// from the check on the raw arguments but not from the canonical form.
	if kind, found := a.o.Redactor.Contains(string(plan.Canonical())); found {
		c.out.Decision, c.out.Rule, c.status = Denied, policy.RuleLimitSecretInArgs, store.RunDenied
		c.out.Reason = "the arguments contain a secret (" + kind + "); secrets are never passed through tool arguments"
		return a.finish(ctx, c)
	}

	// 4e. A split worker's limits (limit.go).
	if rule, reason := limited(c.p.Caller.Limit, plan); rule != "" {
		c.out.Decision, c.out.Rule, c.status = Denied, rule, store.RunDenied
		c.out.Reason = reason
		return a.finish(ctx, c)
	}

	// 5 and 6. Policy and permission mode. Whether the session holds
	// private data matters only on the way out, so only an outbound Plan
	// pays for looking it up.
	private, privateText := false, ""
	if act := plan.Action(); (act == policy.ActionFetch || act == policy.ActionSend) && !a.o.AllowPrivateEgress {
		if a.o.TaintByValue {
			private, privateText, err = a.carries(ctx, c.p.Caller.Session, plan)
		} else {
			private, err = a.sessionPrivate(ctx, c.p.Caller.Session)
		}
		if err != nil {
			return err
		}
	}
	d := policy.Decide(policy.Input{
		Tool:   spec.Name,
		Action: plan.Action(),
		Risk:   plan.Risk(),
		// The Plan says whether this exact call only reads: run_command
		// classifies "git status" read-only although the tool is not.
		// Plans come from homard's own tool code; an adapter for outside
		// tools (MCP) must never copy a server's read-only hint here.
		ReadOnly: plan.ReadOnly(),
		// A command's class from the catalog (run_command sets it).
		Class:           plan.Class(),
		UnknownCommands: a.o.UnknownCommands,
		Targets:         plan.Targets(),
		Command:         plan.Command(),
		Trust:           c.p.Caller.Trust,
		Mode:            c.mode,
		Rules:           a.o.Rules,
		Guest:           a.o.GuestTools,
		Private:         private,
		PrivateText:     privateText,
		NewRecipient:    plan.NewRecipient(),
		Ceiling:         c.p.Ceiling,
	})
	c.out.Rule, c.out.Reason = d.Rule, d.Reason
	// 5b. Monitors: a pattern over the session's recent calls (repeated
	// denials, a burst of outbound calls after a private read, writes
	// spread over many folders) makes the call ask, with the evidence.
	// A monitor never allows and never lowers a deny: an operator deny
	// rule still denies. Its ask stands in every mode (monitor.go).
	if d.Verdict != policy.Deny {
		if trip, ok := a.check(c); ok {
			c.trip = &trip
			d.Verdict = policy.Ask
			c.out.Rule, c.out.Reason = trip.Rule, "the session's recent calls look unusual: "+trip.Evidence
		}
	}
	if d.Verdict != policy.Deny && !plan.ReadOnly() {
		// 4d. Damaged records: nothing with an effect runs or waits for
		// approval until the owner has looked (integrity.go).
		if held, err := a.held(ctx, c); err != nil || held {
			return err
		}
	}
	switch d.Verdict {
	case policy.Deny:
		c.out.Decision = Denied
		c.status = store.RunDenied
		return a.finish(ctx, c)
	case policy.Ask:
		// 7. Approval: a consumed once-approval for exactly this Plan, a
		// scoped grant, or a new pending card.
		ran, err := a.approve(ctx, c)
		if err != nil || !ran {
			return err
		}
	case policy.Allow:
	default:
		return fmt.Errorf("arbiter: policy returned verdict %q", d.Verdict)
	}
	return a.execute(ctx, c)
}

// approve reports whether the Plan may run now; if not it has recorded a
// pending approval and finished the call.
func (a *Arbiter) approve(ctx context.Context, c *call) (bool, error) {
	b := approval.Binding{Tool: c.plan.Tool(), PlanHash: c.plan.Hash(), Owner: c.p.Caller.Owner, Session: c.p.Caller.Session}
	// A Plan that runs the workspace's code was approved for the code as
	// it was when the card was drawn: a change applied since lapses it.
	changed, err := a.codeChanged(c.plan)
	if err != nil {
		return false, err
	}
	ap, ok, err := a.o.Approvals.ConsumeUnchanged(ctx, b, changed)
	if err != nil {
		return false, fmt.Errorf("arbiter: consume approval: %w", err)
	}
	if !ok && ap.ID != "" {
		c.out.Rule = policy.RuleApprovalLapsed
		c.out.Reason = "the workspace changed since you approved this (approval " + ap.ID + "); it needs a fresh approval"
	}
	if ok {
		c.out.ApprovalID, c.out.Rule, c.out.Reason = ap.ID, policy.RuleApprovalOnce, "approved by "+ap.DecidedBy+" ("+string(ap.Scope)+")"
		// The owner saw the monitor's evidence only on its own card: an
		// approval drawn for another reason runs this Plan but does not
		// restart the monitor's count.
		c.monitorApproved = c.trip != nil && ap.Rule == c.trip.Rule
		return true, nil
	}
	tmpl, hasTemplate := c.plan.Template()
	// A monitor's card asks about a pattern, not about this tool or these
	// targets: a grant for them does not answer it.
	if c.p.Caller.Trust == policy.TrustOwner && c.trip == nil {
		var g approval.Grant
		var ok bool
		var err error
		switch {
		case hasTemplate:
			// A command is covered only by a grant whose argv template
			// it fits, never by path patterns.
			g, ok, err = a.o.Approvals.MatchCommandGrant(ctx, b.Owner, b.Session, b.Tool, tmpl, c.plan.Risk(), a.o.CommandSlotInside)
		case len(c.plan.Command()) == 0:
			g, ok, err = a.o.Approvals.MatchGrant(ctx, b.Owner, b.Session, b.Tool, c.plan.Targets(), c.plan.Risk())
		}
		if err != nil {
			return false, fmt.Errorf("arbiter: match grant: %w", err)
		}
		if ok {
			c.out.Rule, c.out.Reason = policy.RuleGrant(g.ID), "covered by a "+string(g.Scope)+" approval"
			return true, nil
		}
	}
	// The preview is homard's, derived from the Plan (and the file a diff
	// is taken against), redacted like everything shown: the card stores
	// it beside the Plan, and the hash binds only the Plan.
	preview := a.o.Redactor.Redact(c.plan.Preview())
	card := approval.Card{Display: c.plan.Display(), Plan: c.plan.Canonical(), Preview: preview,
		Targets: c.plan.Targets(), Risk: c.plan.Risk(), Reach: policy.ReachOf(c.plan.Action(), c.plan.ReadOnly(), c.plan.Class()), Rule: c.out.Rule, Reason: a.o.Redactor.Redact(c.out.Reason)}
	if hasTemplate {
		card.Template = &tmpl
	}
	ap, err = a.o.Approvals.Request(ctx, b, card)
	if errors.Is(err, approval.ErrTooManyPending) {
		// The model proposes faster than the owner answers: refuse, and
		// say what to do, rather than bury the owner in cards.
		c.out.Decision, c.out.Rule, c.status = Denied, policy.RuleApprovalTooManyPending, store.RunDenied
		c.out.Reason = err.Error()
		return false, a.finish(ctx, c)
	}
	if err != nil {
		return false, fmt.Errorf("arbiter: request approval: %w", err)
	}
	c.out.Decision, c.out.ApprovalID, c.status = Pending, ap.ID, store.RunRequested
	c.out.Preview = ap.Preview // the card's, when an identical Plan already had one
	c.out.Reason += "; waiting for approval " + ap.ID
	return false, a.finish(ctx, c)
}

// execute records the ToolRun as running, runs exactly the Plan, and
// finishes the call with the redacted result.
func (a *Arbiter) execute(ctx context.Context, c *call) error {
	// 8. A durable ToolRun row before anything with an effect happens. A
	// read-only Plan has no effect to account for after a crash, so its row
	// is written once, with its result, in the audit transaction; that
	// halves the commits on the hot path. Either way the session must
	// belong to the caller before anything runs.
	if c.plan.ReadOnly() && c.tool.Spec().ReadOnly {
		owner, err := a.sessionOwner(ctx, c.p.Caller.Session)
		if err != nil {
			return err
		}
		if owner != "" && owner != c.p.Caller.Owner {
			c.out = Outcome{Decision: Denied, Rule: policy.RuleLimitSessionOwner, Reason: "session " + c.p.Caller.Session + " belongs to another owner"}
			return a.finish(ctx, c)
		}
	} else {
		now := a.o.Now()
		err := a.o.Store.Write(ctx, func(tx *store.Tx) error {
			if err := tx.EnsureSession(c.p.Caller.Session, c.p.Caller.Owner, now); err != nil {
				return err
			}
			id, err := tx.InsertToolRun(a.runRow(c, store.RunRunning))
			c.runID = id
			return err
		})
		if err != nil {
			c.runID = "" // rolled back
		}
		if errors.Is(err, store.ErrSessionOwner) {
			c.out = Outcome{Decision: Denied, Rule: policy.RuleLimitSessionOwner, Reason: "session " + c.p.Caller.Session + " belongs to another owner"}
			return a.finish(ctx, c)
		}
		if err != nil {
			return fmt.Errorf("arbiter: record tool run: %w", err)
		}
		a.owners.Store(c.p.Caller.Session, c.p.Caller.Owner)
	}

	// 9. Execute exactly the Plan. The tool re-enforces its own limits.
	// Whatever comes back (a result, an error text, a partial read) enters
	// the model's context, so the session is tainted from here on unless
	// the tool can only ever return public data. Fail closed: a tool says
	// PublicResult explicitly, and a Plan can still say it is private.
	c.taint = !c.tool.Spec().PublicResult || c.plan.PrivateResult()
	c.ran = true
	if c.runID != "" {
		// The tool may keep the run's id with its effect (a change set's
		// journal), so RecoverInterrupted can list that effect if this
		// process dies before finish.
		ctx = tool.WithCaller(ctx, tool.Caller{Owner: c.p.Caller.Owner, Session: c.p.Caller.Session, Trust: c.p.Caller.Trust, Mode: c.mode, Run: c.runID})
	}
	c.runStart = time.Now()
	res, err := c.tool.Run(ctx, c.plan)
	c.runDur = time.Since(c.runStart)
	if err != nil {
		if ctx.Err() != nil {
			c.out.Decision, c.status = Error, store.RunCancelled
			c.out.Result = &tool.Result{Text: "cancelled", IsError: true}
			_ = a.finish(context.WithoutCancel(ctx), c)
			return ctx.Err()
		}
		c.status = store.RunFailed
		c.out.Decision = Error
		c.out.Result = &tool.Result{Text: "internal error: " + a.o.Redactor.Redact(err.Error()), IsError: true}
		if ferr := a.finish(ctx, c); ferr != nil {
			return ferr
		}
		return fmt.Errorf("arbiter: run %s: %w", c.plan.Tool(), err)
	}

	// 10. Redact first, then cap; a long result becomes an artifact (the
	// redacted text only: a secret never reaches the artifacts table).
	res.Text = a.o.Redactor.Redact(res.Text)
	res = a.shape(c, res)
	c.out.Result = &res
	if res.IsError {
		c.out.Decision, c.status = Error, store.RunFailed
	} else {
		c.out.Decision, c.status = Ran, store.RunSucceeded
	}
	return a.finish(ctx, c)
}

// sessionOwner returns the owner of a session, "" if it does not exist yet.
func (a *Arbiter) sessionOwner(ctx context.Context, id string) (string, error) {
	if o, ok := a.owners.Load(id); ok {
		return o.(string), nil
	}
	sess, err := a.lookupSession(ctx, id)
	return sess.Owner, err
}

// sessionPrivate reports whether a session's context holds the owner's
// private data. A session found private is cached; any other answer is
// read again next time (see Arbiter.private).
func (a *Arbiter) sessionPrivate(ctx context.Context, id string) (bool, error) {
	if _, ok := a.private.Load(id); ok {
		return true, nil
	}
	sess, err := a.lookupSession(ctx, id)
	return !sess.PrivateSince.IsZero(), err
}

// lookupSession reads a session and caches its owner and, if it is
// private, that. A session that does not exist yet is the zero Session.
func (a *Arbiter) lookupSession(ctx context.Context, id string) (store.Session, error) {
	sess, err := a.o.Store.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Session{}, nil
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("arbiter: look up session: %w", err)
	}
	a.owners.Store(id, sess.Owner)
	if !sess.PrivateSince.IsZero() {
		a.private.Store(id, struct{}{})
	}
	return sess, nil
}

// MarkPrivate records that the caller's session now holds the owner's
// private data that did not come from a tool: the app calls it before it
// shows the model recalled memory. It creates the session if it does not
// exist and refuses one of another owner (store.ErrSessionOwner). After
// the first mark it costs a map lookup.
func (a *Arbiter) MarkPrivate(ctx context.Context, c Caller) error {
	if c.Owner == "" || c.Session == "" {
		return fmt.Errorf("arbiter: mark session private: the caller names no owner or session")
	}
	if o, ok := a.owners.Load(c.Session); ok && o != c.Owner {
		return fmt.Errorf("arbiter: mark session %s private: %w", c.Session, store.ErrSessionOwner)
	}
	a.watchPrivate(c.Session, "recalled memory")
	if _, ok := a.private.Load(c.Session); ok {
		return nil // a cached private session's owner is cached too
	}
	now := a.o.Now()
	err := a.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.EnsureSession(c.Session, c.Owner, now); err != nil {
			return err
		}
		return tx.MarkSessionPrivate(c.Session, now)
	})
	if err != nil {
		return fmt.Errorf("arbiter: mark session %s private: %w", c.Session, err)
	}
	a.owners.Store(c.Session, c.Owner)
	a.private.Store(c.Session, struct{}{})
	return nil
}

func (a *Arbiter) runRow(c *call, status string) store.ToolRun {
	now := a.o.Now()
	var result string
	var isErr bool
	if c.out.Result != nil {
		result, isErr = c.out.Result.Text, c.out.Result.IsError
	}
	return store.ToolRun{
		Result: result, IsError: isErr,
		SessionID: c.p.Caller.Session, Owner: c.p.Caller.Owner, Tool: c.plan.Tool(),
		PlanHash: c.plan.Hash(), Plan: []byte(a.o.Redactor.Redact(string(c.plan.Canonical()))),
		Display: a.o.Redactor.Redact(c.plan.Display()), Status: status,
		Decision: string(c.out.Decision), Rule: c.out.Rule, Reason: c.out.Reason, ApprovalID: c.out.ApprovalID,
		CreatedAt: now, UpdatedAt: now,
	}
}

// maxAuditEffects caps an audit record's list of changes (about 1,000
// paths); the change set's checkpoint keeps the whole list.
const maxAuditEffects = 64 << 10

// finish is stage 11: it writes the audit record, and the ToolRun's final
// state when there is one, in one transaction.
func (a *Arbiter) finish(ctx context.Context, c *call) error {
	now := a.o.Now()
	c.out.Reason = a.o.Redactor.Redact(c.out.Reason)
	rec := audit.Record{
		Time: now, Owner: c.p.Caller.Owner, Session: c.p.Caller.Session, Trust: c.p.Caller.Trust,
		Tool: capText(a.o.Redactor.Redact(c.p.Tool), 128), Decision: audit.Decision(c.out.Decision), Rule: c.out.Rule, Reason: c.out.Reason,
		Args: capText(a.o.Redactor.Redact(normalizeArgs(c.p.Args)), a.o.MaxAuditArgs), PlanHash: c.out.PlanHash,
		ApprovalID: c.out.ApprovalID,
	}
	if c.out.Result != nil && len(c.out.Result.Effects) > 0 {
		rec.Effects = capText(a.o.Redactor.Redact(strings.Join(c.out.Result.Effects, "\n")), maxAuditEffects)
	}
	inserted, marked := false, false
	// mark taints the session in this transaction, with the result that
	// taints it, the first time only: after that the cache answers and the
	// hot path issues no UPDATE. It runs only once the session is known to
	// be the caller's (it exists and holds their run).
	mark := func(tx *store.Tx) error {
		if err := a.keepText(tx, c); err != nil {
			return err
		}
		if !c.taint {
			return nil
		}
		if _, ok := a.private.Load(c.p.Caller.Session); ok {
			return nil
		}
		marked = true
		return tx.MarkSessionPrivate(c.p.Caller.Session, now)
	}
	err := a.o.Store.Write(ctx, func(tx *store.Tx) error {
		switch {
		case c.runID != "":
			var text string
			var isErr bool
			if c.out.Result != nil {
				text, isErr = c.out.Result.Text, c.out.Result.IsError
			}
			if err := tx.UpdateToolRun(c.runID, c.status, text, isErr, now); err != nil {
				return err
			}
			if err := mark(tx); err != nil {
				return err
			}
			rec.RunID = c.runID
		case c.status != "" && !c.plan.IsZero():
			// Denied or pending after a Plan existed, or a read-only
			// Plan that ran: one row with its final state. A session in
			// the owner cache exists (sessions are never deleted) and
			// InsertToolRun checks its owner again.
			if o, ok := a.owners.Load(c.p.Caller.Session); !ok || o != c.p.Caller.Owner {
				if err := tx.EnsureSession(c.p.Caller.Session, c.p.Caller.Owner, now); err != nil {
					if errors.Is(err, store.ErrSessionOwner) {
						break
					}
					return err
				}
			}
			id, err := tx.InsertToolRun(a.runRow(c, c.status))
			if err != nil {
				return err
			}
			if err := mark(tx); err != nil {
				return err
			}
			c.runID, rec.RunID, inserted = id, id, true
		}
		if c.artifact != nil {
			c.artifact.ToolRun, c.artifact.CreatedAt = c.runID, now
			if err := tx.InsertArtifact(*c.artifact); err != nil {
				return err
			}
		}
		r, err := audit.Append(tx, rec)
		if err != nil {
			return err
		}
		c.out.AuditSeq = r.Seq
		return nil
	})
	if err != nil {
		if inserted {
			c.runID = "" // rolled back with the audit record
		}
		return fmt.Errorf("arbiter: audit: %w", err)
	}
	if c.runID != "" {
		a.owners.Store(c.p.Caller.Session, c.p.Caller.Owner) // the row proves it
	}
	if marked {
		a.private.Store(c.p.Caller.Session, struct{}{})
	}
	c.out.RunID = c.runID
	a.watch(c, now)
	return nil
}

// unknownTool is the owner's (or a paired client's) answer to a tool name
// the registry lacks: every tool, which are theirs.
func (a *Arbiter) unknownTool(name string) string {
	var names []string
	for _, s := range a.o.Registry.Specs() {
		names = append(names, s.Name)
	}
	return fmt.Sprintf("unknown tool %q; available tools: %s", shownName(name), strings.Join(names, ", "))
}

// guestMay reports whether a guest may use the tool of spec.
func (a *Arbiter) guestMay(spec tool.Spec) bool {
	return policy.GuestTool(spec.Name, spec.ReadOnly, spec.Risk, a.o.GuestTools)
}

// notForGuest is a guest's answer to a call of a tool it may not use,
// whether the tool exists or not: it names the guest's tools only.
func (a *Arbiter) notForGuest(name string) string {
	var names []string
	for _, s := range a.o.Registry.Specs() {
		if a.guestMay(s) {
			names = append(names, s.Name)
		}
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return fmt.Sprintf("tool %q is not available to a guest; a guest may use: %s", shownName(name), list)
}

// shownName is a tool name the model wrote, as a refusal quotes it.
func shownName(name string) string {
	if !utf8.ValidString(name) || len(name) > 64 {
		return "(invalid name)"
	}
	return name
}

// capText truncates s to at most n bytes on a rune boundary, with a marker.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := tool.RuneCut(s, n)
	return s[:cut] + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", cut, len(s))
}
