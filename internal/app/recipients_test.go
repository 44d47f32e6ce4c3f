package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/store"
)

func withTelegram(s string) string {
	return s + "\n[channels.telegram]\nenabled = true\ntoken_secret = \"tg\"\nsend = true\n"
}

func sendTo(chat, text string) proposal {
	return proposal{"send_message", `{"platform":"telegram","chat":"` + chat + `","text":` + mustQuote(text) + `}`}
}

// TestRecipientTrust: a message to the owner's own chat runs in
// autopilot; one to a chat the owner never confirmed asks — in yolo too,
// and an allow rule for send_message does not lift it — naming it "not
// confirmed yet"; approving it sends it and confirms the recipient, whose
// next message runs without asking; denying confirms no one.
func TestRecipientTrust(t *testing.T) {
	first := map[string]string{"smart": "rule.send", "autopilot": "mode.autopilot", "yolo": "mode.yolo"}
	for _, mode := range []string{"smart", "autopilot", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			r := newModeRuntime(t, mode, func(s string) string {
				return withTelegram(s) + "\n[[rules]]\nid = \"send\"\ntool = \"send_message\"\neffect = \"allow\"\n"
			}, Options{})
			if err := r.Store.Write(context.Background(), func(tx *store.Tx) error {
				return tx.AddChatOwner(store.ChatOwner{Platform: "telegram", UserID: "100", ChatID: "100", Name: "Ann", PairedAt: time.Now()})
			}); err != nil {
				t.Fatal(err)
			}
			runServer(t, r, script(sendTo("100", "hello me"), sendTo("555", "hello Sam"), sendTo("777", "hello Kim"))...)
			answers := map[string]channel.Choice{}
			var asked []string
			_, outs := turn(t, r, "s", "tell Sam and Kim", func(_ context.Context, c channel.Card) (channel.Choice, error) {
				asked = append(asked, c.Plan)
				if strings.Contains(c.Plan, "555") {
					answers["555"] = channel.Once
					return channel.Once, nil
				}
				return channel.Deny, nil
			})
			if len(asked) != 2 || !strings.Contains(asked[0], "telegram chat 555 (not confirmed yet)") {
				t.Fatalf("cards %q; want one for 555 and one for 777, each not confirmed yet", asked)
			}
			var rules []string
			for _, o := range outs {
				rules = append(rules, o.Name+" "+string(o.Status)+" "+o.Rule)
			}
			want := []string{"send_message ran " + first[mode], "send_message pending recipient.new", "send_message ran approval.once",
				"send_message pending recipient.new", "send_message denied recipient.new"}
			if strings.Join(rules, "|") != strings.Join(want, "|") {
				t.Errorf("outcomes %q;\nwant %q", rules, want)
			}
			rows, err := r.Store.OutboxUnsent(context.Background(), "telegram")
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, row := range rows {
				sent = append(sent, row.ChatID+":"+row.Text)
			}
			if strings.Join(sent, "|") != "100:hello me|555:hello Sam" {
				t.Errorf("queued %q; want the owner's and Sam's messages only", sent)
			}
			// Sam is confirmed now; Kim was denied and is not.
			runServer(t, r, script(sendTo("555", "again"), sendTo("777", "again"))...)
			asked = nil
			_, outs = turn(t, r, "s2", "again", func(_ context.Context, c channel.Card) (channel.Choice, error) {
				asked = append(asked, c.Plan)
				return channel.Deny, nil
			})
			if len(outs) < 1 || outs[0].Status != "ran" || len(asked) != 1 || !strings.Contains(asked[0], "777") {
				t.Errorf("second turn: outcomes %+v, cards %q; want Sam's message run unasked and Kim's asked", outs, asked)
			}
		})
	}
}

// TestSendMessageOnlyWithAChannel: without an enabled chat channel whose
// section says send = true the tool does not exist (nothing to send
// through, nothing in the prompt); the twin registers it.
func TestSendMessageOnlyWithAChannel(t *testing.T) {
	for name, edit := range map[string]func(string) string{
		"no channel": nil,
		"a channel without send": func(s string) string {
			return s + "\n[channels.telegram]\nenabled = true\ntoken_secret = \"tg\"\n"
		},
	} {
		r := newModeRuntime(t, "autopilot", edit, Options{})
		if _, ok := r.Registry.Lookup("send_message"); ok {
			t.Errorf("%s: send_message is registered", name)
		}
	}
	r := newModeRuntime(t, "autopilot", withTelegram, Options{})
	if _, ok := r.Registry.Lookup("send_message"); !ok {
		t.Error("send = true: send_message is not registered")
	}
}
