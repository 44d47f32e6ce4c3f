package chats

import (
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
)

// TestChatLanguage: a chat speaks the language code its person's
// platform gave (one homard does not speak is English), and with none
// the config's lang, where "auto" is English: the server's environment
// is not the chat person's.
func TestChatLanguage(t *testing.T) {
	cases := []struct {
		setting, code string
		want          lang.Tag
	}{
		{"auto", "zh-hans", lang.ZH},
		{"en", "zh-hans", lang.ZH},
		{"zh", "en", lang.EN},
		{"zh", "fr", lang.EN},
		{"zh", "", lang.ZH},
		{"en", "", lang.EN},
		{"auto", "", lang.EN},
	}
	for _, c := range cases {
		t.Setenv("LANG", "zh_CN.UTF-8") // never read for a chat
		s := New(Deps{Config: &config.Config{Lang: c.setting}})
		if got := s.tagOf(c.code); got != c.want {
			t.Errorf("lang = %q, chat code %q: %s; want %s", c.setting, c.code, got, c.want)
		}
	}
}
