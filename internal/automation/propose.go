package automation

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
	"github.com/homard/homard/internal/tasktools"
)

// Tasks proposed in a conversation (issue 26): the model's propose_task
// or propose_reminder call is prepared into the exact body Draft builds,
// which is the call's plan; the owner's approval of that plan (a card,
// asked in every mode) is the approval of the body, and AddApproved
// stores and seals those bytes and no others.

// Draft is a task body built from a spec, not stored: its canonical
// bytes, hash and what a person reads about it.
type Draft struct {
	Canonical []byte
	Hash      string
	Info      TaskInfo
}

// Draft builds the body spec would be added with, checked as Add checks
// it (schedule, tools, mode, ceiling, this homard's rules), without
// storing anything. A split spec is refused: planning is a model call of
// its own, for the CLI. A draft is what AddApproved stores, so its Info
// is a task from a conversation (origin chat), whatever spec.Origin says.
func (s *Service) Draft(ctx context.Context, spec TaskSpec) (Draft, error) {
	if spec.Split {
		return Draft{}, fmt.Errorf("%w: a split task is added with homard task add --split", ErrInvalid)
	}
	if !validTaskName(spec.Name) {
		return Draft{}, fmt.Errorf("%w: task name %q: use 1 to 64 letters, digits, '-', '_' or '.'", ErrInvalid, spec.Name)
	}
	now, id := s.now(), task.NewID()
	if !spec.Since.IsZero() {
		now = spec.Since
	}
	if spec.ID != "" {
		if !task.ValidID(spec.ID) {
			return Draft{}, fmt.Errorf("%w: task id %q", ErrInvalid, spec.ID)
		}
		id = spec.ID
	}
	row, b, err := s.pendingTask(spec, id, now, nil, store.TaskFromChat)
	if err != nil {
		return Draft{}, err
	}
	in, err := s.describeTask(row, b, nil)
	if err != nil {
		return Draft{}, err
	}
	return Draft{Canonical: row.Body, Hash: in.Hash, Info: in}, nil
}

// AddApproved stores the body canonical — a Draft's bytes, carried in a
// plan the owner approved (approval names it) — and seals it: the task
// is active at once. Its origin is chat: both callers are the owner's
// conversations (propose_task's card, a reminder's Snooze button). The bytes are decoded strictly and checked again
// (its owner must be this homard's, the rules may have changed since
// the draft); a body whose time has passed, or whose approval would have
// ended, is refused and nothing is stored.
func (s *Service) AddApproved(ctx context.Context, canonical []byte, approval string) (TaskInfo, error) {
	b, err := task.Decode(canonical)
	if err != nil {
		return TaskInfo{}, err
	}
	if err := b.Validate(); err != nil {
		return TaskInfo{}, err
	}
	if b.Owner != s.o.Config.Owner {
		return TaskInfo{}, fmt.Errorf("%w: the task belongs to %q, not this homard's owner", ErrInvalid, b.Owner)
	}
	c, err := b.Canonical()
	if err != nil {
		return TaskInfo{}, err
	}
	if string(c) != string(canonical) {
		return TaskInfo{}, fmt.Errorf("%w: the body is not in its canonical form", ErrInvalid)
	}
	if err := s.checkTaskRules(b); err != nil {
		return TaskInfo{}, err
	}
	now := s.now()
	if !now.Before(b.Expires) {
		return TaskInfo{}, fmt.Errorf("%w: the approval of this task would already have ended; ask for it again", ErrTaskState)
	}
	if next, err := nextSlot(b, now); err != nil || next.IsZero() {
		return TaskInfo{}, fmt.Errorf("%w: its time has passed (the card was approved too late): nothing was stored; ask for it again", ErrTaskState)
	}
	row := store.Task{ID: b.ID, Owner: b.Owner, Name: b.Name, Body: c, Status: store.TaskPending, CreatedAt: now, Origin: store.TaskFromChat}
	err = s.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.InsertTask(row); err != nil {
			return err
		}
		return s.auditTask(tx, b.Owner, b.ID, policy.RuleTaskAdded, "proposed in a conversation", "")
	})
	if err != nil {
		return TaskInfo{}, err
	}
	hash, err := task.Hash(b)
	if err != nil {
		return TaskInfo{}, err
	}
	return s.seal(ctx, row, b, now, policy.RuleTaskApproved, "approved body "+hash[:12]+" in a conversation (approval "+approval+")")
}

// Proposals is the service as propose_reminder and propose_task use it.
func (s *Service) Proposals() tasktools.Tasks { return proposals{s} }

type proposals struct{ s *Service }

func (p proposals) Draft(ctx context.Context, sp tasktools.Spec) (tasktools.Draft, error) {
	d, err := p.s.Draft(ctx, TaskSpec{Name: sp.Name, Prompt: sp.Text, At: sp.At, Every: sp.Every, Cron: sp.Cron, TZ: sp.TZ,
		Tools: sp.Tools, Deliver: sp.Deliver, Reminder: sp.Reminder, ID: sp.ID, Since: sp.Since})
	if err != nil {
		return tasktools.Draft{}, err
	}
	b := d.Info.Body
	lines := []string{"name      " + b.Name, "schedule  " + d.Info.Schedule, "deliver   " + b.Deliver,
		"expires   " + b.Expires.Local().Format(time.DateTime)}
	if !b.Reminder {
		lines = append(lines, fmt.Sprintf("tools     %v", b.Tools), "ceiling   "+b.Ceiling.String(), "mode      "+string(b.Mode))
	}
	return tasktools.Draft{Canonical: d.Canonical, Hash: d.Hash, Lines: lines}, nil
}

func (p proposals) AddApproved(ctx context.Context, canonical []byte, approval string) (string, string, error) {
	in, err := p.s.AddApproved(ctx, canonical, approval)
	if err != nil {
		return "", "", err
	}
	return in.ID, in.NextRunAt.Local().Format(time.DateTime + " MST"), nil
}

// Platforms are the enabled chat channels a result may be delivered to.
func (p proposals) Platforms() []string {
	var out []string
	for name, ch := range p.s.o.Config.Channels.ByName() {
		if ch.Enabled {
			out = append(out, name)
		}
	}
	return out
}

// ReminderText is the sealed text of the owner's reminder id.
func (s *Service) ReminderText(ctx context.Context, id string) (string, error) {
	_, b, err := s.reminder(ctx, id)
	return b.Prompt, err
}

// Snooze adds a reminder of the same text at now+d, delivered to deliver,
// sealed at once: the owner asked for it by pressing Snooze in their own
// chat under that reminder's delivery (chats checks the presser). It
// returns when it is due.
func (s *Service) Snooze(ctx context.Context, id string, d time.Duration, deliver string) (time.Time, error) {
	_, b, err := s.reminder(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	at := s.now().Add(d).UTC().Truncate(time.Minute).Add(time.Minute)
	name := b.Name
	if len(name) > 56 {
		name = name[:56]
	}
	dr, err := s.Draft(ctx, TaskSpec{Name: name + "-snoozed", Prompt: b.Prompt, At: at.Format(time.RFC3339), Deliver: deliver, Reminder: true})
	if err != nil {
		return time.Time{}, err
	}
	if _, err := s.AddApproved(ctx, dr.Canonical, "snooze of "+id); err != nil {
		return time.Time{}, err
	}
	return at, nil
}

// reminder reads the owner's task id, which must be a reminder.
func (s *Service) reminder(ctx context.Context, id string) (store.Task, task.Body, error) {
	t, err := s.taskOf(ctx, id)
	if err != nil {
		return store.Task{}, task.Body{}, err
	}
	b, err := task.Decode(t.Body)
	if err != nil {
		return store.Task{}, task.Body{}, err
	}
	if !b.Reminder {
		return store.Task{}, task.Body{}, fmt.Errorf("%w: task %s is not a reminder", ErrInvalid, id)
	}
	return t, b, nil
}
