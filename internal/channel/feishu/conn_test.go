package feishu

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
	"github.com/homard/homard/internal/channel/feishu/frame"
)

// sink records deliveries; it fails the first fail calls, and when gate
// is set each call waits for it.
type sink struct {
	mu    sync.Mutex
	got   []chat.Inbound
	calls int
	fail  int
	gate  chan struct{}
	seen  chan chat.Inbound // every call, failed or not
	// during runs inside Receive (a slow save).
	during func()
}

func newSink() *sink { return &sink{seen: make(chan chat.Inbound, 100)} }

func (s *sink) Receive(ctx context.Context, in chat.Inbound) error {
	s.seen <- in
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.during != nil {
		s.during()
	}
	s.calls++
	if s.fail > 0 {
		s.fail--
		return errors.New("disk full")
	}
	s.got = append(s.got, in)
	return nil
}

func (s *sink) saved() []chat.Inbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]chat.Inbound(nil), s.got...)
}

func (s *sink) next(t *testing.T, ctx context.Context) chat.Inbound {
	t.Helper()
	select {
	case in := <-s.seen:
		return in
	case <-ctx.Done():
		t.Fatal("no delivery reached the sink")
		return chat.Inbound{}
	}
}

// running starts Run against a fake and waits for the connection.
func running(t *testing.T, opt func(*feishutest.Server, *Options)) (context.Context, *feishutest.Server, *Adapter, *sink) {
	t.Helper()
	srv := feishutest.New()
	o := Options{AppID: srv.AppID, AppSecret: srv.AppSecret, APIBase: srv.URL(), Backoff: 5 * time.Millisecond}
	if opt != nil {
		opt(srv, &o)
	}
	a := New(o)
	sk := newSink()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, sk) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run returned %v; want the context's error", err)
		}
		srv.Close()
	})
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatalf("the adapter never connected: %v", err)
	}
	return ctx, srv, a, sk
}

// settle proves the adapter handled every frame sent before: it answers
// frames in order, so once the pong to a ping is back, earlier acks are too.
func settle(t *testing.T, ctx context.Context, srv *feishutest.Server) {
	t.Helper()
	before := len(srv.Frames())
	if err := srv.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitFrame(ctx, before, func(f frame.Frame) bool {
		return f.Get(frame.HeaderType) == frame.TypePong
	}); err != nil {
		t.Fatalf("no pong: %v", err)
	}
}

func dm(eventID, text string) []byte {
	return feishutest.Message{EventID: eventID, MessageID: "om_" + eventID, ChatID: "oc_dm", ChatType: "p2p", Sender: "ou_owner", Text: text}.Event()
}

func TestRunAcksOnlyAfterReceive(t *testing.T) {
	ctx, srv, _, sk := running(t, nil)
	sk.gate = make(chan struct{})
	id, err := srv.Push(ctx, dm("ev1", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	in := sk.next(t, ctx) // Receive is running, held at the gate
	if srv.Acked(id) {
		t.Fatal("the frame was acknowledged before Receive returned")
	}
	close(sk.gate)
	ack, f, err := srv.WaitAck(ctx, id)
	if err != nil || ack.Code != 200 {
		t.Fatalf("ack = %+v, %v; want code 200", ack, err)
	}
	if f.Get(frame.HeaderBizRt) == "" || f.Get(frame.HeaderTraceID) != "trace-"+id || f.Service != 7 {
		t.Errorf("ack frame headers %+v service %d; want biz_rt, the trace id and service 7 kept", f.Headers, f.Service)
	}
	if in.DeliveryID != "ev1" || in.Text != "hello" || in.Bot != srv.BotOpenID {
		t.Errorf("delivered %+v; want event ev1 \"hello\" for bot %s", in, srv.BotOpenID)
	}
}

func TestRunFailedReceiveIsNotAcked(t *testing.T) {
	ctx, srv, _, sk := running(t, nil)
	sk.fail = 1
	id, err := srv.Push(ctx, dm("ev1", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	sk.next(t, ctx)
	settle(t, ctx, srv)
	if srv.Acked(id) || srv.Unacked() != 1 {
		t.Fatalf("after a failed Receive: acked %v, unacked %d; want no ack", srv.Acked(id), srv.Unacked())
	}
	// Twin: Feishu redelivers, Receive succeeds, the ack goes out.
	if n, err := srv.Redeliver(ctx); n != 1 || err != nil {
		t.Fatalf("Redeliver = %d, %v", n, err)
	}
	sk.next(t, ctx)
	settle(t, ctx, srv)
	if srv.Unacked() != 0 {
		t.Errorf("the redelivery was not acknowledged")
	}
	if got := sk.saved(); len(got) != 1 || got[0].DeliveryID != "ev1" {
		t.Errorf("saved %+v; want ev1 once", got)
	}
}

func TestRunDuplicateEventReceivedOnceAndAcked(t *testing.T) {
	ctx, srv, _, sk := running(t, nil)
	first, _ := srv.Push(ctx, dm("ev1", "hello"))
	second, _ := srv.Push(ctx, dm("ev1", "hello")) // Feishu's retry: same event_id
	for _, id := range []string{first, second} {
		if ack, _, err := srv.WaitAck(ctx, id); err != nil || ack.Code != 200 {
			t.Fatalf("ack of %s = %+v, %v", id, ack, err)
		}
	}
	if n := len(sk.saved()); n != 1 {
		t.Errorf("Receive saved %d deliveries; want 1 (the event id is remembered)", n)
	}
}

func TestRunReassemblesSplitPayloads(t *testing.T) {
	ctx, srv, _, sk := running(t, nil)
	text := strings.Repeat("长文本 long text ", 300)
	id, err := srv.PushSplit(ctx, dm("ev1", text), 3)
	if err != nil {
		t.Fatal(err)
	}
	if ack, _, err := srv.WaitAck(ctx, id); err != nil || ack.Code != 200 {
		t.Fatalf("ack = %+v, %v", ack, err)
	}
	got := sk.saved()
	if len(got) != 1 || got[0].Text != text {
		t.Fatalf("saved %d deliveries (text %d bytes); want one with the whole %d-byte text", len(got), len(got[0].Text), len(text))
	}
}

func TestRunPressAckCarriesNotice(t *testing.T) {
	ctx, srv, a, sk := running(t, func(_ *feishutest.Server, o *Options) { o.AckWait = 20 * time.Second })
	srv.SetChatMode("oc_dm", "p2p")
	id, err := srv.Push(ctx, feishutest.CardPress("ev1", "tok-1", "ou_owner", "oc_dm", "om_card", "a:1:abc"))
	if err != nil {
		t.Fatal(err)
	}
	in := sk.next(t, ctx)
	if in.Kind != chat.KindPress || in.Press == nil || in.Press.ID != "tok-1" {
		t.Fatalf("delivered %+v; want a press with token tok-1", in)
	}
	settle(t, ctx, srv)
	if srv.Acked(id) {
		t.Fatal("the press was acknowledged before AckPress (its answer is the ack)")
	}
	if err := a.AckPress(ctx, *in.Press, "Approved once."); err != nil {
		t.Fatal(err)
	}
	ack, _, err := srv.WaitAck(ctx, id)
	if err != nil || ack.Code != 200 || ack.Toast() != "Approved once." {
		t.Errorf("ack = %+v (toast %q), %v; want code 200 and the notice as toast", ack, ack.Toast(), err)
	}
	// A late AckPress is harmless.
	if err := a.AckPress(ctx, *in.Press, "again"); err != nil {
		t.Errorf("second AckPress: %v", err)
	}
}

func TestRunPressAckedWithoutNoticeWhenAppIsSilent(t *testing.T) {
	ctx, srv, _, sk := running(t, func(_ *feishutest.Server, o *Options) { o.AckWait = 10 * time.Millisecond })
	srv.SetChatMode("oc_dm", "p2p")
	id, _ := srv.Push(ctx, feishutest.CardPress("ev1", "tok-1", "ou_owner", "oc_dm", "om_card", "d"))
	sk.next(t, ctx)
	ack, _, err := srv.WaitAck(ctx, id)
	if err != nil || ack.Code != 200 || ack.Toast() != "" {
		t.Errorf("ack = %+v, %v; want code 200 without a toast", ack, err)
	}
}

func TestRunReconnects(t *testing.T) {
	var mu sync.Mutex
	var reports []error
	ctx, srv, _, sk := running(t, func(_ *feishutest.Server, o *Options) {
		o.Report = func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }
	})
	srv.Drop()
	if err := srv.WaitConnected(ctx, 2); err != nil {
		t.Fatalf("no second connection: %v", err)
	}
	mu.Lock()
	if len(reports) == 0 || !errors.Is(reports[0], errDropped) {
		t.Errorf("reports = %v; want the dropped connection reported", reports)
	}
	mu.Unlock()
	id, err := srv.Push(ctx, dm("ev2", "after"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.WaitAck(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := sk.saved(); len(got) != 1 || got[0].Text != "after" {
		t.Errorf("saved %+v; want the message sent after reconnecting", got)
	}
}

func TestRunStopsOnRefusedCredentials(t *testing.T) {
	srv := feishutest.New()
	defer srv.Close()
	a := New(Options{AppID: srv.AppID, AppSecret: "wrong", APIBase: srv.URL(), Backoff: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Run(ctx, newSink()); !errors.Is(err, chat.ErrUnauthorized) {
		t.Errorf("Run with a wrong secret = %v; want chat.ErrUnauthorized", err)
	}
}

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestRunSlowReceiveIsNotAcked(t *testing.T) {
	clk := &clock{t: time.Unix(1764600000, 0)}
	ctx, srv, _, sk := running(t, func(_ *feishutest.Server, o *Options) { o.Now = clk.Now })
	sk.during = func() { clk.Add(ackWindow + time.Second) } // the save took 4 s
	id, err := srv.Push(ctx, dm("ev1", "slow"))
	if err != nil {
		t.Fatal(err)
	}
	sk.next(t, ctx)
	settle(t, ctx, srv)
	if srv.Acked(id) {
		t.Fatal("an event saved after Feishu's 3 s window was acknowledged; Feishu has already given up on that ack")
	}
	// Twin: Feishu redelivers; the event id is remembered, so the
	// redelivery is acknowledged at once without saving it twice.
	sk.mu.Lock()
	sk.during = nil
	sk.mu.Unlock()
	if n, err := srv.Redeliver(ctx); n != 1 || err != nil {
		t.Fatalf("Redeliver = %d, %v", n, err)
	}
	settle(t, ctx, srv)
	if srv.Unacked() != 0 || len(sk.saved()) != 1 {
		t.Errorf("after redelivery: unacked %d, saved %d; want 0 and 1", srv.Unacked(), len(sk.saved()))
	}
}

func TestRunPingsAtTheServersInterval(t *testing.T) {
	ctx, srv, _, _ := running(t, func(srv *feishutest.Server, _ *Options) { srv.PingInterval = 1 })
	f, err := srv.WaitFrame(ctx, 0, func(f frame.Frame) bool {
		return f.Method == frame.MethodControl && f.Get(frame.HeaderType) == frame.TypePing
	})
	if err != nil {
		t.Fatalf("no ping from the client: %v", err)
	}
	if f.Service != 7 {
		t.Errorf("ping service = %d; want 7, the service_id of the connection URL", f.Service)
	}
}
