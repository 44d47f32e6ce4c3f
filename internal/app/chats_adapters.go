package app

import (
	"log/slog"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/discord"
	"github.com/homard/homard/internal/channel/feishu"
	"github.com/homard/homard/internal/channel/telegram"
	"github.com/homard/homard/internal/config"
)

// The adapters built into homard, one per platform.
func init() {
	adapterConstructors[chat.Telegram] = func(cfg config.Channel, s adapterSecrets) (chat.Adapter, error) {
		return telegram.New(telegram.Options{Token: s.Token, APIBase: cfg.Base(chat.Telegram), Logger: slog.Default()}), nil
	}
	adapterConstructors[chat.Discord] = func(cfg config.Channel, s adapterSecrets) (chat.Adapter, error) {
		return discord.New(discord.Options{Token: s.Token, APIBase: cfg.Base(chat.Discord), Log: slog.Default()})
	}
	adapterConstructors[chat.Feishu] = func(cfg config.Channel, s adapterSecrets) (chat.Adapter, error) {
		// Feishu authenticates with the app id (config) and app secret
		// (the vault secret token_secret names); in callback mode Feishu
		// signs its requests with the Encrypt Key (encrypt_key_secret).
		return feishu.New(feishu.Options{AppID: cfg.AppID, AppSecret: s.Token, APIBase: cfg.Base(chat.Feishu),
			Callback: cfg.Callback(), EncryptKey: s.EncryptKey}), nil
	}
}
