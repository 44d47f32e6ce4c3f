//go:build postgres

package automation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
)

var _ chats.Deliveries = (*riverScheduler)(nil)

// sentPart is one call of a replica's chat adapter's Send.
type sentPart struct {
	replica   int
	chat, key string
	text      string
	start     time.Time
	ok        bool // the platform took it
}

// sendLog is the chat platform as every replica's adapter sees it: each
// Send is recorded in one sequence, and two sends to one chat at once
// are counted as an overlap (the order of a chat's parts would be up to
// the network). hook, when set, decides a call's fate before it "goes".
type sendLog struct {
	mu       sync.Mutex // guards every field
	calls    []sentPart
	inflight map[string]int
	overlaps int
	hook     func(ctx context.Context, replica, try int, m chat.Outbound) error
	tries    map[string]int // by key
}

func newSendLog() *sendLog { return &sendLog{inflight: map[string]int{}, tries: map[string]int{}} }

// taken is the parts the platform took, by chat, in the order it took them.
func (l *sendLog) taken() map[string][]sentPart {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]sentPart{}
	for _, c := range l.calls {
		if c.ok {
			out[c.chat] = append(out[c.chat], c)
		}
	}
	return out
}

// callsOf is every Send call for key.
func (l *sendLog) callsOf(key string) []sentPart {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sentPart
	for _, c := range l.calls {
		if c.key == key {
			out = append(out, c)
		}
	}
	return out
}

// replicaAdapter is one replica's adapter to the platform of log. A Send
// takes sendTime: long enough for another replica to start a second send
// to the same chat meanwhile, had it been let.
type replicaAdapter struct {
	log     *sendLog
	replica int
}

const sendTime = 15 * time.Millisecond

var _ chat.Adapter = replicaAdapter{}

func (replicaAdapter) Platform() string { return chat.Telegram }
func (replicaAdapter) MaxChars() int    { return 4096 }
func (replicaAdapter) Info(context.Context) (chat.BotInfo, error) {
	return chat.BotInfo{ID: "bot1", Username: "homard_bot"}, nil
}
func (replicaAdapter) Run(ctx context.Context, _ chat.Sink) error { <-ctx.Done(); return nil }
func (replicaAdapter) Edit(context.Context, string, string, chat.Outbound) error {
	return nil
}
func (replicaAdapter) AckPress(context.Context, chat.Press, string) error { return nil }
func (replicaAdapter) Typing(context.Context, string) error               { return nil }
func (replicaAdapter) Leave(context.Context, string) error                { return nil }

func (a replicaAdapter) Send(ctx context.Context, m chat.Outbound) (string, error) {
	l := a.log
	l.mu.Lock()
	l.inflight[m.ChatID]++
	if l.inflight[m.ChatID] > 1 {
		l.overlaps++
	}
	l.tries[m.Key]++
	try, hook := l.tries[m.Key], l.hook
	i := len(l.calls)
	l.calls = append(l.calls, sentPart{replica: a.replica, chat: m.ChatID, key: m.Key, text: m.Text, start: time.Now()})
	l.mu.Unlock()
	defer func() { l.mu.Lock(); l.inflight[m.ChatID]--; l.mu.Unlock() }()
	var err error
	if hook != nil {
		err = hook(ctx, a.replica, try, m)
	}
	if err == nil {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(sendTime):
		}
	}
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	l.calls[i].ok = true
	l.mu.Unlock()
	return "m" + m.Key, nil
}

// chatReplica is one replica: its own store on the test's schema, river's
// scheduler (whose client works the chat jobs) and the chat core's
// runner wired to it as serve wires them.
type chatReplica struct {
	st   *store.Store
	stop func() // stops the runner and river, then closes the store
}

func startChatReplica(t *testing.T, where string, log *sendLog, replica int, lease func(string) (func(), bool, error)) *chatReplica {
	t.Helper()
	st := openSchedStore(t, where)
	var rec schedRecorder
	r := newRiver(newScheduler(rec.deps(t, st, testAuto())), riverTest)
	svc := chats.New(chats.Deps{Store: st, Config: config.Default(config.Paths{}), Now: time.Now})
	runner := svc.NewRunner(chats.Options{Adapters: []chat.Adapter{replicaAdapter{log, replica}}, Deliveries: r,
		Poll: 10 * time.Millisecond, ApprovalWait: time.Minute, TypingEvery: time.Hour, LeaseEvery: 10 * time.Millisecond,
		MaxAttempts: 3, Backoff: func(int) time.Duration { return 5 * time.Millisecond }, Lease: lease})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stop := sync.OnceFunc(func() { cancel(); wg.Wait(); st.Close() })
	t.Cleanup(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := r.Run(ctx); err != nil {
			t.Errorf("replica %d: river: %v", replica, err)
		}
	}()
	// The chat core starts once river has: its sweep queues jobs from the
	// first (before, it would send the parts itself).
	waitFor(t, 60*time.Second, "river started", func() bool { return r.chat.jobs.Load() != nil })
	wg.Add(1)
	go func() { defer wg.Done(); _ = runner.Run(ctx) }()
	return &chatReplica{st: st, stop: stop}
}

// queueParts queues parts 1..m to each chat, chat by chat in turn, and
// returns their row ids by chat.
func queueParts(t *testing.T, st *store.Store, chatIDs []string, m int) map[string][]int64 {
	t.Helper()
	ids := map[string][]int64{}
	err := st.Write(t.Context(), func(tx *store.Tx) error {
		for p := 1; p <= m; p++ {
			for _, c := range chatIDs {
				id, err := tx.InsertOutbox(store.OutboxRow{Platform: chat.Telegram, ChatID: c, Text: fmt.Sprintf("%s part %d", c, p),
					Part: p, Parts: m, CreatedAt: time.Now()})
				if err != nil {
					return err
				}
				ids[c] = append(ids[c], id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// inOrder checks that each chat's parts were taken exactly once each, in
// the order queued, with their row ids as keys.
func inOrder(t *testing.T, log *sendLog, ids map[string][]int64) {
	t.Helper()
	taken := log.taken()
	for c, want := range ids {
		var got []string
		for _, p := range taken[c] {
			got = append(got, p.key)
		}
		var wantKeys []string
		for _, id := range want {
			wantKeys = append(wantKeys, strconv.FormatInt(id, 10))
		}
		if !slices.Equal(got, wantKeys) {
			t.Errorf("chat %s: parts taken with keys %v; want each once, in order: %v", c, got, wantKeys)
		}
	}
}

// outboxState is the state and attempts of one outbox row.
func outboxState(t *testing.T, st *store.Store, id int64) (string, int) {
	t.Helper()
	row, err := st.Outbox(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return row.State, row.Attempts
}

// TestRiverChatPartsInOrderAcrossReplicas (issue 27 point 4): two
// replicas, each queueing and working river's chat jobs; 4 chats of 5
// parts each are queued at once. Every part is sent exactly once, each
// chat's parts in the order queued, and never two sends to one chat at
// once: both replicas' jobs drain the same chats together, and without
// the chat's lock (chats' holdChat) they send the same parts twice and
// side by side.
func TestRiverChatPartsInOrderAcrossReplicas(t *testing.T) {
	where := riverWhere(t)
	log := newSendLog()
	// Both replicas sweep (each holds a lease of its own): each queues
	// jobs for every chat, which its own river fetches at once, so both
	// drain the same chats at the same time but for the chat's lock.
	everyone := func(string) (func(), bool, error) { return func() {}, true, nil }
	a := startChatReplica(t, where, log, 1, everyone)
	startChatReplica(t, where, log, 2, everyone)
	chatIDs := []string{"c1", "c2", "c3", "c4", "c5", "c6"}
	ids := queueParts(t, a.st, chatIDs, 8)
	waitFor(t, 60*time.Second, "every part sent", func() bool {
		for _, c := range chatIDs {
			if st, _ := outboxState(t, a.st, ids[c][7]); st != "sent" {
				return false
			}
		}
		return true
	})
	time.Sleep(10 * riverTest.poll) // a duplicate, had there been one, has time to go out
	inOrder(t, log, ids)
	log.mu.Lock()
	overlaps, calls := log.overlaps, len(log.calls)
	log.mu.Unlock()
	if overlaps != 0 || calls != 48 {
		t.Errorf("%d sends to a chat overlapped another to it, %d sends in all; want none, and 48", overlaps, calls)
	}
}

// TestRiverChatReplicaKilledMidDelivery: replica a's job is sending a
// chat's first part when a stops (its river client stopped, its chat
// core's context cancelled, its store closed, as a dying process's
// sessions end). Replica b sends the part again with the same key, then
// the chat's later parts in order; nothing goes with another key.
func TestRiverChatReplicaKilledMidDelivery(t *testing.T) {
	where := riverWhere(t)
	log := newSendLog()
	blocked := make(chan struct{})
	once := sync.OnceFunc(func() { close(blocked) })
	log.hook = func(ctx context.Context, replica, try int, m chat.Outbound) error {
		if replica != 1 {
			return nil
		}
		once()
		<-ctx.Done()
		return ctx.Err()
	}
	a := startChatReplica(t, where, log, 1, nil)
	ids := queueParts(t, a.st, []string{"c1"}, 3)
	select {
	case <-blocked:
	case <-time.After(60 * time.Second):
		t.Fatal("replica a never sent the first part")
	}
	b := startChatReplica(t, where, log, 2, nil)
	a.stop()
	waitFor(t, 60*time.Second, "b sending the chat's parts", func() bool {
		st, _ := outboxState(t, b.st, ids["c1"][2])
		return st == "sent"
	})
	inOrder(t, log, ids)
	first := strconv.FormatInt(ids["c1"][0], 10)
	calls := log.callsOf(first)
	if len(calls) != 2 || calls[0].replica != 1 || calls[1].replica != 2 {
		t.Errorf("the first part was sent by replicas %v; want a's cut send, then b's with the same key", calls)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.calls) != 4 {
		t.Errorf("%d sends; want 4: the cut one, and b's three", len(log.calls))
	}
}

// TestRiverChatRetries: a part the platform refuses with a retry time
// waits for it (the job snoozed until the row's next try), and a part
// refused MaxAttempts (3) times is recorded failed, after which the
// chat's next part is sent. The twins: the next part of the first chat
// waits for the retried one, and goes after it.
func TestRiverChatRetries(t *testing.T) {
	where := riverWhere(t)
	log := newSendLog()
	const after = 300 * time.Millisecond
	var waitKey, failKey string
	log.hook = func(_ context.Context, _, try int, m chat.Outbound) error {
		switch {
		case m.Key == waitKey && try == 1:
			return &chat.RetryError{After: after, Err: errors.New("429 too many requests")}
		case m.Key == failKey:
			return errors.New("500 server error")
		}
		return nil
	}
	a := startChatReplica(t, where, log, 1, nil)
	log.mu.Lock()
	// The ids the next rows will get are not known before they are
	// queued: queue under the lock, so that no Send runs before the hook
	// knows its keys.
	ids := queueParts(t, a.st, []string{"wait", "fail"}, 2)
	waitKey, failKey = strconv.FormatInt(ids["wait"][0], 10), strconv.FormatInt(ids["fail"][0], 10)
	log.mu.Unlock()
	startChatReplica(t, where, log, 2, nil)
	waitFor(t, 60*time.Second, "both chats' second parts sent", func() bool {
		s1, _ := outboxState(t, a.st, ids["wait"][1])
		s2, _ := outboxState(t, a.st, ids["fail"][1])
		return s1 == "sent" && s2 == "sent"
	})
	if st, n := outboxState(t, a.st, ids["fail"][0]); st != "failed" || n != 3 {
		t.Errorf("the refused part is %s after %d attempts; want failed after 3", st, n)
	}
	if calls := log.callsOf(failKey); len(calls) != 3 {
		t.Errorf("the refused part was tried %d times; want 3", len(calls))
	}
	calls := log.callsOf(waitKey)
	if len(calls) != 2 || calls[1].start.Sub(calls[0].start) < after {
		t.Errorf("the part told to wait %v was tried %d times, the second %v after the first; want twice, no sooner", after, len(calls), func() time.Duration {
			if len(calls) < 2 {
				return 0
			}
			return calls[1].start.Sub(calls[0].start)
		}())
	}
	ids["fail"] = ids["fail"][1:] // the given-up part was never taken
	inOrder(t, log, ids)
	var snoozes int
	if err := plainDB(t, a.st).QueryRowContext(t.Context(), `SELECT coalesce(max((metadata->>'snoozes')::int), 0) FROM river_job
		WHERE kind = $1 AND args->>'chat' = 'wait'`, chatArgs{}.Kind()).Scan(&snoozes); err != nil {
		t.Fatal(err)
	}
	if snoozes == 0 {
		t.Error("the waiting chat's job was never snoozed; want it to wait for the retry time snoozed")
	}
}

// TestRiverChatStrandedJobReplaced: a replica died (SIGKILL) while its
// job sent a chat's first part: the row is left sending and the job
// running, which river rescues only after its timeout. Replica b's sweep
// does not count a running job as one waiting, so it queues another at
// once; b sends the part again with the same key, then the chat's later
// parts in order. The twin is TestRiverChatReplicaKilledMidDelivery,
// whose job ended cut short and is retried by river itself.
func TestRiverChatStrandedJobReplaced(t *testing.T) {
	where := riverWhere(t)
	ctx := t.Context()
	a := openSchedStore(t, where)
	ids := queueParts(t, a, []string{"c1"}, 3)
	db := plainDB(t, a)
	if err := migrateRiver(ctx, a, db, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	insert, err := river.NewClient(riverdatabasesql.New(db), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := insert.Insert(ctx, chatArgs{Platform: chat.Telegram, Chat: "c1"}, &river.InsertOpts{Queue: chatQueueOf("owner")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(),
		attempted_by = ARRAY['replica-a'] WHERE id = $1`, res.Job.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, func(tx *store.Tx) error { return tx.OutboxSending(ids["c1"][0]) }); err != nil {
		t.Fatal(err)
	}
	log := newSendLog()
	b := startChatReplica(t, where, log, 2, nil)
	waitFor(t, 60*time.Second, "b sending the chat's parts", func() bool {
		st, _ := outboxState(t, b.st, ids["c1"][2])
		return st == "sent"
	})
	inOrder(t, log, ids)
	if st, n := outboxState(t, b.st, ids["c1"][0]); st != "sent" || n != 2 {
		t.Errorf("the stranded part is %s after %d attempts; want sent at the second", st, n)
	}
	// Sent by a job the sweep queued, not by the stranded one rescued
	// (which river does only after its timeout and a rescuer's round).
	waitFor(t, 60*time.Second, "a job of the chat other than the stranded one completed", func() bool {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND id <> $2
			AND state = 'completed' AND args->>'chat' = 'c1'`, chatArgs{}.Kind(), res.Job.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
}
