package chats

import (
	"fmt"
	"net/http"

	"github.com/homard/homard/internal/channel/chat"
)

// FeishuCallbackPath is where `homard serve` takes Feishu's HTTP
// callbacks in callback mode (channels.feishu.mode = "callback").
const FeishuCallbackPath = "/callbacks/feishu"

// Exposure is how `homard serve` is reached: beyond loopback
// (--allow-remote), over its own TLS (--tls-cert), or behind a TLS proxy
// (--behind-proxy).
type Exposure struct {
	AllowRemote, TLS, BehindProxy bool
}

// Callbacks returns the HTTP callbacks the enabled channels need (Feishu
// in callback mode), by path, for the gateway. It refuses callback mode
// unless serve is exposed the only way Feishu may reach it: beyond
// loopback and over TLS, its own or a proxy's.
func (s *Service) Callbacks(adapters []chat.Adapter, e Exposure) (map[string]http.Handler, error) {
	fs := *s.d.Config.Channels.Of(chat.Feishu)
	if !fs.Enabled || !fs.Callback() {
		return nil, nil
	}
	if !e.AllowRemote || (!e.TLS && !e.BehindProxy) {
		return nil, fmt.Errorf("%w: channels.feishu.mode = \"callback\" needs Feishu to reach this server over HTTPS at %s: "+
			"run `homard serve --allow-remote` with --tls-cert and --tls-key, or with --behind-proxy --public-origin https://HOST behind a TLS proxy; "+
			"or set mode = \"long\" (the default), which needs no public address", s.d.BadRequest, FeishuCallbackPath)
	}
	for _, a := range adapters {
		if a.Platform() != chat.Feishu {
			continue
		}
		h, ok := a.(http.Handler)
		if !ok {
			return nil, fmt.Errorf("channel feishu: callback mode: this adapter takes no HTTP callbacks")
		}
		return map[string]http.Handler{FeishuCallbackPath: h}, nil
	}
	return nil, nil
}
