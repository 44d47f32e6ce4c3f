// Package platforms is the one table of the chat platforms homard has an
// adapter for: each row names the platform, its public API and its
// callback route, and builds its adapter. config reads the table to
// validate [channels.NAME]; everything else that lists platforms derives
// from config's view of it.
//
// Adding a platform: write its adapter package (internal/channel/NAME,
// implementing chat.Adapter), add its row here, and document its setup in
// docs/CHANNELS.md (a test holds the docs to the table). Nothing else
// changes; see docs/ARCHITECTURE.md, "Adding a chat platform".
package platforms

import (
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/discord"
	"github.com/homard/homard/internal/channel/feishu"
	"github.com/homard/homard/internal/channel/telegram"
)

// All returns the platforms, in the order homard lists them.
func All() []chat.Platform {
	return []chat.Platform{
		{Name: chat.Telegram, Title: "Telegram", DefaultBase: "https://api.telegram.org",
			New: func(s chat.Settings) (chat.Adapter, error) {
				return telegram.New(telegram.Options{Token: s.Token, APIBase: s.APIBase, Logger: s.Log}), nil
			}},
		{Name: chat.Discord, Title: "Discord", DefaultBase: "https://discord.com/api/v10",
			New: func(s chat.Settings) (chat.Adapter, error) {
				return discord.New(discord.Options{Token: s.Token, APIBase: s.APIBase, Log: s.Log})
			}},
		{Name: chat.Feishu, Title: "Feishu / Lark", DefaultBase: "https://open.feishu.cn",
			AppID: true, Callback: true, CallbackPath: "/callbacks/feishu",
			// Feishu authenticates with the app id and the app secret (the
			// token); in callback mode it signs its requests with the
			// Encrypt Key.
			New: func(s chat.Settings) (chat.Adapter, error) {
				return feishu.New(feishu.Options{AppID: s.AppID, AppSecret: s.Token, APIBase: s.APIBase,
					Callback: s.Callback, EncryptKey: s.EncryptKey}), nil
			}},
	}
}
