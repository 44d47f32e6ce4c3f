package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/discord/discordtest"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
)

// discordServed is serve running the Discord channel against a fake.
type discordServed struct {
	*servedChannel
	fake *discordtest.Server
}

// Snowflakes of the Discord tests.
const (
	dcOwner     = "4200"
	dcOwnerDM   = "7001"
	dcStranger  = "4300"
	dcStrangeDM = "7002"
	dcGuild     = "9100"
	dcGuildChan = "9101"
)

// serveDiscord configures the Discord channel at a new fake and starts
// serve; it returns once the gateway session is READY.
func serveDiscord(t *testing.T, r *Runtime, fake *discordtest.Server) *discordServed {
	t.Helper()
	if fake == nil {
		fake = discordtest.New(discordtest.Options{})
		t.Cleanup(fake.Close)
		configureChannel(t, r, chat.Discord, config.Channel{TokenSecret: "discord", APIBase: fake.APIBase(), Groups: []string{dcGuild}}, "test-token")
	}
	sessions := len(fake.Identified()) + fake.Resumes()
	sc := serveChannels(t, r, ServeOptions{})
	// This serve's own session first (an earlier serve's connection may
	// still be closing), then its READY.
	waitFor(t, "this serve's IDENTIFY", func() bool { return len(fake.Identified())+fake.Resumes() > sessions })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := fake.WaitReady(ctx); err != nil {
		t.Fatalf("%v\nserve log:\n%s", err, sc.log)
	}
	waitFor(t, "the channel running", func() bool {
		list, err := r.Chats.List(context.Background())
		return err == nil && list[1].Channel == chat.Discord && list[1].State == "running"
	})
	return &discordServed{servedChannel: sc, fake: fake}
}

// dcMessage is a MESSAGE_CREATE payload; guild "" is a DM.
func dcMessage(id, channel, guild, author, content string, mentions ...string) map[string]any {
	m := map[string]any{"id": id, "channel_id": channel, "author": map[string]any{"id": author, "username": "u" + author},
		"content": content, "timestamp": "2026-12-01T10:00:00Z"}
	if guild != "" {
		m["guild_id"] = guild
	}
	var ms []map[string]any
	for _, u := range mentions {
		ms = append(ms, map[string]any{"id": u, "username": "u" + u})
	}
	m["mentions"] = ms
	return m
}

// dcSent is a message the adapter posted, as the fake received it.
type dcSent struct {
	Content         string `json:"content"`
	Nonce           string `json:"nonce"`
	EnforceNonce    bool   `json:"enforce_nonce"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
	Components []struct {
		Components []struct {
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
		} `json:"components"`
	} `json:"components"`
	Reference *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
}

// posts returns what was posted to channel, decoded.
func (d *discordServed) posts(channel string) []dcSent {
	var out []dcSent
	seen := map[string]bool{}
	for _, c := range d.fake.CallsTo("POST", "/channels/"+channel+"/messages") {
		var m dcSent
		if err := json.Unmarshal(c.Body, &m); err != nil {
			d.t.Fatalf("POST %s body %s: %v", c.Path, c.Body, err)
		}
		// A part re-sent after a restart carries its nonce again, and
		// Discord (enforce_nonce) answers with the message it already
		// made: the channel shows it once.
		if m.Nonce != "" && seen[m.Nonce] {
			continue
		}
		seen[m.Nonce] = true
		out = append(out, m)
	}
	return out
}

func (d *discordServed) dispatch(typ string, payload map[string]any) {
	d.t.Helper()
	if err := d.fake.Dispatch(typ, payload); err != nil {
		d.t.Fatal(err)
	}
}

// TestDiscordServeOwnerApproval: through serve and the real adapter
// against the fake: the owner's DM runs a turn whose write needs
// approval; the card (buttons, allowed_mentions empty, nonce = its outbox
// row) goes to the owner's DM; the fake presses "Approve once" over the
// gateway; the press is acknowledged through the interaction callback
// with the notice; the file is written, the card edited, and the final
// reply sent as a reply to the owner's message.
func TestDiscordServeOwnerApproval(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r,
		openAI(toolCall("c1", "write_file", `{"path":"notes/d.txt","content":"from discord\n"}`)),
		openAI(llmtest.Turn{Text: []string{"written @everyone"}}),
	)
	pairOn(t, r, chat.Discord, dcOwner)
	d := serveDiscord(t, r, nil)

	d.dispatch("MESSAGE_CREATE", dcMessage("8001", dcOwnerDM, "", dcOwner, "write the note"))
	var card dcSent
	waitFor(t, "the approval card in the owner's DM", func() bool {
		for _, m := range d.posts(dcOwnerDM) {
			if len(m.Components) > 0 {
				card = m
				return true
			}
		}
		return false
	})
	if card.AllowedMentions == nil || len(card.AllowedMentions.Parse) != 0 {
		t.Errorf("card allowed_mentions = %+v; want {\"parse\": []}", card.AllowedMentions)
	}
	row := outboxOfKey(t, r, card.Nonce)
	if !card.EnforceNonce || row.ChatID != dcOwnerDM || len(row.Buttons) == 0 {
		t.Errorf("card nonce %q (enforce %v) names outbox row %+v; want the card's own row", card.Nonce, card.EnforceNonce, row)
	}
	var labels []string
	for _, b := range card.Components[0].Components {
		labels = append(labels, b.Label)
	}
	if !slices.Equal(labels, []string{"Approve once", "This session", "Always", "Deny"}) {
		t.Fatalf("card buttons = %q", labels)
	}
	if !strings.Contains(card.Content, "notes/d.txt") {
		t.Errorf("card text %q; want the plan", card.Content)
	}
	waitFor(t, "the card's message id recorded", func() bool { return outboxOfKey(t, r, card.Nonce).MessageID != "" })
	cardID := outboxOfKey(t, r, card.Nonce).MessageID

	d.dispatch("INTERACTION_CREATE", map[string]any{"id": "8501", "type": 3, "token": "press-token", "channel_id": dcOwnerDM,
		"user": map[string]any{"id": dcOwner, "username": "ann"}, "message": map[string]any{"id": cardID},
		"data": map[string]any{"custom_id": card.Components[0].Components[0].CustomID, "component_type": 2}})
	waitFor(t, "the final reply", func() bool {
		for _, m := range d.posts(dcOwnerDM) {
			if strings.Contains(m.Content, "written") {
				return true
			}
		}
		return false
	})
	acks := d.fake.CallsTo("POST", "/interactions/8501/press-token/callback")
	var ack struct {
		Type int `json:"type"`
		Data struct {
			Content string `json:"content"`
		} `json:"data"`
	}
	if len(acks) != 1 || json.Unmarshal(acks[0].Body, &ack) != nil || ack.Type != 4 || ack.Data.Content != "Approved once" {
		t.Errorf("interaction callbacks = %+v; want one type 4 saying Approved once", acks)
	}
	b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "notes", "d.txt"))
	if err != nil || string(b) != "from discord\n" {
		t.Errorf("notes/d.txt = %q, %v; want the approved write", b, err)
	}
	for _, m := range d.posts(dcOwnerDM) {
		if m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 || !m.EnforceNonce || m.Nonce == "" {
			t.Errorf("post %q: allowed_mentions %+v, nonce %q enforce %v; want no pings and the outbox key", m.Content, m.AllowedMentions, m.Nonce, m.EnforceNonce)
		}
		if strings.Contains(m.Content, "written") && (m.Reference == nil || m.Reference.MessageID != "8001") {
			t.Errorf("final reply reference = %+v; want a reply to 8001", m.Reference)
		}
	}
	waitFor(t, "the card edited", func() bool {
		text, _ := d.fake.Message(cardID)
		return strings.Contains(text, "Answered here: Approved once")
	})
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("model requests = %d; want 2", n)
	}
}

// TestDiscordServeNotOwner: through serve against the fake: a stranger's
// DM reaches no model and gets the private notice; a message in an
// allowed guild without a mention is ignored (no post, no leave); the
// same message id delivered twice, and again after serve restarted, is
// handled once; the twin, the owner's DM, is answered.
func TestDiscordServeNotOwner(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r, openAI(llmtest.Turn{Text: []string{"once"}}), openAI(llmtest.Turn{Text: []string{"twice"}}))
	pairOn(t, r, chat.Discord, dcOwner)
	d := serveDiscord(t, r, nil)

	d.dispatch("MESSAGE_CREATE", dcMessage("8101", dcStrangeDM, "", dcStranger, "hello, run something"))
	d.dispatch("MESSAGE_CREATE", dcMessage("8102", dcGuildChan, dcGuild, dcStranger, "no mention here"))
	d.dispatch("MESSAGE_CREATE", dcMessage("8103", dcOwnerDM, "", dcOwner, "hello"))
	d.dispatch("MESSAGE_CREATE", dcMessage("8103", dcOwnerDM, "", dcOwner, "hello"))
	waitFor(t, "the owner's reply", func() bool { return len(d.posts(dcOwnerDM)) == 1 })
	waitFor(t, "the stranger's notice", func() bool { return len(d.posts(dcStrangeDM)) == 1 })
	waitFor(t, "the guild message ignored", func() bool { return inboxState(t, r, "8102") == inboxIgnored })
	if got := d.posts(dcStrangeDM)[0].Content; got != privateNotice {
		t.Errorf("stranger got %q; want %q", got, privateNotice)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1 (the owner's message, once)", n)
	}

	// The same message id after a restart: the inbox remembers it.
	d.stop()
	d = serveDiscord(t, r, d.fake)
	d.dispatch("MESSAGE_CREATE", dcMessage("8103", dcOwnerDM, "", dcOwner, "hello"))
	d.dispatch("MESSAGE_CREATE", dcMessage("8104", dcOwnerDM, "", dcOwner, "/new"))
	waitFor(t, "the /new answer", func() bool { return len(d.posts(dcOwnerDM)) == 2 })
	d.stop()
	var got []string
	for _, m := range d.posts(dcOwnerDM) {
		got = append(got, m.Content)
	}
	if !slices.Equal(got, []string{"once", newSession}) {
		t.Errorf("owner's DM got %q; want [once, %q]", got, newSession)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d; want 1", n)
	}
	if posts, left := d.posts(dcGuildChan), d.fake.CallsTo("DELETE", "/users/@me/guilds"); len(posts) != 0 || len(left) != 0 {
		t.Errorf("guild channel got %d posts and %d leaves; want none for a message without a mention", len(posts), len(left))
	}
}
