package chats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
)

// platforms is every chat platform, in the order people see them: the
// one platform table's (config.Platforms).
var platforms = config.PlatformNames()

// Adapters builds the adapter of every enabled channel, its token taken
// from the vault (a secret stored with --channel for it).
func (s *Service) Adapters() ([]chat.Adapter, error) {
	var out []chat.Adapter
	for _, p := range platforms {
		cfg := s.d.Config.Channels.ByName()[p]
		if !cfg.Enabled {
			continue
		}
		a, err := s.adapter(p, *cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (s *Service) adapter(p string, cfg config.Channel) (chat.Adapter, error) {
	token, err := s.d.Tokens.ChannelToken(cfg.TokenSecret, p)
	if errors.Is(err, secrets.ErrNoSecret) {
		return nil, fmt.Errorf("channel %s: no bot token: store it with `homard secret set %s --channel %s`", p, cfg.TokenSecret, p) // lang:en
	}
	if err != nil {
		return nil, fmt.Errorf("channel %s: token: %w", p, err) // lang:en
	}
	set := chat.Settings{APIBase: cfg.Base(p), AppID: cfg.AppID, Callback: cfg.Callback(), Token: token, Log: slog.Default()}
	if cfg.Callback() {
		key, err := s.d.Tokens.ChannelToken(cfg.EncryptKeySecret, p)
		if errors.Is(err, secrets.ErrNoSecret) {
			return nil, fmt.Errorf("channel %s: callback mode needs the Encrypt Key: store it with `homard secret set %s --channel %s`", p, cfg.EncryptKeySecret, p) // lang:en
		}
		if err != nil {
			return nil, fmt.Errorf("channel %s: encrypt key: %w", p, err) // lang:en
		}
		set.EncryptKey = key
	}
	row, ok := config.PlatformOf(p)
	if !ok || row.New == nil {
		return nil, fmt.Errorf("channel %s: %w", p, ErrAdapterMissing) // lang:en
	}
	a, err := row.New(set)
	if err != nil {
		return nil, fmt.Errorf("channel %s: %w", p, err) // lang:en
	}
	return a, nil
}

// ChannelStatus is one chat channel as `homard channel list` shows it.
type ChannelStatus struct {
	Channel   string   `json:"channel"`
	Enabled   bool     `json:"enabled"`
	Bot       string   `json:"bot"` // the bot's handle as serve last saw it
	BotID     string   `json:"bot_id"`
	Owners    int      `json:"owners"`
	Groups    []string `json:"groups"` // allowed groups: config and `homard channel allow`
	State     string   `json:"state"`  // running, retrying, stopped; "" when serve never ran it
	LastError string   `json:"last_error"`
	// UpdatedAt is when serve last recorded State; nil when it never
	// ran the channel.
	UpdatedAt *time.Time `json:"updated_at"`
}

// List returns every chat channel with its state as the running (or
// last) `homard serve` recorded it.
func (s *Service) List(ctx context.Context) ([]ChannelStatus, error) {
	states, err := s.d.Store.ChannelStates(ctx)
	if err != nil {
		return nil, err
	}
	var out []ChannelStatus
	for _, p := range platforms {
		cfg := s.d.Config.Channels.ByName()[p]
		owners, err := s.d.Store.ChatOwners(ctx, p)
		if err != nil {
			return nil, err
		}
		allowed, err := s.d.Store.AllowedChats(ctx, p)
		if err != nil {
			return nil, err
		}
		groups := append(slices.Clone(cfg.Groups), allowed...)
		slices.Sort(groups)
		groups = slices.Compact(groups)
		if groups == nil {
			groups = []string{}
		}
		st := states[p]
		var updated *time.Time
		if !st.UpdatedAt.IsZero() {
			u := st.UpdatedAt.UTC()
			updated = &u
		}
		out = append(out, ChannelStatus{Channel: p, Enabled: cfg.Enabled, Bot: st.BotName, BotID: st.BotID, Owners: len(owners),
			Groups: groups, State: st.State, LastError: st.LastError, UpdatedAt: updated})
	}
	return out, nil
}

// Allow allows (allow) or stops allowing a group chat on platform:
// the bot answers mentions there as a guest. A group listed in the
// config stays allowed until it is removed from the config.
func (s *Service) Allow(ctx context.Context, platform, chatID string, allow bool) error {
	if !knownPlatform(platform) {
		return fmt.Errorf("%w: %q", ErrPairPlatform, platform)
	}
	if chatID == "" || len(chatID) > 64 || strings.ContainsFunc(chatID, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		return fmt.Errorf("%w: chat id %q: want the group's id as `homard channel list` or the platform shows it", s.d.BadRequest, chatID) // lang:en
	}
	if !allow && slices.Contains(s.d.Config.Channels.ByName()[platform].Groups, chatID) {
		return fmt.Errorf("%w: %s is listed in channels.%s.groups in %s; remove it there", s.d.BadRequest, chatID, platform, s.d.ConfigFile) // lang:en
	}
	return s.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetChatAllowed(platform, chatID, allow) })
}

// Check is one line of doctor's report: what was checked, whether it is
// right, and what was found or what to do.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// Checks are doctor's lines for each enabled channel: the token in the
// vault, the adapter, the bot answering (unless offline), an owner
// paired, and no second poller seen by serve. stand, when set, stands in
// for the channels' adapters (tests) once their token was found.
func (s *Service) Checks(ctx context.Context, offline bool, stand []chat.Adapter) []Check {
	var out []Check
	states, _ := s.d.Store.ChannelStates(ctx)
	for _, p := range platforms {
		cfg := s.d.Config.Channels.ByName()[p]
		if !cfg.Enabled {
			continue
		}
		name := "channel " + p
		a, err := s.adapter(p, *cfg)
		fake := slices.IndexFunc(stand, func(f chat.Adapter) bool { return f.Platform() == p })
		if fake >= 0 && (err == nil || errors.Is(err, ErrAdapterMissing)) {
			a, err = stand[fake], nil // the token was found; the adapter is the test's
		}
		if err != nil {
			out = append(out, Check{Name: name, Detail: err.Error()})
			continue
		}
		detail := "token in the vault" // lang:en
		if !offline {
			ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
			info, err := a.Info(ictx)
			cancel()
			switch {
			case errors.Is(err, chat.ErrUnauthorized):
				out = append(out, Check{Name: name, Detail: fmt.Sprintf("the platform refused the bot token; store the right one with `homard secret set %s --channel %s`", cfg.TokenSecret, p)}) // lang:en
				continue
			case err != nil:
				out = append(out, Check{Name: name, Detail: fmt.Sprintf("the platform did not answer: %s; check channels.%s.api_base and the network", errText(err), p)}) // lang:en
				continue
			}
			detail = fmt.Sprintf("bot @%s (%s) answers", info.Username, info.ID) // lang:en
		}
		if st := states[p]; strings.Contains(st.LastError, chat.ErrConflict.Error()) {
			out = append(out, Check{Name: name, Detail: "a second poller: " + chat.ErrConflict.Error() + "; stop the other homard (or program) using this bot token, then restart `homard serve`"}) // lang:en
			continue
		}
		owners, err := s.d.Store.ChatOwners(ctx, p)
		switch {
		case err != nil:
			out = append(out, Check{Name: name, Detail: err.Error()})
		case len(owners) == 0:
			out = append(out, Check{Name: name, Detail: detail + "; no owner paired: run `homard pair " + p + "`"}) // lang:en
		default:
			out = append(out, Check{Name: name, OK: true, Detail: fmt.Sprintf("%s; %d owner(s) paired", detail, len(owners))}) // lang:en
		}
	}
	return out
}
