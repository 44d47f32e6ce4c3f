package app

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
)

// The integration tests in chats_discord_test.go and chats_feishu_test.go
// run the real adapters against their platform fakes through `homard
// serve` as it runs them: the channel configured with api_base pointed at
// the fake, its token in the vault tagged for the channel, and Serve
// building the adapters itself (ServeOptions.ChatAdapters left nil).

// servedChannel is one `homard serve` running a configured channel.
type servedChannel struct {
	t      *testing.T
	r      *Runtime
	cancel context.CancelFunc
	done   chan error
	log    *syncBuffer
}

// configureChannel enables platform on r with cfg and stores token in the
// vault as `homard secret set NAME --channel PLATFORM` does.
func configureChannel(t *testing.T, r *Runtime, platform string, cfg config.Channel, token string) {
	t.Helper()
	cfg.Enabled = true
	*r.Config.Channels.ByName()[platform] = cfg
	if err := r.Owner.SecretSet(Secret{Name: cfg.TokenSecret, Channel: platform}, []byte(token)); err != nil {
		t.Fatalf("store the %s token: %v", platform, err)
	}
}

// serveChannels starts `homard serve` on r (loopback, a free port) with
// the channels r's config enables, until the test ends or stop is called.
func serveChannels(t *testing.T, r *Runtime, o ServeOptions) *servedChannel {
	t.Helper()
	if o.Listener == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		o.Listener = ln
	}
	sc := &servedChannel{t: t, r: r, done: make(chan error, 1), log: &syncBuffer{}}
	o.Out, o.Log = io.Discard, sc.log
	ctx, cancel := context.WithCancel(context.Background())
	sc.cancel = cancel
	go func() { sc.done <- r.Serve(ctx, o) }()
	t.Cleanup(sc.stop)
	return sc
}

// stop ends serve and waits for it (once).
func (sc *servedChannel) stop() {
	if sc.cancel == nil {
		return
	}
	sc.cancel()
	sc.cancel = nil
	if err := <-sc.done; err != nil {
		sc.t.Errorf("Serve = %v\nlog:\n%s", err, sc.log)
	}
}

// pairOn makes user an owner on platform, as `homard pair` would.
func pairOn(t *testing.T, r *Runtime, platform, user string) {
	t.Helper()
	err := r.Store.Write(context.Background(), func(tx *store.Tx) error {
		return tx.AddChatOwner(store.ChatOwner{Platform: platform, UserID: user, Name: "Ann", PairedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// outboxOfKey is the outbox row a send's duplicate-guard key names.
func outboxOfKey(t *testing.T, r *Runtime, key string) store.OutboxRow {
	t.Helper()
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		t.Fatalf("send key %q is not an outbox row id", key)
	}
	row, err := r.Store.Outbox(context.Background(), id)
	if err != nil {
		t.Fatalf("outbox row %d: %v", id, err)
	}
	return row
}
