package app

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
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
				if err := r.SecretSet(Secret{Name: "tg", Channel: chat.Telegram}, []byte("123456:ABCdefGHIjklMNOpqrSTUvwxYZ0123")); err != nil {
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
