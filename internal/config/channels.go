package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/platforms"
)

// Platform is one chat platform homard has an adapter for.
type Platform = chat.Platform

// Platforms are the chat platforms, in the order homard lists them: the
// one platform table (internal/channel/platforms), which also builds each
// one's adapter. Config validation, `homard pair`, `channel list`,
// `--deliver`, `secret set --channel` and docs/CHANNELS.md derive from it.
var Platforms = platforms.All()

// PlatformNames lists the platforms' names, in order.
func PlatformNames() []string {
	out := make([]string, len(Platforms))
	for i, p := range Platforms {
		out[i] = p.Name
	}
	return out
}

// PlatformOf returns the platform named name.
func PlatformOf(name string) (Platform, bool) {
	for _, p := range Platforms {
		if p.Name == name {
			return p, true
		}
	}
	return Platform{}, false
}

// PlatformList is the platforms' names for a message: "telegram, discord
// or feishu".
func PlatformList(or string) string {
	names := PlatformNames()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + or + " " + names[len(names)-1]
}

// Channels configures the chat channels `homard serve` runs beside the web
// UI (docs/CHANNELS.md): one [channels.NAME] table per platform of
// Platforms, each of the same shape; a missing table is a channel that is
// off. After Load every platform has an entry.
type Channels map[string]*Channel

// Channel is one chat platform's bot. Its token lives in the vault only,
// tagged for the channel (`homard secret set NAME --channel PLATFORM`), never
// in this file or the environment; owners are database rows made by
// `homard pair`, not lines here.
type Channel struct {
	// Enabled runs the channel in `homard serve`. Missing means false.
	Enabled bool `toml:"enabled"`
	// TokenSecret names the vault secret holding the bot token (Feishu:
	// the app secret). Required when Enabled.
	TokenSecret string `toml:"token_secret"`
	// AppID is Feishu's app id (not secret). Required for an enabled
	// Feishu channel; other platforms must leave it empty.
	AppID string `toml:"app_id"`
	// APIBase is the platform's API base URL: operator configuration, so
	// a loopback or private address is allowed (a self-hosted Bot API
	// server, a test fake). Missing or empty means the platform's public
	// API (DefaultAPIBase; see Base).
	APIBase string `toml:"api_base"`
	// Groups lists the group chat (or guild channel) ids where the bot
	// answers explicit mentions as a guest, as strings or integers
	// (Telegram's chat ids are integers: -1001234567890). Missing or []
	// means none: `homard channel allow` adds more at run time.
	Groups ChatIDs `toml:"groups"`
	// Mode is how Feishu delivers events: "long" (the long connection
	// homard opens; no public address needed) or "callback" (Feishu POSTs
	// to /callbacks/feishu on the gateway, which must then be served with
	// --allow-remote and TLS or --behind-proxy). Missing or empty means
	// "long". Feishu only.
	Mode string `toml:"mode"`
	// EncryptKeySecret names the vault secret holding Feishu's Encrypt
	// Key (stored with `homard secret set NAME --channel feishu`), which
	// signs and encrypts callbacks. Required when Mode is "callback";
	// Feishu only.
	EncryptKeySecret string `toml:"encrypt_key_secret"`
	// Send lets the model send messages on this platform with the
	// send_message tool: to the owner's own chats as the mode allows, to
	// anyone else only after the owner approves that first message
	// (recipient.new). Missing or false: no such tool, and homard writes
	// only to chats that wrote to it.
	Send bool `toml:"send"`
}

// ChatIDs are chat ids as strings. In TOML each may be a string or an
// integer: Telegram's API and its docs give chat ids as integers, and an
// owner copies them as they are.
type ChatIDs []string

// UnmarshalTOML accepts an array of strings and integers.
func (c *ChatIDs) UnmarshalTOML(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("groups: want a list of chat ids such as [-1001234567890, \"oc_a1b2\"]; got %v", v)
	}
	ids := make(ChatIDs, 0, len(list))
	for i, e := range list {
		switch e := e.(type) {
		case string:
			ids = append(ids, e)
		case int64:
			ids = append(ids, strconv.FormatInt(e, 10))
		default:
			return fmt.Errorf("groups[%d] = %v: want a chat id, a string or an integer such as -1001234567890", i, e)
		}
	}
	*c = ids
	return nil
}

// Feishu event delivery modes (Channel.Mode).
const (
	ModeLong     = "long"
	ModeCallback = "callback"
)

// Callback reports whether the channel receives through HTTP callbacks.
func (ch Channel) Callback() bool { return ch.Mode == ModeCallback }

// ByName returns the configuration of each platform, by name, with an
// entry (off) for every platform the file leaves out.
func (c *Channels) ByName() map[string]*Channel {
	if *c == nil {
		*c = Channels{}
	}
	for _, p := range Platforms {
		if (*c)[p.Name] == nil {
			(*c)[p.Name] = &Channel{}
		}
	}
	return *c
}

// Of returns platform's configuration (off when the file has none).
func (c *Channels) Of(platform string) *Channel { return c.ByName()[platform] }

// chatIDRE is what a chat or channel id looks like on every platform:
// Telegram's signed integers, Discord's snowflakes, Feishu's oc_… ids.
var chatIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?[A-Za-z0-9_]{1,64}$`) })

// Base returns the API base of the channel named platform: api_base, or
// the platform's public API when it is empty.
func (ch Channel) Base(platform string) string {
	if ch.APIBase != "" {
		return strings.TrimRight(ch.APIBase, "/")
	}
	p, _ := PlatformOf(platform)
	return p.DefaultBase
}

func validateChannels(c *Channels, ps *problems) {
	names := make([]string, 0, len(*c))
	for name := range *c {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := PlatformOf(name); !ok {
			ps.add("channels.%s: homard has no %q chat platform; want %s", name, name, PlatformList("or"))
		}
	}
	for _, p := range Platforms {
		name, ch := p.Name, c.Of(p.Name)
		key := "channels." + name
		if ch.TokenSecret != "" && !secretNameRE().MatchString(ch.TokenSecret) {
			ps.add("%s.token_secret: want the name of a vault secret (a-z, 0-9, _ and -), not the token itself; store it with `homard secret set %s --channel %s`", key, name, name)
		}
		if ch.Enabled && ch.TokenSecret == "" {
			ps.add("%s.token_secret is missing: name the vault secret holding the bot token, stored with `homard secret set %s --channel %s`", key, name, name)
		}
		switch {
		case p.AppID && ch.Enabled && ch.AppID == "":
			ps.add("%s.app_id is missing: copy the app id (cli_…) from the %s developer console", key, p.Title)
		case !p.AppID && ch.AppID != "":
			ps.add("%s.app_id: %s bots have no app id; remove it", key, p.Title)
		}
		switch {
		case !p.Callback && (ch.Mode != "" || ch.EncryptKeySecret != ""):
			ps.add("%s: mode and encrypt_key_secret are for platforms that call back (%s); remove them", key, callbackNames())
		case ch.Mode != "" && ch.Mode != ModeLong && ch.Mode != ModeCallback:
			ps.add("%s.mode = %q: want \"long\" (the default: homard connects out) or \"callback\" (%s POSTs to %s)", key, ch.Mode, p.Title, p.CallbackPath)
		case ch.EncryptKeySecret != "" && !secretNameRE().MatchString(ch.EncryptKeySecret):
			ps.add("%s.encrypt_key_secret: want the name of a vault secret (a-z, 0-9, _ and -), not the key itself; store it with `homard secret set %s-encrypt --channel %s`", key, name, name)
		case ch.Callback() && ch.EncryptKeySecret == "":
			ps.add("%s.encrypt_key_secret is missing: callback mode needs the app's Encrypt Key (events and callbacks settings) in the vault: `homard secret set %s-encrypt --channel %s`, then encrypt_key_secret = \"%s-encrypt\"", key, name, name, name)
		}
		if ch.AppID != "" && !chatIDRE().MatchString(ch.AppID) {
			ps.add("%s.app_id = %q: want the app id as the console shows it (letters, digits and _)", key, ch.AppID)
		}
		if ch.APIBase != "" {
			validateChannelBase(key, ch.APIBase, ps)
		}
		seen := map[string]bool{}
		for i, g := range ch.Groups {
			switch {
			case !chatIDRE().MatchString(g):
				ps.add("%s.groups[%d] = %q: want a chat id such as \"-1001234567890\" (`homard channel list` shows the ids the bot was added to)", key, i, g)
			case seen[g]:
				ps.add("%s.groups[%d] = %q: listed twice", key, i, g)
			}
			seen[g] = true
		}
	}
}

// validateChannelBase checks api_base: an absolute http(s) URL without
// credentials, query or fragment. A loopback or private host is allowed:
// this is the operator's choice, not a model's.
func validateChannelBase(key, s string, ps *problems) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		ps.add("%s.api_base: want an absolute http or https URL such as %q", key, "https://api.telegram.org")
		return
	}
	if u.User != nil {
		ps.add("%s.api_base = %q: credentials do not belong in the URL; the token lives in the vault", key, u.Redacted())
		return
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Path, "/bot") {
		ps.add("%s.api_base = %q: want the base URL only, without a query, fragment or /bot<token> path", key, s)
	}
}

// renderChannels writes each channel that differs from its defaults as a
// [channels.<platform>] table (docs/CHANNELS.md explains them).
func renderChannels(w func(string, ...any), c *Channels) {
	for _, p := range Platforms {
		name, ch := p.Name, c.Of(p.Name)
		if !ch.Enabled && ch.TokenSecret == "" && ch.AppID == "" && ch.APIBase == "" && ch.Groups == nil && ch.Mode == "" && ch.EncryptKeySecret == "" && !ch.Send {
			continue
		}
		w("\n# A chat channel (docs/CHANNELS.md); the token is the vault secret named here.\n[channels.%s]\nenabled = %t\ntoken_secret = %s\n", name, ch.Enabled, quote(ch.TokenSecret))
		optionalKey(w, "app_id", ch.AppID)
		optionalKey(w, "api_base", ch.APIBase)
		if ch.Groups != nil {
			w("groups = %s\n", quoteList(ch.Groups))
		}
		optionalKey(w, "mode", ch.Mode)
		optionalKey(w, "encrypt_key_secret", ch.EncryptKeySecret)
		if ch.Send {
			w("# The model may send messages here (send_message); a new recipient always asks.\nsend = true\n")
		}
	}
}

// callbackNames names the platforms that may call back.
func callbackNames() string {
	var out []string
	for _, p := range Platforms {
		if p.Callback {
			out = append(out, p.Title)
		}
	}
	return strings.Join(out, ", ")
}
