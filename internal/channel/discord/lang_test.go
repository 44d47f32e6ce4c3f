package discord

import (
	"encoding/json"
	"testing"
)

// TestInteractionLocale: a button press carries the presser's client
// language (interaction locale) as Inbound.Lang; a press without one
// carries none.
func TestInteractionLocale(t *testing.T) {
	for raw, want := range map[string]string{
		`{"id":"900","type":3,"token":"t","channel_id":"7","locale":"zh-CN","user":{"id":"42"},"message":{"id":"5"},"data":{"custom_id":"x"}}`: "zh-CN",
		`{"id":"900","type":3,"token":"t","channel_id":"7","user":{"id":"42"},"message":{"id":"5"},"data":{"custom_id":"x"}}`:                  "",
	} {
		in, err := decodeInteraction(json.RawMessage(raw), bot)
		if err != nil || in.Lang != want {
			t.Errorf("decodeInteraction(%s).Lang = %q, %v; want %q", raw, in.Lang, err, want)
		}
	}
}
