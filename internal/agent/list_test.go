package agent_test

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// holdingModel keeps the request's message list itself — as llm.Model
// allows while the stream is open — and, before it answers, waits for
// release and reports whether the list still holds what it was sent.
type holdingModel struct {
	started chan struct{}
	release chan struct{}
	changed chan bool
}

func (m *holdingModel) Stream(_ context.Context, req llm.Request) (llm.Stream, error) {
	return &holdingStream{m: m, kept: req.Messages, sent: slices.Clone(req.Messages)}, nil
}

type holdingStream struct {
	m          *holdingModel
	kept, sent []llm.Message
	n          int
}

func (s *holdingStream) Next() (llm.Event, error) {
	s.n++
	switch s.n {
	case 1:
		close(s.m.started)
		<-s.m.release
		s.m.changed <- !reflect.DeepEqual(s.kept, s.sent)
		return llmtest.Text("done"), nil
	case 2:
		return llmtest.Done(llm.StopEnd), nil
	}
	return llm.Event{}, io.EOF
}

func (s *holdingStream) Close() error { return nil }

// TestRequestListNotReusedWhileStreaming: a request's message list is
// reused for later requests (issue 22) only once its stream is closed.
// While one turn's stream is open, other turns of other sessions run and
// give their lists back: the open request's list must still hold what was
// sent. Twin: those turns' own requests are right.
func TestRequestListNotReusedWhileStreaming(t *testing.T) {
	caller := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}
	history := func(tag string, n int) []llm.Message {
		var h []llm.Message
		for i := range n {
			h = append(h, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("%s question %d", tag, i)},
				llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("%s answer %d", tag, i)})
		}
		return h
	}
	m := &holdingModel{started: make(chan struct{}), release: make(chan struct{}), changed: make(chan bool, 1)}
	held := agent.New(agent.Options{Model: m, ModelName: "m", Decider: fixedDecider{}, Caller: caller})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := held.Continue(context.Background(), agent.Conversation{History: history("held", 40)}, "hold on", func(agent.Event) {}); err != nil {
			t.Errorf("held turn: %v", err)
		}
	}()
	<-m.started
	for i := range 50 {
		other := llmtest.NewFunc(func(int, llm.Request) []llm.Event {
			return []llm.Event{llmtest.Text("ok"), llmtest.Done(llm.StopEnd)}
		})
		a := agent.New(agent.Options{Model: other, ModelName: "m", Decider: fixedDecider{}, Caller: caller})
		user := fmt.Sprintf("other %d", i)
		if _, err := a.Continue(context.Background(), agent.Conversation{History: history("other", 40)}, user, func(agent.Event) {}); err != nil {
			t.Fatal(err)
		}
		reqs := other.Requests()
		if len(reqs) != 1 || len(reqs[0].Messages) != 81 || reqs[0].Messages[80].Content != user {
			t.Fatalf("turn %d: its own request is wrong: %d requests", i, len(reqs))
		}
	}
	close(m.release)
	if <-m.changed {
		t.Error("the open request's message list was written over by another turn's request")
	}
	wg.Wait()
}
