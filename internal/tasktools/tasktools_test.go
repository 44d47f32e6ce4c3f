package tasktools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// fakeTasks drafts a body that names every field it was given, and
// records what was added.
type fakeTasks struct {
	added []string
}

func (f *fakeTasks) Draft(_ context.Context, s Spec) (Draft, error) {
	b, _ := json.Marshal(s)
	return Draft{Canonical: b, Hash: strings.Repeat("ab", 32), Lines: []string{"name " + s.Name}}, nil
}

func (f *fakeTasks) AddApproved(_ context.Context, c []byte, approval string) (string, string, error) {
	f.added = append(f.added, string(c))
	return "task_0123456789abcdef", "tomorrow", nil
}

func (f *fakeTasks) Platforms() []string { return []string{"telegram", "discord"} }

func call(t *testing.T, tl tool.Tool, c tool.Caller, args string) (tool.Plan, error) {
	t.Helper()
	params, err := tl.Decode([]byte(args))
	if err != nil {
		t.Fatalf("%s: decode %s: %v", tl.Spec().Name, args, err)
	}
	return tl.Prepare(tool.WithCaller(context.Background(), c), params)
}

// TestProposalIsTheSameBodyEachTime: the same call prepared twice gives
// the same plan hash (the arbiter prepares it again once the owner
// approved it), delivered by default to the chat the conversation is in;
// another session or other words give another body. Run adds exactly
// the approved bytes.
func TestProposalIsTheSameBodyEachTime(t *testing.T) {
	f := &fakeTasks{}
	tools := New(func() Tasks { return f })
	owner := tool.Caller{Owner: "ann", Session: "telegram-42", Trust: policy.TrustOwner}
	args := `{"at":"2026-12-24T18:00","tz":"Europe/Paris","remind":"Call mum."}`
	p1, err := call(t, tools[0], owner, args)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := call(t, tools[0], owner, args)
	if p1.Hash() != p2.Hash() {
		t.Fatalf("the same call prepared twice: %s, %s; want one hash", p1.Hash(), p2.Hash())
	}
	if p1.Risk() != policy.RiskCritical || !strings.Contains(p1.Preview(), `"Deliver":"telegram"`) || !strings.Contains(p1.Preview(), `"Name":"remind-call-mum"`) {
		t.Errorf("plan risk %v, preview %s; want critical, delivered to telegram, named remind-call-mum", p1.Risk(), p1.Preview())
	}
	other := owner
	other.Session = "web-1"
	p3, _ := call(t, tools[0], other, args)
	p4, _ := call(t, tools[0], owner, strings.Replace(args, "mum", "dad", 1))
	if p3.Hash() == p1.Hash() || p4.Hash() == p1.Hash() || !strings.Contains(p3.Preview(), `"Deliver":"web"`) {
		t.Errorf("another session or text gave the same body (or web's delivery is not web): %s", p3.Preview())
	}
	res, err := tools[0].Run(tool.WithCaller(context.Background(), owner), p1)
	if err != nil || res.IsError || len(f.added) != 1 || !strings.Contains(f.added[0], `"Text":"Call mum."`) {
		t.Errorf("Run = %+v, %v, added %q; want the approved body added", res, err, f.added)
	}
}

// TestProposalOwnerOnly: a guest, or a call with no caller, is refused
// with limit.task-owner before anything is drafted; the twin, the owner,
// gets a plan (TestProposalIsTheSameBodyEachTime).
func TestProposalOwnerOnly(t *testing.T) {
	f := &fakeTasks{}
	for _, c := range []tool.Caller{{Owner: "guest", Session: "g", Trust: policy.TrustGuest}, {}} {
		for _, tl := range New(func() Tasks { return f }) {
			for _, args := range []string{`{"every":"1d","remind":"x"}`, `{"every":"1d","name":"n","prompt":"p"}`} {
				_, err := call(t, tl, c, args)
				var ref *tool.Refusal
				if !errors.As(err, &ref) || ref.Rule != policy.RuleLimitTaskOwner {
					t.Errorf("%s as %q: %v; want limit.task-owner", args, c.Trust, err)
				}
			}
		}
	}
}

func TestReminderName(t *testing.T) {
	for text, want := range map[string]string{
		"Call mum.":                          "remind-call-mum",
		"Pay the électricité bill on Monday": "remind-pay-the-lectricit-bill",
		"!!!":                                "remind",
	} {
		if got := reminderName(text); got != want {
			t.Errorf("reminderName(%q) = %q; want %q", text, got, want)
		}
	}
}

// TestProposalArguments: a reminder or a task, never both or neither; a
// task has a name; a reminder takes no tools.
func TestProposalArguments(t *testing.T) {
	tl := New(func() Tasks { return &fakeTasks{} })[0]
	owner := tool.Caller{Owner: "ann", Session: "web-1", Trust: policy.TrustOwner}
	for args, ok := range map[string]bool{
		`{"every":"1d","remind":"x"}`:                       true,
		`{"every":"1d","name":"n","prompt":"p"}`:            true,
		`{"every":"1d","remind":"x","prompt":"p"}`:          false,
		`{"every":"1d"}`:                                    false,
		`{"every":"1d","prompt":"p"}`:                       false,
		`{"every":"1d","remind":"x","tools":["read_file"]}`: false,
	} {
		_, err := call(t, tl, owner, args)
		if (err == nil) != ok {
			t.Errorf("%s: %v; want ok %v", args, err, ok)
		}
	}
}
