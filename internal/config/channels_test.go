package config

import (
	"reflect"
	"strings"
	"testing"
)

// channels is what Load makes of a file with the given tables: every
// platform present, those not given off.
func channels(kv ...any) Channels {
	c := Channels{}
	for i := 0; i < len(kv); i += 2 {
		ch := kv[i+1].(Channel)
		c[kv[i].(string)] = &ch
	}
	c.ByName()
	return c
}

func TestLoadChannels(t *testing.T) {
	tests := []struct {
		name, add string
		want      Channels
	}{
		{"none", "", channels()},
		{"telegram", "[channels.telegram]\nenabled = true\ntoken_secret = \"tg\"\napi_base = \"http://127.0.0.1:8081\"\ngroups = [\"-100123\"]\n",
			channels("telegram", Channel{Enabled: true, TokenSecret: "tg", APIBase: "http://127.0.0.1:8081", Groups: ChatIDs{"-100123"}})},
		{"telegram integer group ids", "[channels.telegram]\ngroups = [-1001234567890, \"-100123\", 42]\n",
			channels("telegram", Channel{Groups: ChatIDs{"-1001234567890", "-100123", "42"}})},
		{"no groups", "[channels.telegram]\ngroups = []\n", channels("telegram", Channel{Groups: ChatIDs{}})},
		{"feishu", "[channels.feishu]\nenabled = true\napp_id = \"cli_abc\"\ntoken_secret = \"fs\"\n",
			channels("feishu", Channel{Enabled: true, AppID: "cli_abc", TokenSecret: "fs"})},
		{"feishu callback", "[channels.feishu]\nenabled = true\napp_id = \"cli_abc\"\ntoken_secret = \"fs\"\nmode = \"callback\"\nencrypt_key_secret = \"fs-encrypt\"\n",
			channels("feishu", Channel{Enabled: true, AppID: "cli_abc", TokenSecret: "fs", Mode: ModeCallback, EncryptKeySecret: "fs-encrypt"})},
		{"feishu long", "[channels.feishu]\nmode = \"long\"\n", channels("feishu", Channel{Mode: ModeLong})},
		{"private base allowed", "[channels.discord]\ntoken_secret = \"dc\"\napi_base = \"http://10.0.0.2/api\"\n",
			channels("discord", Channel{TokenSecret: "dc", APIBase: "http://10.0.0.2/api"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, baseConfig+tt.add))
			if err != nil {
				t.Fatalf("Load with %q: %v", tt.add, err)
			}
			if !reflect.DeepEqual(c.Channels, tt.want) {
				t.Errorf("Load with %q: channels = %+v; want %+v", tt.add, c.Channels, tt.want)
			}
		})
	}
}

func TestLoadChannelsBad(t *testing.T) {
	tests := []struct {
		name, add string
		want      string
		secret    string // must not appear in the error
	}{
		{"enabled without token", "[channels.telegram]\nenabled = true\n", "channels.telegram.token_secret is missing", ""},
		{"token itself", "[channels.telegram]\ntoken_secret = \"123456:ABC-DEF1234ghIkl\"\n", "channels.telegram.token_secret: want the name of a vault secret", "123456:ABC"},
		{"token key", "[channels.telegram]\ntoken = \"x\"\n", "unknown key channels.telegram.token", ""},
		{"feishu without app id", "[channels.feishu]\nenabled = true\ntoken_secret = \"fs\"\n", "channels.feishu.app_id is missing", ""},
		{"app id elsewhere", "[channels.discord]\napp_id = \"x\"\n", "channels.discord.app_id: Discord bots have no app id", ""},
		{"base scheme", "[channels.telegram]\napi_base = \"ftp://h\"\n", "channels.telegram.api_base: want an absolute http or https URL", ""},
		{"base credentials", "[channels.telegram]\napi_base = \"https://u:hunter22@h\"\n", "credentials do not belong in the URL", "hunter22"},
		{"base with bot path", "[channels.telegram]\napi_base = \"https://api.telegram.org/bot123:abc\"\n", "without a query, fragment or /bot<token> path", ""},
		{"group id", "[channels.telegram]\ngroups = [\"a b\"]\n", `channels.telegram.groups[0] = "a b": want a chat id`, ""},
		{"group float", "[channels.telegram]\ngroups = [1.5]\n", `groups[0] = 1.5: want a chat id, a string or an integer`, ""},
		{"groups not a list", "[channels.telegram]\ngroups = -100123\n", `groups: want a list of chat ids such as [-1001234567890`, ""},
		{"group twice as integer and string", "[channels.telegram]\ngroups = [-1, \"-1\"]\n", `channels.telegram.groups[1] = "-1": listed twice`, ""},
		{"group twice", "[channels.telegram]\ngroups = [\"-1\", \"-1\"]\n", `channels.telegram.groups[1] = "-1": listed twice`, ""},
		{"mode elsewhere", "[channels.telegram]\nmode = \"callback\"\n", "channels.telegram: mode and encrypt_key_secret are for platforms that call back (Feishu / Lark)", ""},
		{"mode unknown", "[channels.feishu]\nmode = \"webhook\"\n", `channels.feishu.mode = "webhook": want "long"`, ""},
		{"callback without key", "[channels.feishu]\nmode = \"callback\"\n", "channels.feishu.encrypt_key_secret is missing", ""},
		{"encrypt key itself", "[channels.feishu]\nmode = \"callback\"\nencrypt_key_secret = \"Kx9/+secret\"\n", "encrypt_key_secret: want the name of a vault secret", "Kx9/+secret"},
		{"unknown platform", "[channels.slack]\nenabled = true\n", `channels.slack: homard has no "slack" chat platform; want telegram, discord or feishu`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, baseConfig+tt.add))
			if err == nil {
				t.Fatalf("Load with %q = %+v; want an error", tt.add, c.Channels)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load with %q: error\n%v\ndoes not contain\n%s", tt.add, err, tt.want)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("Load with %q: error %q leaks %q", tt.add, err, tt.secret)
			}
		})
	}
}

func TestChannelBase(t *testing.T) {
	tests := []struct {
		ch       Channel
		platform string
		want     string
	}{
		{Channel{}, "telegram", "https://api.telegram.org"},
		{Channel{}, "discord", "https://discord.com/api/v10"},
		{Channel{}, "feishu", "https://open.feishu.cn"},
		{Channel{APIBase: "http://127.0.0.1:9/"}, "telegram", "http://127.0.0.1:9"},
	}
	for _, tt := range tests {
		if got := tt.ch.Base(tt.platform); got != tt.want {
			t.Errorf("%+v.Base(%q) = %q; want %q", tt.ch, tt.platform, got, tt.want)
		}
	}
}
