package arbiter

import (
	"container/list"
	"sync"
	"time"

	"github.com/homard/homard/internal/monitor"
	"github.com/homard/homard/internal/policy"
)

// maxMonitored bounds the sessions whose trajectory the arbiter keeps; the
// one used least recently is dropped first. A dropped trajectory (like
// all of them after a restart) starts empty: a monitor only ever adds
// asks, so forgetting can cost an ask, never let a call through.
const maxMonitored = 256

// monitors holds the sessions' trajectories (internal/monitor) in memory.
type monitors struct {
	limits monitor.Limits
	// mu guards order, by and every Trajectory in them (a Trajectory is
	// not safe for concurrent use; each operation on one is short).
	mu    sync.Mutex
	order *list.List               // of *monitored, most recently used first
	by    map[string]*list.Element // session id → its element in order
}

type monitored struct {
	session string
	t       *monitor.Trajectory
}

// trajectory returns session's trajectory, creating it (and dropping the
// least recently used one past maxMonitored). The caller holds m.mu.
func (m *monitors) trajectory(session string) *monitor.Trajectory {
	if m.by == nil {
		m.order, m.by = list.New(), map[string]*list.Element{}
	}
	if e, ok := m.by[session]; ok {
		m.order.MoveToFront(e)
		return e.Value.(*monitored).t
	}
	if m.order.Len() >= maxMonitored {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.by, last.Value.(*monitored).session)
	}
	t := monitor.New(m.limits)
	m.by[session] = m.order.PushFront(&monitored{session: session, t: t})
	return t
}

// check is stage 5b: whether a monitor rule trips on this Plan.
func (a *Arbiter) check(c *call) (monitor.Trip, bool) {
	m := &a.monitors
	if m.limits.Off() {
		return monitor.Trip{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.trajectory(c.p.Caller.Session).Check(monitor.Proposal{At: a.o.Now(), Action: c.plan.Action()})
}

// watch records a decided call in its session's trajectory; a call that
// ran on the owner's approval of a monitor's card restarts that rule's
// count. A call refused before it was proposed (the agent's budgets) is
// not the model's doing and is not recorded, nor is one without a
// session.
func (a *Arbiter) watch(c *call, now time.Time) {
	m := &a.monitors
	if m.limits.Off() || c.p.Refuse != nil || c.p.Caller.Session == "" {
		return
	}
	mc := monitor.Call{
		At: now, Tool: shownName(c.p.Tool), Rule: c.out.Rule, Label: shownName(c.p.Tool),
		// Too many cards waiting is the owner's queue, not the model
		// probing a limit.
		Denied:  c.out.Decision == Denied && c.out.Rule != policy.RuleApprovalTooManyPending,
		Ran:     c.ran,
		Private: c.ran && c.taint,
	}
	if !c.plan.IsZero() {
		mc.Action, mc.Targets = c.plan.Action(), c.plan.Targets()
		mc.Label = a.o.Redactor.Redact(c.plan.Display())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.trajectory(c.p.Caller.Session)
	t.Record(mc)
	if c.monitorApproved && c.ran {
		t.Approved(c.trip.Rule)
	}
}

// watchPrivate tells session's trajectory that private data reached it
// without a tool (recalled memory).
func (a *Arbiter) watchPrivate(session, what string) {
	m := &a.monitors
	if m.limits.Off() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trajectory(session).MarkPrivate(what)
}
