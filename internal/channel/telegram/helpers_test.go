package telegram

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// waitLimit only ends a test that would otherwise hang; no assertion
// depends on it.
const waitLimit = 20 * time.Second

// sink hands every delivery to got and answers with answer (nil: saved).
type sink struct {
	got    chan chat.Inbound
	answer func(n int, in chat.Inbound) error

	mu sync.Mutex // guards n
	n  int
}

func newSink(answer func(n int, in chat.Inbound) error) *sink {
	return &sink{got: make(chan chat.Inbound, 100), answer: answer}
}

func (s *sink) Receive(ctx context.Context, in chat.Inbound) error {
	s.mu.Lock()
	n := s.n
	s.n++
	s.mu.Unlock()
	var err error
	if s.answer != nil {
		err = s.answer(n, in)
	}
	s.got <- in
	return err
}

func (s *sink) next(t *testing.T) chat.Inbound {
	t.Helper()
	select {
	case in := <-s.got:
		return in
	case <-time.After(waitLimit):
		t.Fatal("no delivery reached the sink")
		return chat.Inbound{}
	}
}

// testBot is a Bot on fake with short backoffs, logging into logs.
func testBot(fake *telegramtest.Server, logs *bytes.Buffer) *Bot {
	o := Options{Token: fake.Token(), APIBase: fake.URL, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: logs}, nil))
	}
	return New(o)
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// run starts b.Run. stop cancels it and returns Run's error; done
// receives that error when Run returns by itself. The test's cleanup
// stops it too.
func run(t *testing.T, b *Bot, s chat.Sink) (stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	result := make(chan error, 1)
	var err error
	go func() {
		err = b.Run(ctx, s)
		close(finished)
		result <- err
	}()
	stop = func() error {
		cancel()
		select {
		case <-finished:
			return err
		case <-time.After(waitLimit):
			return errors.New("Run did not return after its context ended")
		}
	}
	t.Cleanup(func() { stop() })
	return stop, result
}

func newFake(t *testing.T) *telegramtest.Server {
	t.Helper()
	f := telegramtest.New(telegramtest.Options{})
	t.Cleanup(f.Close)
	return f
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}
