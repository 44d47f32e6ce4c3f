package chat

import "log/slog"

// Platform is one chat platform homard has an adapter for: a row of the
// one platform table (internal/channel/platforms), from which config
// validation, `homard pair`, `channel list`, `--deliver`, `secret set
// --channel`, the gateway's callback routes and docs/CHANNELS.md derive.
type Platform struct {
	// Name is the platform's key: [channels.NAME], `homard pair NAME`,
	// `--deliver NAME`, the Adapter's Platform().
	Name string
	// Title is how people write it.
	Title string
	// DefaultBase is its public API's base URL (api_base's default).
	DefaultBase string
	// AppID: the bot is an app with an id besides its secret (Feishu's
	// app_id); other platforms must leave app_id empty.
	AppID bool
	// Callback: it may deliver events through HTTP callbacks on the
	// gateway (mode = "callback", encrypt_key_secret) instead of the
	// connection homard opens; CallbackPath is where.
	Callback     bool
	CallbackPath string
	// New builds the platform's adapter.
	New func(Settings) (Adapter, error)
}

// Settings are what an adapter is built from: its channel's section of
// the configuration and its secrets from the vault.
type Settings struct {
	// APIBase is the platform's API base URL: api_base, or DefaultBase.
	APIBase string
	// AppID is the app's id, on a platform with one.
	AppID string
	// Callback: events arrive through the gateway's callback route.
	Callback bool
	// Token is the bot token (Feishu: the app secret).
	Token string
	// EncryptKey is Feishu's Encrypt Key, in callback mode only.
	EncryptKey string
	// Log receives the adapter's log lines.
	Log *slog.Logger
}
