package discord

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// The gateway payloads the adapter reads, with only the fields it uses.
// They are decoded from the dispatch's raw "d" so that every field comes
// from Discord's own JSON, whatever discordgo's structs keep.

type user struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	GlobalName string `json:"global_name"`
	Bot        bool   `json:"bot"`
	System     bool   `json:"system"`
}

func (u *user) name() string {
	if u == nil {
		return ""
	}
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

type member struct {
	User *user  `json:"user"`
	Nick string `json:"nick"`
}

// Message reference types (message_reference.type).
const (
	refDefault = 0
	refForward = 1
)

type message struct {
	ID            string    `json:"id"`
	ChannelID     string    `json:"channel_id"`
	GuildID       string    `json:"guild_id"`
	Author        *user     `json:"author"`
	Member        *member   `json:"member"`
	Content       string    `json:"content"`
	Timestamp     time.Time `json:"timestamp"`
	WebhookID     string    `json:"webhook_id"`
	ApplicationID string    `json:"application_id"`
	Mentions      []user    `json:"mentions"`
	Reference     *struct {
		Type      int    `json:"type"`
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
	Referenced *struct {
		Author *user `json:"author"`
	} `json:"referenced_message"`
	Snapshots []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"message_snapshots"`
}

// Interaction types and component interactions.
const interactionComponent = 3

type interaction struct {
	ID        string  `json:"id"`
	Type      int     `json:"type"`
	Token     string  `json:"token"`
	Locale    string  `json:"locale"` // the presser's client language ("zh-CN")
	GuildID   string  `json:"guild_id"`
	ChannelID string  `json:"channel_id"`
	Member    *member `json:"member"`
	User      *user   `json:"user"`
	Message   *struct {
		ID string `json:"id"`
	} `json:"message"`
	Data struct {
		CustomID string `json:"custom_id"`
	} `json:"data"`
}

type guild struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Unavailable bool      `json:"unavailable"`
	JoinedAt    time.Time `json:"joined_at"`
}

type ready struct {
	User user `json:"user"`
}

// decodeMessage maps MESSAGE_CREATE to a chat.Inbound for bot botID.
func decodeMessage(raw json.RawMessage, botID string) (chat.Inbound, error) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return chat.Inbound{}, fmt.Errorf("decode MESSAGE_CREATE: %w", err)
	}
	if m.ID == "" || m.ChannelID == "" {
		return chat.Inbound{}, fmt.Errorf("decode MESSAGE_CREATE: no id or channel_id")
	}
	in := channelInbound(botID, m.ID, chat.KindMessage, m.ChannelID, m.GuildID)
	in.At, in.MessageID, in.Text = m.Timestamp, m.ID, m.Content
	if m.Author != nil {
		in.Sender = chat.Sender{
			ID:   m.Author.ID,
			Name: m.Author.name(),
			// A webhook's or an application's message may carry a
			// made-up author: either field makes it not a person.
			Bot: m.Author.Bot || m.Author.System || m.WebhookID != "" || m.ApplicationID != "",
		}
	} else {
		in.Sender.Bot = m.WebhookID != "" || m.ApplicationID != ""
	}
	if m.Member != nil && m.Member.Nick != "" {
		in.Sender.Name = m.Member.Nick
	}
	// A message without guild_id is in a DM channel, whose only members
	// are the bot and one user (bots cannot be in group DMs): a person
	// writing there is the chat's own user.
	in.Sender.IsChat = in.Chat.Direct && in.Sender.ID != "" && !in.Sender.Bot && m.WebhookID == ""
	for _, u := range m.Mentions {
		if botID != "" && u.ID == botID {
			in.Mentioned = true
		}
	}
	if botID != "" && m.Referenced != nil && m.Referenced.Author != nil && m.Referenced.Author.ID == botID {
		in.Mentioned = true
	}
	if (m.Reference != nil && m.Reference.Type == refForward) || len(m.Snapshots) > 0 {
		in.Forwarded = true
		var q []string
		for _, s := range m.Snapshots {
			if s.Message.Content != "" {
				q = append(q, s.Message.Content)
			}
		}
		in.Quoted = strings.Join(q, "\n\n")
	}
	return in, nil
}

// decodeUpdate maps MESSAGE_UPDATE (an edit, or an embed resolved later)
// to a KindOther delivery. Its DeliveryID is not the message's id, which
// its MESSAGE_CREATE already used.
func decodeUpdate(raw json.RawMessage, botID string, seq int64) (chat.Inbound, error) {
	var m struct {
		ID              string `json:"id"`
		ChannelID       string `json:"channel_id"`
		GuildID         string `json:"guild_id"`
		EditedTimestamp string `json:"edited_timestamp"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return chat.Inbound{}, fmt.Errorf("decode MESSAGE_UPDATE: %w", err)
	}
	id := "update:" + m.ID + ":" + m.EditedTimestamp
	if m.EditedTimestamp == "" {
		id = fmt.Sprintf("update:%s:seq%d", m.ID, seq)
	}
	in := channelInbound(botID, id, chat.KindOther, m.ChannelID, m.GuildID)
	in.MessageID = m.ID
	return in, nil
}

// decodeInteraction maps INTERACTION_CREATE. Only a message component
// (a button) is a press; anything else is KindOther.
func decodeInteraction(raw json.RawMessage, botID string) (chat.Inbound, error) {
	var it interaction
	if err := json.Unmarshal(raw, &it); err != nil {
		return chat.Inbound{}, fmt.Errorf("decode INTERACTION_CREATE: %w", err)
	}
	if it.ID == "" {
		return chat.Inbound{}, fmt.Errorf("decode INTERACTION_CREATE: no id")
	}
	in := channelInbound(botID, it.ID, chat.KindOther, it.ChannelID, it.GuildID)
	in.Lang = it.Locale
	u := it.User
	if it.Member != nil && it.Member.User != nil {
		u = it.Member.User
	}
	if u != nil {
		in.Sender = chat.Sender{ID: u.ID, Name: u.name(), Bot: u.Bot || u.System}
		in.Sender.IsChat = in.Chat.Direct && u.ID != "" && !in.Sender.Bot
	}
	if it.Type != interactionComponent {
		return in, nil
	}
	in.Kind = chat.KindPress
	in.Press = &chat.Press{ID: it.ID, Token: it.Token, Data: it.Data.CustomID}
	if it.Message != nil {
		in.Press.MessageID = it.Message.ID
		in.MessageID = it.Message.ID
	}
	return in, nil
}

// channelInbound is a delivery to bot botID of an event in channel
// channelID of guild guildID; a channel without a guild is a DM, Direct.
func channelInbound(botID, deliveryID string, kind chat.Kind, channelID, guildID string) chat.Inbound {
	return chat.Inbound{Platform: chat.Discord, Bot: botID, DeliveryID: deliveryID, Kind: kind,
		Chat: chat.Chat{ID: channelID, Group: guildID, Direct: guildID == ""}}
}

// decodeGuild maps GUILD_CREATE to a join. ok is false for a guild in an
// outage (unavailable). Discord sends GUILD_CREATE for every guild at each
// new gateway session as well as when the bot is added: the DeliveryID
// holds joined_at, so the inbox sees each join once and a guild the bot
// is added to again (after leaving) is a new join.
func decodeGuild(raw json.RawMessage, botID string) (in chat.Inbound, ok bool, err error) {
	var g guild
	if err := json.Unmarshal(raw, &g); err != nil {
		return chat.Inbound{}, false, fmt.Errorf("decode GUILD_CREATE: %w", err)
	}
	if g.ID == "" || g.Unavailable {
		return chat.Inbound{}, false, nil
	}
	return chat.Inbound{
		Platform:   chat.Discord,
		Bot:        botID,
		DeliveryID: "join:" + g.ID + ":" + g.JoinedAt.UTC().Format(time.RFC3339Nano),
		Kind:       chat.KindJoin,
		At:         g.JoinedAt,
		Chat:       chat.Chat{ID: g.ID, Group: g.ID, Title: g.Name},
	}, true, nil
}
