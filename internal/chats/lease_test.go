package chats

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// leaseTable is a database's lock table seen by several replicas.
type leaseTable struct {
	mu    sync.Mutex
	owner map[string]int
}

func (l *leaseTable) view(me int) func(string) (func(), bool, error) {
	return func(name string) (func(), bool, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if o, held := l.owner[name]; held && o != me {
			return nil, false, nil
		}
		l.owner[name] = me
		return func() { l.mu.Lock(); delete(l.owner, name); l.mu.Unlock() }, true, nil
	}
}

// startReplica runs a Runner over a as replica number replica of one
// database whose lock table is table, until the returned stop is called
// or the test ends.
func startReplica(t *testing.T, rg *chatRig, table *leaseTable, replica int, a chat.Adapter) (stop func()) {
	r := rg.s.NewRunner(Options{Adapters: []chat.Adapter{a}, Poll: 10 * time.Millisecond, ApprovalWait: time.Minute,
		Backoff: func(int) time.Duration { return 5 * time.Millisecond }, TypingEvery: time.Hour,
		Lease: table.view(replica), LeaseEvery: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// pollingAdapter is the fake adapter that records which replicas poll.
type pollingAdapter struct {
	*fakeAdapter
	replica          int
	polling, maxPoll *atomic.Int32
	last             *atomic.Int32 // the replica that last started polling
}

func (p pollingAdapter) Run(ctx context.Context, _ chat.Sink) error {
	n := p.polling.Add(1)
	defer p.polling.Add(-1)
	for {
		m := p.maxPoll.Load()
		if n <= m || p.maxPoll.CompareAndSwap(m, n) {
			break
		}
	}
	p.last.Store(int32(p.replica))
	<-ctx.Done()
	return nil
}

// TestOnePollerPerPlatform: two replicas run the chat channels on one
// database; one polls the platform, the other waits on standby, and takes
// over when the first stops. Its twin, on one machine:
// a runner whose lease is always granted polls at once (every other test
// of this package).
func TestOnePollerPerPlatform(t *testing.T) {
	rg := newChatRig(t)
	rg.stop()
	table := &leaseTable{owner: map[string]int{}}
	var polling, maxPoll, last atomic.Int32
	start := func(replica int) func() {
		return startReplica(t, rg, table, replica, pollingAdapter{&fakeAdapter{}, replica, &polling, &maxPoll, &last})
	}
	stop1 := start(1)
	waitFor(t, "replica 1 polling", func() bool { return last.Load() == 1 })
	stop2 := start(2)
	defer stop2()
	time.Sleep(100 * time.Millisecond) // replica 2 asks for the lease several times
	if m := maxPoll.Load(); m != 1 {
		t.Fatalf("%d replicas polled at once; want 1", m)
	}
	if st, err := rg.st.ChannelStates(context.Background()); err != nil || st[chat.Telegram].State != "running" {
		t.Errorf("channel state %+v, %v; want running (the standby replica leaves the poller's row)", st[chat.Telegram], err)
	}
	stop1()
	waitFor(t, "replica 2 taking over", func() bool { return last.Load() == 2 && polling.Load() == 1 })
	if m := maxPoll.Load(); m != 1 {
		t.Errorf("%d replicas polled at once during the takeover; want 1", m)
	}
}

// pushedAdapter is a pollingAdapter whose platform pushes deliveries
// (chat.Pushed), as Feishu's callbacks do.
type pushedAdapter struct{ pollingAdapter }

func (pushedAdapter) Pushed() bool { return true }

// TestPushedPlatformReceivedOnEveryReplica: a platform that pushes its
// deliveries over HTTP (Feishu's callback mode behind a load balancer,
// which may send any callback to any replica) is received on both
// replicas at once — a standby that refused them would answer 503 and
// lose the callback to the platform's retries — while its lease, and so
// the sending of replies, stays with one replica and passes to the other
// when it stops. The twin is TestOnePollerPerPlatform: a polled
// platform is received on one replica only.
func TestPushedPlatformReceivedOnEveryReplica(t *testing.T) {
	rg := newChatRig(t)
	rg.stop()
	table := &leaseTable{owner: map[string]int{}}
	var receiving, maxReceiving, last atomic.Int32
	start := func(replica int) func() {
		return startReplica(t, rg, table, replica, pushedAdapter{pollingAdapter{&fakeAdapter{}, replica, &receiving, &maxReceiving, &last}})
	}
	holder := func() int {
		table.mu.Lock()
		defer table.mu.Unlock()
		return table.owner["channel:"+chat.Telegram]
	}
	stop1 := start(1)
	waitFor(t, "replica 1 receiving and holding the lease", func() bool { return receiving.Load() == 1 && holder() == 1 })
	start(2)
	waitFor(t, "both replicas receiving", func() bool { return receiving.Load() == 2 })
	time.Sleep(50 * time.Millisecond) // replica 2 asks for the lease several times
	if h := holder(); h != 1 {
		t.Fatalf("the lease is held by replica %d; want replica 1 still (one sender)", h)
	}
	stop1()
	waitFor(t, "replica 2 taking the lease", func() bool { return holder() == 2 && receiving.Load() == 1 })
}

// TestRepliesSentOnceAcrossReplicas (issue 27): two replicas run one
// platform's channel on one database; every queued reply is sent exactly
// once, by the replica holding the lease, and after it stops the other
// takes over the sending — still once each, none lost.
func TestRepliesSentOnceAcrossReplicas(t *testing.T) {
	rg := newChatRig(t)
	rg.stop()
	table := &leaseTable{owner: map[string]int{}}
	fakes := []*fakeAdapter{{}, {}}
	start := func(replica int) func() { return startReplica(t, rg, table, replica, fakes[replica-1]) }
	queue := func(from, n int) {
		err := rg.st.Write(t.Context(), func(tx *store.Tx) error {
			for i := from; i < from+n; i++ {
				if _, err := tx.InsertOutbox(store.OutboxRow{Platform: chat.Telegram, ChatID: "100", Text: fmt.Sprint("reply ", i), CreatedAt: time.Now()}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sent := func() map[string]int {
		out := map[string]int{}
		for _, f := range fakes {
			f.mu.Lock()
			for _, m := range f.calls {
				out[m.Text]++
			}
			f.mu.Unlock()
		}
		return out
	}
	stop1 := start(1)
	waitFor(t, "replica 1 holding the lease", func() bool {
		table.mu.Lock()
		defer table.mu.Unlock()
		return table.owner["channel:"+chat.Telegram] == 1
	})
	start(2)
	queue(0, 20)
	waitFor(t, "20 replies sent", func() bool { return len(sent()) == 20 })
	stop1()
	queue(20, 5)
	waitFor(t, "25 replies sent", func() bool { return len(sent()) == 25 })
	time.Sleep(50 * time.Millisecond) // a duplicate, had there been one, has time to go out
	for text, n := range sent() {
		if n != 1 {
			t.Errorf("%q sent %d times; want once", text, n)
		}
	}
	fakes[1].mu.Lock()
	byTwo := len(fakes[1].calls)
	fakes[1].mu.Unlock()
	if byTwo != 5 {
		t.Errorf("replica 2 sent %d replies; want the 5 queued after replica 1 stopped (the lease holder sends)", byTwo)
	}
}
