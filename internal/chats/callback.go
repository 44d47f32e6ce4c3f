package chats

import (
	"fmt"
	"net/http"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/config"
)

// Exposure is how `homard serve` is reached: beyond loopback
// (--allow-remote), over its own TLS (--tls-cert), or behind a TLS proxy
// (--behind-proxy).
type Exposure struct {
	AllowRemote, TLS, BehindProxy bool
}

// Callbacks returns the HTTP callbacks the enabled channels need (a
// platform of the table that calls back, in callback mode), by path, for
// the gateway. It refuses callback mode unless serve is exposed the only
// way the platform may reach it: beyond loopback and over TLS, its own or
// a proxy's.
func (s *Service) Callbacks(adapters []chat.Adapter, e Exposure) (map[string]http.Handler, error) {
	out := map[string]http.Handler{}
	for _, p := range config.Platforms {
		ch := s.d.Config.Channels.Of(p.Name)
		if !p.Callback || !ch.Enabled || !ch.Callback() {
			continue
		}
		if !e.AllowRemote || (!e.TLS && !e.BehindProxy) {
			return nil, fmt.Errorf("%w: channels.%s.mode = \"callback\" needs %s to reach this server over HTTPS at %s: "+ // lang:en
				"run `homard serve --allow-remote` with --tls-cert and --tls-key, or with --behind-proxy --public-origin https://HOST behind a TLS proxy; "+ // lang:en
				"or set mode = \"long\" (the default), which needs no public address", s.d.BadRequest, p.Name, p.Title, p.CallbackPath) // lang:en
		}
		for _, a := range adapters {
			if a.Platform() != p.Name {
				continue
			}
			h, ok := a.(http.Handler)
			if !ok {
				return nil, fmt.Errorf("channel %s: callback mode: this adapter takes no HTTP callbacks", p.Name) // lang:en
			}
			out[p.CallbackPath] = h
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
