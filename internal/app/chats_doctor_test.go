package app

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/store"
)

// TestChatsDoctor: doctor checks each enabled channel: the token in the
// vault, the bot answering, owners paired, no second poller.
func TestChatsDoctor(t *testing.T) {
	tests := []struct {
		name    string
		token   bool
		owner   bool
		infoErr error
		state   string // last error recorded by serve
		offline bool
		ok      bool
		want    string
	}{
		{"no token", false, true, nil, "", false, false, "--channel telegram"},
		{"token refused", true, true, chat.ErrUnauthorized, "", false, false, "refused the bot token"},
		{"no owner", true, false, nil, "", false, false, "homard pair telegram"},
		{"second poller", true, true, nil, chat.ErrConflict.Error(), false, false, "a second poller"},
		{"all good", true, true, nil, "", false, true, "bot @homard_bot (bot1) answers; 1 owner(s) paired"},
		{"offline", true, true, chat.ErrUnauthorized, "", true, true, "token in the vault; 1 owner(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRuntime(t, "smart")
			f, err := os.OpenFile(r.Paths.ConfigFile, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("\n[channels.telegram]\nenabled = true\ntoken_secret = \"tg\"\n")
			f.Close()
			if tt.token {
				if err := r.Owner.SecretSet(Secret{Name: "tg", Channel: chat.Telegram}, []byte("123456:ABCdefGHIjklMNOpqrSTUvwxYZ0123")); err != nil {
					t.Fatal(err)
				}
			}
			if tt.owner {
				pairOwner(t, r, "100")
			}
			if tt.state != "" {
				err := r.Store.Write(context.Background(), func(tx *store.Tx) error {
					return tx.SetChannelState(store.ChannelState{Platform: chat.Telegram, State: "stopped", LastError: tt.state, UpdatedAt: time.Now()})
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			fake := newFake()
			fake.infoErr = tt.infoErr
			checks := Doctor(context.Background(), r.Paths, DoctorOptions{Offline: tt.offline, chatAdapters: []chat.Adapter{fake}, Getenv: func(string) string { return "" }})
			var got *Check
			for i := range checks {
				if checks[i].Name == "channel telegram" {
					got = &checks[i]
				}
			}
			if got == nil {
				t.Fatalf("no channel telegram check in %+v", checks)
			}
			if got.OK != tt.ok || !strings.Contains(got.Detail, tt.want) {
				t.Errorf("check = %+v; want ok %v and %q", *got, tt.ok, tt.want)
			}
		})
	}
}

// TestChatsServe: `homard serve` runs the chat channels beside the web UI:
// a delivery through the adapter's sink is answered, the channel's state
// is recorded for `homard channel list`, and stopping serve stops it.
func TestChatsServe(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r, openAI(llmtest.Turn{Text: []string{"served"}}))
	pairOwner(t, r, "100")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- r.Serve(ctx, ServeOptions{Listener: ln, Out: io.Discard, Log: io.Discard, ChatAdapters: []chat.Adapter{fake}})
	}()
	waitFor(t, "the adapter running", func() bool { return fake.running() != nil })
	if err := fake.running().Receive(ctx, dm("1", "100", "hello")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reply", func() bool { return containsText(fake.sentTexts("100"), "served") })
	list, err := r.Chats.List(ctx)
	if err != nil || list[0].Channel != chat.Telegram || list[0].State != "running" || list[0].Bot != "homard_bot" || list[0].Owners != 1 {
		t.Errorf("ChannelList = %+v, %v; want telegram running as homard_bot with 1 owner", list, err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
	list, _ = r.Chats.List(context.Background())
	if list[0].State != "stopped" {
		t.Errorf("state after serve stopped = %q; want stopped", list[0].State)
	}
}
